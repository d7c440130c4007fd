"""An assistant and its ``stream()`` loop: hooks, user data, auto search, citations, LLM.

``stream(messages, options)`` follows the order of the spec:

1. initialize one :class:`~agent_search.context.Context` (citation ids unique across
   everything below);
2. ``create`` hook (its ``ctx.search.*`` searches have source ``hook``);
3. user data sources (``type: "data"`` content parts, source ``user``);
4. the auto-search decision (:mod:`agent_search.agent.decision`);
5. auto search of the configured types in parallel (source ``auto``);
6. merge, dedupe, weights, rerank (``Searcher.merge`` with ``uses.rerank``);
7. one system message with the citation prompt and the fenced references, after the
   leading system messages; when searches ran and none left a reference, a message saying
   that no reference was found instead (the model is not told to cite);
8. the LLM call, streamed (or the offline responder), citation markers tracked;
9. ``next`` hook;
10. ``citations`` and ``done`` events; the search record is stored.

Search progress events are emitted by the searcher into the context's sink while the
pipeline runs in a task; ``stream()`` yields them as they come, so the caller sees
``search_start`` / ``search_result`` / ``search_complete`` live, then ``text`` deltas,
``citations`` and ``done``.

Stopping early: ``break`` out of the loop, or ``await stream.aclose()``; either
cancels the searches and the LLM call in flight (see :class:`AgentStream`). The pipeline
runs as an asyncio task, so ``stream()`` needs the asyncio backend.
"""

from __future__ import annotations

import contextlib
import copy
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from agent_search.agent.citations import CitationTracker
from agent_search.agent.conversation import (
    Message,
    conversation_query,
    insert_after_system,
    to_llm_messages,
    validate_messages,
)
from agent_search.agent.datasources import DataScope, Refusal, data_source_requests
from agent_search.agent.decision import Decision, decide_auto_search
from agent_search.agent.delegation import Delegates
from agent_search.agent.hook_api import HookContext
from agent_search.agent.hooks import HookResponse, Hooks, hook_error, load_hooks
from agent_search.agent.llm import ChatClient, LLMError, OpenAIChatClient, stream_offline_answer
from agent_search.agent.llm.base import ToolCall
from agent_search.agent.options import Options
from agent_search.agent.package import AssistantPackage, load_package
from agent_search.agent.records import RecordStore, SearchRecord
from agent_search.agent.requests import build_request
from agent_search.agent.resources import McpResourceHandler
from agent_search.agent.settings import AgentSettings
from agent_search.agent.stream import AgentStream, SendSink
from agent_search.agent.tools import (
    MAX_TOOL_ROUNDS,
    SEARCH_TOOL,
    assistant_tool_message,
    run_tool_call,
    search_tool_spec,
)
from agent_search.citation import build_prompt, no_reference_prompt
from agent_search.config import SearchConfig
from agent_search.context import Context
from agent_search.errors import ConfigError
from agent_search.events import Citations, Done, Event, SearchComplete, SearchStart, TextDelta
from agent_search.searcher import Searcher
from agent_search.trace import first_line
from agent_search.types import Result, ResultItem

OFFLINE = "offline"


class _HookFailed(Exception):
    """The create hook failed; the message is the one-line error for ``done``."""


def _reference(item: ResultItem) -> dict[str, Any]:
    return {"citation_id": item.citation_id, "type": item.type, "title": item.title,
            "content": item.content, "url": item.url, "source": item.source,
            "score": round(item.final_score, 6), "collection": item.collection,
            "document_id": item.document_id, "model": item.model, "record_id": item.record_id}


@dataclass(slots=True)
class _Found:
    """What the searches of one stream left to answer from: the merged references (tool
    calls add to them), whether any search ran at all, and the types that failed."""

    references: list[ResultItem]
    searched: bool
    failed: list[str] = field(default_factory=list)


def _refused_result(ctx: Context, refusal: Refusal) -> Result:
    """A data source out of the assistant's scope, reported as a failed user search (its
    own ``search_start`` / ``search_complete`` events), so the caller sees the refusal."""
    search_id = ctx.next_search_id()
    ctx.events.emit(SearchStart(ctx.request_id, search_id, refusal.type, refusal.query))
    ctx.events.emit(SearchComplete(ctx.request_id, search_id, refusal.type, 0, 0.0,
                                   refusal.error))
    return Result(type=refusal.type, query=refusal.query, source="user", search_id=search_id,
                  error=refusal.error)


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


