"""The answer stage of a stream: the model's turns, streamed, with the search tool.

:class:`Answerer` is a part the :class:`~agent_search.agent.assistant.Assistant` holds
(the assistant owns the order of the stages; this part knows the model): the LLM client
for a call, the offline answer when there is none or it fails, the tool calls of each
turn, run concurrently in the stream's context; then the answer's grounding and the
``next`` hook that sees it. It keeps the connectors' clients, one per connector, for the
assistant's life.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio

from agent_search.agent._conversation import to_llm_messages
from agent_search.agent._grounding import ground_answer
from agent_search.agent._hook_api import HookContext
from agent_search.agent._hooks import Hooks, hook_error
from agent_search.agent._stages import Answer, Question, TextOut, stage, stage_warnings
from agent_search.agent._tools import (
    MAX_TOOL_ROUNDS,
    SEARCH_TOOL,
    assistant_tool_message,
    run_tool_call,
    search_tool_spec,
)
from agent_search.agent.llm import (
    ChatClient,
    LLMError,
    OpenAIChatClient,
    completion_text,
    stream_offline_answer,
)
from agent_search.agent.llm.base import ChatEvent, ToolCall
from agent_search.agent.options import Options
from agent_search.agent.package import AssistantPackage
from agent_search.agent.records import STAGE
from agent_search.agent.settings import OFFLINE, AgentSettings
from agent_search.context import Context
from agent_search.grounding import candidates, verify
from agent_search.searcher import Searcher
from agent_search.trace import TraceNode
from agent_search.types import ResultItem


class Answerer:
    """The model's part of a stream (see the module docstring)."""

    def __init__(self, package: AssistantPackage, settings: AgentSettings,
                 searcher: Searcher, hooks: Hooks) -> None:
        self.package = package
        self.settings = settings
        self.searcher = searcher
        self.hooks = hooks
        self._clients: dict[str, OpenAIChatClient] = {}

    @property
    def tools(self) -> frozenset[str]:
        """The tools the model may be offered, of those ``package.yao`` lists in
        ``tools``: the ``search`` tool, the one this runtime runs itself."""
        return frozenset({SEARCH_TOOL} & set(self.package.tools))

    def tool_types(self) -> list[str]:
        """Search types offered to the model through the ``search`` tool (none unless
        package.yao lists "search" in ``tools``)."""
        if SEARCH_TOOL not in self.tools:
            return []
        return self.searcher.registry.searchable_types

    def chat_client(self, options: Options) -> tuple[ChatClient | None, str]:
        """The client for this call, or None and why we are offline."""
        name = options.connector or self.package.connector or self.settings.default_connector
        if not name or name == OFFLINE:
            return None, "no language model connector is configured"
        connector = self.settings.connectors.get(name)
        if connector is None:
            return None, f"connector {name!r} is not defined in config/agent.yml"
        missing = connector.missing_key()
        if missing:
            return None, f"connector {name!r} needs {missing}, which is not set"
        client = self._clients.get(name)
        if client is None:
            client = OpenAIChatClient(name, connector)
            self._clients[name] = client
        return client, ""

    async def aclose(self) -> None:
        """Close the connectors' clients (best effort)."""
        for client in self._clients.values():
            with contextlib.suppress(Exception):
                await client.aclose()

    async def answer(self, ctx: Context, options: Options, question: Question,
                     out: TextOut) -> Answer:
        """Stream the answer to ``out``; the references it had and the model's failure.

        With the ``search`` tool on, the model may call it (up to MAX_TOOL_ROUNDS rounds);
        found items join the references and the citations the tracker knows."""
        found = question.found
        references = list(found.references)
        fmt = ctx.config.citation.format

        async def offline(reason: str) -> None:
            async for piece in stream_offline_answer(question.query, references,
                                                     reason=reason, fmt=fmt,
                                                     searched=found.searched,
                                                     failed=found.failed,
                                                     counts=found.counts):
                out.write(piece)

        with stage(ctx, "llm") as node:
            client, reason = self.chat_client(options)
            if client is None:
                await offline(reason)
                return Answer(references, None)
            try:
                await self._chat(ctx, client, question, out, references, node)
            except LLMError as exc:
                if not out.written:  # nothing said yet: answer offline rather than not at all
                    await offline(f"the language model failed: {exc}")
                return Answer(references, f"llm: {exc}")
        return Answer(references, None)

    async def _chat(self, ctx: Context, client: ChatClient, question: Question,
                    out: TextOut, references: list[ResultItem], node: TraceNode) -> None:
        """The model's turns: text to ``out``; tool calls run, their items added to
        ``references``, until the model answers without calling a tool. Warnings and the
        tool calls go on the stage's trace ``node`` for the record."""
        warnings = stage_warnings(node)
        tool_calls: list[dict[str, Any]] = node.attributes.setdefault("tool_calls", [])
        tool_types = self.tool_types()
        messages = to_llm_messages(question.messages)
        for round_ in range(MAX_TOOL_ROUNDS + 1):
            offer = [search_tool_spec(tool_types)] \
                if tool_types and round_ < MAX_TOOL_ROUNDS else None
            said, calls = await _turn(client.stream_chat(messages, tools=offer), out, warnings)
            if not calls or not offer:
                return
            messages.append(assistant_tool_message(said, calls))
            answers = await self._run_tool_calls(calls, ctx, tool_types)
            for call, (reply, items) in zip(calls, answers, strict=True):
                tool_calls.append({"type": "tool", "call": call.name,
                                   "arguments": call.arguments, "count": len(items)})
                messages.append(reply)
                references.extend(items)
                out.tracker.known.update(i.citation_id for i in items if i.citation_id)

    async def _run_tool_calls(self, calls: Sequence[ToolCall], ctx: Context,
                              tool_types: list[str]
                              ) -> list[tuple[dict[str, Any], list[ResultItem]]]:
        """Run the tool calls of one model turn concurrently; answers in call order.
        They share the stream's context, so their items get request-unique citation ids."""
        answers: list[tuple[dict[str, Any], list[ResultItem]] | None] = [None] * len(calls)

        async def run(i: int, call: ToolCall) -> None:
            answers[i] = await run_tool_call(call, searcher=self.searcher, ctx=ctx,
                                             allowed_types=tool_types)

        async with anyio.create_task_group() as tg:
            for i, call in enumerate(calls):
                tg.start_soon(run, i, call)
        return [a for a in answers if a is not None]

    async def ground_and_next(self, hctx: HookContext, out: TextOut,
                              references: list[ResultItem], counts: dict[str, int],
                              payload: dict[str, Any]
                              ) -> tuple[list[dict[str, Any]], str | None]:
        """Ground the answer, then run ``next`` with it (``payload`` plus the text, the
        references, the citations and the grounding); text the hook adds is written
        and the answer grounded again (``counts``: see :class:`Found`). Returns the
        grounding and the stream's error."""
        ctx, error = hctx.context, payload["error"]
        grounding = await self._grounded(ctx, out.tracker.text, references, counts)
        if self.hooks.next is None:
            return grounding, error
        tracker = out.tracker
        payload |= {"text": tracker.text,
                    "references": [i.model_dump(mode="json") for i in references],
                    "citations": {"used": list(tracker.used), "unknown": list(tracker.unknown)},
                    "grounding": grounding}
        with stage(ctx, "next_hook"):
            try:
                extra = await self.hooks.next(hctx, payload)
            except Exception as exc:
                return grounding, error or hook_error(exc, self.hooks, "next")
        if isinstance(extra, dict) and isinstance(extra.get("text"), str):
            out.write(str(extra["text"]))
            out.flush()
            grounding = await self._grounded(ctx, out.tracker.text, references, counts)
        return grounding, error

    async def _grounded(self, ctx: Context, text: str, references: list[ResultItem],
                        counts: dict[str, int]) -> list[dict[str, Any]]:
        """The offline grounding, then the verifier's word on what it could not settle
        (``grounding.verifier`` in agent.yml; none by default)."""
        grounding = await ground_answer(ctx, text, references, counts)
        settings = self.settings.grounding
        if not settings.verifier or not candidates(grounding, settings.sentences):
            return grounding
        client, why = self.chat_client(Options(connector=settings.verifier))
        node = ctx.trace.child("grounding_verifier", **{STAGE: True})
        try:
            if client is None:
                node.attributes.setdefault("warnings", []).append(
                    f"grounding verifier not used: {why}")
                return grounding
            passages = {i.citation_id: i.content or "" for i in references if i.citation_id}
            verified, warnings = await verify(
                grounding, passages, functools.partial(completion_text, client),
                name=settings.verifier, timeout=settings.timeout, limit=settings.sentences)
            node.attributes.setdefault("warnings", []).extend(warnings)
            return verified
        finally:
            node.finish()


async def _turn(events: AsyncIterator[ChatEvent], out: TextOut, warnings: list[str]
                ) -> tuple[str, list[ToolCall]]:
    """One model turn read to its end: its text written to ``out`` as it comes (and
    returned whole, for the conversation), its warnings noted, its tool calls."""
    said: list[str] = []
    calls: list[ToolCall] = []
    async for ev in events:
        if ev.kind == "text":
            said.append(ev.text)
            out.write(ev.text)
        elif ev.kind == "tool_calls":
            calls = ev.tool_calls
        elif ev.kind == "warning":
            warnings.append(ev.text)
    return "".join(said), calls