class Assistant:
    """An assistant loaded from ``assistants/<id>/``. See the module docstring."""

    def __init__(self, *, assistant_id: str, path: Path, package: AssistantPackage,
                 hooks: Hooks, settings: AgentSettings, searcher: Searcher,
                 config_dir: Path | None) -> None:
        self.id = assistant_id
        self.path = path
        self.package = package
        self.hooks = hooks
        self.settings = settings
        self.searcher = searcher
        self.config_dir = config_dir
        self.delegates = Delegates(settings, assistants_root=path.parent, config_dir=config_dir,
                                   log_dir=searcher.config.home / "logs")
        self.records = RecordStore(searcher.config.home / "records.sqlite")
        self._clients: dict[str, ChatClient] = {}
        if not searcher.registry.handlers("mcp_resource"):
            searcher.registry.register(McpResourceHandler(self.delegates.mcp))
        for kind, reranker in self.delegates.request_rerankers(
                searcher.config.uses.rerank).items():
            searcher.rerankers.setdefault(kind, reranker)

    def _attach_dsl_generator(self, config: SearchConfig) -> None:
        """Give db handlers the delegate named by ``uses.query`` (agent or MCP); they
        validate its answers against the model schemas and retry with the error. Done per
        stream: handlers may be registered after loading, and a hook may change uses."""
        name = config.uses.query
        generator = self.delegates.dsl_generator(name)
        if generator is None:
            return
        for handler in self.searcher.registry.handlers("db"):
            generators = getattr(handler, "generators", None)
            if isinstance(generators, dict):
                generators.setdefault(name, generator)

    @classmethod
    def load(cls, path: str | Path, *, config_dir: str | Path | None = None,
             builtin_handlers: bool = True) -> Assistant:
        """Load ``path`` (an assistant folder with ``package.yao`` and optional
        ``hooks.py``). ``config_dir`` defaults to the ``config`` folder next to the
        assistants folder (``assistants/demo`` → ``config``) when there is one.
        Raises :class:`ConfigError` naming the file (and line or key) on bad input."""
        apath = Path(path)
        if not apath.is_dir():
            raise ConfigError("assistant folder not found", file=str(apath))
        cdir = Path(config_dir) if config_dir is not None else None
        if cdir is None and (apath.resolve().parent.parent / "config").is_dir():
            cdir = apath.resolve().parent.parent / "config"
        package = load_package(apath)
        hooks = load_hooks(apath, apath.name)
        settings = AgentSettings.load(cdir)
        searcher = Searcher.from_config(
            cdir, assistant_dir=apath, builtin_handlers=builtin_handlers,
            overrides={"uses": package.uses} if package.uses else None,
            overrides_file=str(apath / "package.yao"))
        return cls(assistant_id=apath.name, path=apath, package=package, hooks=hooks,
                   settings=settings, searcher=searcher, config_dir=cdir)

    # -- public API ---------------------------------------------------------------------

    def stream(self, messages: Sequence[Message | str],
               options: Options | None = None) -> AgentStream:
        """Run the assistant; an async iterator of output events (see the module
        docstring). Raises ValueError at once for malformed messages."""
        options = options or Options()
        msgs = validate_messages(list(messages))
        send, receive = anyio.create_memory_object_stream[Event](max_buffer_size=math.inf)
        ctx = self.searcher.context(user_id=options.user_id, team_id=options.team_id,
                                    request_id=options.request_id, events=SendSink(send))
        return AgentStream(self._run_safely(ctx, msgs, options, send), receive)

    async def answer(self, messages: Sequence[Message | str],
                     options: Options | None = None) -> str:
        """The whole answer text of one stream (used for delegation and scripts)."""
        parts: list[str] = []
        error: str | None = None
        stream = self.stream(messages, options)
        try:
            async for event in stream:
                if isinstance(event, TextDelta):
                    parts.append(event.text)
                elif isinstance(event, Done):
                    error = event.error
        finally:
            await stream.aclose()
        if error and not parts:
            raise LLMError(error)
        return "".join(parts)

    async def record(self, request_id: str) -> SearchRecord | None:
        """The search record a stream stored (by its request id)."""
        return await self.records.get(request_id)

    async def aclose(self) -> None:
        """Close LLM clients and every handler that can be closed (database engines,
        HTTP clients). Call when the assistant is no longer needed."""
        for client in self._clients.values():
            if isinstance(client, OpenAIChatClient):
                await client.aclose()
        for search_type in self.searcher.registry.types:
            for handler in self.searcher.registry.handlers(search_type):
                close = getattr(handler, "aclose", None)
                if callable(close):
                    with contextlib.suppress(Exception):  # closing is best effort
                        await close()

    # -- the pipeline -------------------------------------------------------------------

    async def _run_safely(self, ctx: Context, msgs: list[Message], options: Options,
                          send: MemoryObjectSendStream[Event]) -> None:
        async with send:
            try:
                await self._run(ctx, msgs, options)
            except Exception as exc:  # a bug must still end the stream cleanly
                ctx.events.emit(Done(ctx.request_id, error=f"internal error: {first_line(exc)}"))

    async def _run(self, ctx: Context, msgs: list[Message], options: Options) -> None:
        """The stages of one stream, in the order of the spec (module docstring)."""
        started = time.perf_counter()
        emit = ctx.events.emit
        rid = ctx.request_id
        rec = SearchRecord(request_id=rid, assistant=self.id)
        hctx = HookContext(searcher=self.searcher, ctx=ctx, assistant_id=self.id,
                           options=options)

        try:
            hook = await self._create_hook(hctx, msgs, options, rec)
        except _HookFailed as failed:
            await self._save(rec, started)
            emit(Citations(rid))
            emit(Done(rid, error=str(failed)))
            return
        query = conversation_query(msgs)
        rec.query = query
        self._attach_dsl_generator(ctx.config)

        user_results = await self._user_data(ctx, msgs, query, rec)
        decision = decide_auto_search(
            option=options.search, has_search_config=bool(ctx.config.enabled_types()),
            hook_search=hook.search, hook_handled=bool(hook.messages),
            user_results=sum(len(r.items) for r in user_results),
            skip_threshold=ctx.config.options.skip_threshold)
        rec.decision = decision.reason
        auto_results: list[Result] = []
        if decision.run and query:
            t = time.perf_counter()
            auto_results = await self._auto_search(ctx, query, rec)
            rec.durations_ms["auto_search"] = _ms(t)
        elif decision.run:
            rec.warnings.append("auto search skipped: the conversation has no user text")

        results = [*user_results, *hctx.search.results, *auto_results]
        references = await self._merge(ctx, query, results, rec)
        found = _Found(references, searched=bool(results),
                       failed=list(dict.fromkeys(r.type for r in results if r.error)))
        llm_msgs = self._compose(msgs, hook, found, ctx)

        # the answer, streamed through the citation tracker
        t = time.perf_counter()
        citation = ctx.config.citation
        tracker = CitationTracker([i.citation_id for i in references if i.citation_id],
                                  citation.format, citation.remove_unknown)

        def text_out(chunk: str) -> None:
            visible = tracker.feed(chunk)
            if visible:
                rec.durations_ms.setdefault("first_text", _ms(started))
                emit(TextDelta(rid, visible))

        def flush() -> None:
            tail = tracker.flush()
            if tail:
                emit(TextDelta(rid, tail))

        rec.durations_ms["llm_start"] = _ms(started)
        error = await self._generate(options, llm_msgs, query, found, citation.format,
                                     text_out, rec, ctx, tracker)
        flush()
        rec.durations_ms["llm"] = _ms(t)
        rec.references = [_reference(i) for i in references]  # + what tool calls found

        if self.hooks.next is not None:
            payload = {"messages": llm_msgs, "text": tracker.text,
                       "references": [i.model_dump(mode="json") for i in references],
                       "citations": {"used": list(tracker.used),
                                     "unknown": list(tracker.unknown)},
                       "decision": decision.reason, "error": error}
            extra, hook_failure = await self._next_hook(hctx, payload)
            error = error or hook_failure
            if extra:
                text_out(extra)
                flush()

        rec.citations_used = list(tracker.used)
        rec.citations_unknown = list(tracker.unknown)
        if error:
            rec.errors.append(error)
        by_id = {i.citation_id: i for i in references}
        used_refs = [_reference(by_id[c]) for c in tracker.used if c in by_id]
        await self._save(rec, started)
        emit(Citations(rid, used=list(tracker.used), unknown=list(tracker.unknown)))
        emit(Done(rid, references=used_refs, error=error))

    async def _create_hook(self, hctx: HookContext, msgs: list[Message], options: Options,
                           rec: SearchRecord) -> HookResponse:
        """Run ``create``; apply its citation / uses overrides to the stream's config.
        Raises :class:`_HookFailed` (a one-line message) when the hook fails."""
        if self.hooks.create is None:
            return HookResponse()
        t = time.perf_counter()
        try:
            hook = HookResponse.parse(
                await self.hooks.create(hctx, copy.deepcopy(msgs), options))
        except Exception as exc:
            message = hook_error(exc, self.hooks, "create")
            rec.errors.append(message)
            raise _HookFailed(message) from None
        rec.durations_ms["create_hook"] = _ms(t)
        overrides: dict[str, Any] = {}
        if hook.citation:
            overrides["citation"] = hook.citation
        if hook.uses:
            overrides["uses"] = hook.uses
        if overrides:
            ctx = hctx.context
            try:
                ctx.config = ctx.config.merged(overrides, file=self.hooks.file)
            except ConfigError as exc:
                rec.warnings.append(f"create hook overrides ignored: {exc}")
        return hook

    async def _user_data(self, ctx: Context, msgs: list[Message], query: str,
                         rec: SearchRecord) -> list[Result]:
        """Searches for the ``type: "data"`` parts of the user's message (source user)."""
        t = time.perf_counter()
        requests, refused, warnings = data_source_requests(msgs, query,
                                                           DataScope.of(ctx.config))
        rec.warnings.extend(warnings)
        results = [_refused_result(ctx, r) for r in refused]
        if requests:
            prepared = [build_request(ctx.config, r, "user") for r in requests]
            results += await self.searcher.search_many(prepared, ctx=ctx)
            rec.durations_ms["user_data"] = _ms(t)
        return results

    async def _merge(self, ctx: Context, query: str, results: list[Result],
                     rec: SearchRecord) -> list[ResultItem]:
        """All results merged, deduplicated, weighted and reranked (``uses.rerank``);
        recorded."""
        rec.searches = [{"search_id": r.search_id, "type": r.type, "source": r.source,
                         "query": r.query, "count": len(r.items), "error": r.error,
                         "duration_ms": r.duration_ms} for r in results]
        rec.errors.extend(f"{r.type}: {r.error}" for r in results if r.error)
        rec.warnings.extend(f"{r.type}: {w}" for r in results for w in r.warnings)
        rec.dsl = rec.dsl or next((r.dsl for r in results if r.dsl), None)
        references: list[ResultItem] = []
        if any(r.items for r in results):
            t = time.perf_counter()
            reranker = self.delegates.reranker(ctx.config.uses.rerank, rec.warnings)
            merged = await self.searcher.merge(results, ctx=ctx, query=query,
                                               reranker=reranker)
            if merged.rerank_error:
                rec.warnings.append(merged.rerank_error)
            references = merged.items
            rec.durations_ms["merge"] = _ms(t)
        rec.references = [_reference(i) for i in references]
        return references

    async def _next_hook(self, hctx: HookContext, payload: dict[str, Any]
                         ) -> tuple[str | None, str | None]:
        """Run ``next``: (text it adds, its failure message)."""
        assert self.hooks.next is not None
        try:
            extra = await self.hooks.next(hctx, payload)
        except Exception as exc:
            return None, hook_error(exc, self.hooks, "next")
        if isinstance(extra, dict) and isinstance(extra.get("text"), str):
            return str(extra["text"]), None
        return None, None

    async def _save(self, rec: SearchRecord, started: float) -> None:
        rec.durations_ms["total"] = _ms(started)
        if not self.settings.records:
            return
        try:
            await self.records.save(rec)
        except Exception as exc:  # a full disk must not break the answer
            rec.warnings.append(f"search record not stored: {first_line(exc)}")

    async def _auto_search(self, ctx: Context, query: str, rec: SearchRecord) -> list[Result]:
        """The configured types in parallel. Web keyword extraction (maybe a delegate
        call) runs inside the web task, so it never delays the kb and db searches."""
        config = ctx.config
        types = config.enabled_types() or [
            t for t in ("web", "kb", "db") if self.searcher.registry.handlers(t)]
        results: list[Result | None] = [None] * len(types)

        async def one(i: int, search_type: str) -> None:
            fields: dict[str, Any] = {"type": search_type, "query": query}
            if search_type == "web":
                keywords = await self.delegates.keywords(
                    config.uses.keyword, query, max_keywords=config.keyword.max_keywords,
                    language=config.keyword.language, warnings=rec.warnings)
                rec.keywords = keywords
                if keywords:
                    fields["query"] = " ".join(keywords)
            results[i] = await self.searcher.search(build_request(config, fields, "auto"),
                                                    ctx=ctx)

        async with anyio.create_task_group() as tg:
            for i, search_type in enumerate(types):
                tg.start_soon(one, i, search_type)
        return [r for r in results if r is not None]

    def _compose(self, msgs: list[Message], hook: HookResponse, found: _Found,
                 ctx: Context) -> list[Message]:
        """The messages for the model: the package prompts, the conversation (as the
        create hook left it), and one system message after the leading ones: the
        references to cite or, when searches ran and left none, that nothing was found
        (the model is then not told to cite)."""
        conversation = msgs
        if hook.messages:
            if any(m.get("role") == "user" for m in hook.messages):
                conversation = hook.messages  # the hook rewrote the conversation
            else:
                conversation = insert_after_system(msgs, hook.messages)
        prompts = [p.model_dump() for p in self.package.prompts]
        out = [*prompts, *conversation]
        if found.references:
            content = build_prompt(found.references, ctx.config.citation)
        elif found.searched:
            content = no_reference_prompt(found.failed)
        else:
            return out  # no search ran: nothing to say about references
        return insert_after_system(out, [{"role": "system", "content": content}])

    # -- LLM --------------------------------------------------------------------------

    def _chat_client(self, options: Options) -> tuple[ChatClient | None, str]:
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

    async def _generate(self, options: Options, llm_msgs: list[Message], query: str,
                        found: _Found, fmt: str, text_out: Any,
                        rec: SearchRecord, ctx: Context, tracker: CitationTracker
                        ) -> str | None:
        """Stream the answer through ``text_out``; the error, if the model failed.

        With the ``search`` tool on, the model may call it (up to MAX_TOOL_ROUNDS rounds);
        found items join ``references`` and the citations the tracker knows."""
        references = found.references
        client, reason = self._chat_client(options)
        if client is None:
            async for piece in stream_offline_answer(query, references, reason=reason, fmt=fmt,
                                                     searched=found.searched,
                                                     failed=found.failed):
                text_out(piece)
            return None
        tool_types = self._tool_types()
        messages = to_llm_messages(llm_msgs)
        produced = False
        try:
            for round_ in range(MAX_TOOL_ROUNDS + 1):
                offer = [search_tool_spec(tool_types)] \
                    if tool_types and round_ < MAX_TOOL_ROUNDS else None
                calls: list[ToolCall] = []
                said: list[str] = []
                async for ev in client.stream_chat(messages, tools=offer):
                    if ev.kind == "text":
                        produced = True
                        said.append(ev.text)
                        text_out(ev.text)
                    elif ev.kind == "tool_calls":
                        calls = ev.tool_calls
                    elif ev.kind == "warning":
                        rec.warnings.append(ev.text)
                if not calls or not offer:
                    break
                messages.append(assistant_tool_message("".join(said), calls))
                answers = await self._run_tool_calls(calls, ctx, tool_types)
                for call, (reply, items) in zip(calls, answers, strict=True):
                    messages.append(reply)
                    references.extend(items)
                    tracker.known.update(i.citation_id for i in items if i.citation_id)
                    rec.searches.append({"type": "tool", "call": call.name,
                                         "arguments": call.arguments, "count": len(items)})
        except LLMError as exc:
            message = f"llm: {exc}"
            if not produced:  # nothing said yet: answer offline rather than not at all
                reason = f"the language model failed: {exc}"
                async for piece in stream_offline_answer(query, references, reason=reason,
                                                         fmt=fmt, searched=found.searched,
                                                         failed=found.failed):
                    text_out(piece)
            return message
        return None

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

    def _tool_types(self) -> list[str]:
        """Search types offered to the model through the ``search`` tool (none unless
        package.yao lists "search" in ``tools``)."""
        if SEARCH_TOOL not in self.package.tools:
            return []
        return [t for t in ("web", "kb", "db") if self.searcher.registry.handlers(t)]


def decision_for(assistant: Assistant, options: Options, *, hook_search: bool | None = None,
                 hook_handled: bool = False, user_results: int = 0) -> Decision:
    """The auto-search decision this assistant would take (for callers and tests)."""
    config = assistant.searcher.config
    return decide_auto_search(option=options.search,
                              has_search_config=bool(config.enabled_types()),
                              hook_search=hook_search, hook_handled=hook_handled,
                              user_results=user_results,
                              skip_threshold=config.options.skip_threshold)
