"""An assistant and its stream: hooks, user data, auto search, citations, LLM.

``async with assistant.run_stream(messages, options) as events`` runs the stages of the
spec in a task group of the block, in this order:

1. one :class:`~agent_search.context.Context` (citation ids unique across everything
   below);
2. ``create`` hook (its ``ctx.search.*`` searches have source ``hook``);
3. user data sources (``type: "data"`` content parts, source ``user``);
4. the auto-search decision (:mod:`agent_search.agent._decision`);
5. auto search of the configured types in parallel (source ``auto``);
6. merge, dedupe, weights, rerank (``Searcher.merge`` with ``uses.rerank``);
7. one system message with the citation prompt and the fenced references, after the
   leading system messages; when searches ran and none left a reference, a message saying
   that no reference was found instead (the model is not told to cite);
8. the LLM call, streamed (or the offline responder), citation markers tracked;
9. grounding of the answer (:mod:`agent_search.agent._grounding`), then the ``next``
   hook, which sees it (and the answer re-grounded if the hook adds text);
10. ``citations``, ``grounding`` and ``done`` events (``done`` carries the grounding, and
    its references are the cited ones plus those the grounding added); the search
    record is stored before ``done``.

Search progress events are emitted by the searcher into the context's sink while the
stages run, so the caller sees ``search_start`` / ``search_result`` /
``search_complete`` live, then ``text`` deltas, ``citations`` and ``done``.

Leaving the block (at the end, on ``break``, on an exception or when the caller is
cancelled) cancels the searches and the LLM call still in flight: nothing outlives it.
It runs on any anyio backend (asyncio, trio). ``stream()`` is the same as an async
generator; close it (``contextlib.aclosing``) if you may stop before the end.

Each stage takes what it needs and returns what it found; what the search record needs
beyond the events goes on the stage's trace node, and the stream's
:class:`~agent_search.agent.records.RecordSink` builds the record from both.
"""

from __future__ import annotations

import contextlib
import copy
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from agent_search._builtins import register_builtin_handlers
from agent_search.agent._citations import CitationTracker
from agent_search.agent._conversation import (
    Message,
    conversation_query,
    insert_after_system,
    to_llm_messages,
    validate_messages,
)
from agent_search.agent._datasources import DataScope, Refusal, data_source_requests
from agent_search.agent._decision import Decision, decide_auto_search
from agent_search.agent._grounding import added_citations, ground_answer
from agent_search.agent._hook_api import HookContext
from agent_search.agent._hooks import HookResponse, Hooks, hook_error, load_hooks
from agent_search.agent._requests import build_request
from agent_search.agent._resources import McpResourceHandler
from agent_search.agent._tools import (
    MAX_TOOL_ROUNDS,
    SEARCH_TOOL,
    assistant_tool_message,
    run_tool_call,
    search_tool_spec,
)
from agent_search.agent.delegation import Delegates
from agent_search.agent.llm import ChatClient, LLMError, OpenAIChatClient, stream_offline_answer
from agent_search.agent.llm.base import ToolCall
from agent_search.agent.options import Options
from agent_search.agent.package import AssistantPackage, load_package
from agent_search.agent.records import STAGE, RecordSink, RecordStore, SearchRecord
from agent_search.agent.settings import AgentSettings
from agent_search.citation import build_prompt, no_reference_prompt
from agent_search.config import load_config
from agent_search.context import Context
from agent_search.errors import ConfigError
from agent_search.events import (
    Citations,
    Done,
    Event,
    Grounding,
    SearchComplete,
    SearchStart,
    StreamSink,
    TextDelta,
)
from agent_search.searcher import Searcher
from agent_search.trace import TraceNode, first_line
from agent_search.types import Result, ResultItem

if sys.version_info < (3, 11):  # anyio's own dependency there
    from exceptiongroup import BaseExceptionGroup

OFFLINE = "offline"


class _HookFailed(Exception):
    """The create hook failed; the message is the one-line error for ``done``."""


def _reference(item: ResultItem) -> dict[str, Any]:
    return {"citation_id": item.citation_id, "type": item.type, "title": item.title,
            "content": item.content, "url": item.url, "source": item.source,
            "score": round(item.final_score, 6), "collection": item.collection,
            "document_id": item.document_id, "model": item.model, "record_id": item.record_id}


@contextlib.contextmanager
def _stage(ctx: Context, name: str) -> Iterator[TraceNode]:
    """A pipeline stage's trace node: its timing, and the facts it leaves for the record
    (``warnings``, ``errors``, ``keywords``, ``dsl``)."""
    node = ctx.trace.child(name, **{STAGE: True})
    try:
        yield node
    finally:
        node.finish()


def _warnings(node: TraceNode) -> list[str]:
    warnings: list[str] = node.attributes.setdefault("warnings", [])
    return warnings


@dataclass(slots=True)
class _Found:
    """What the searches of one stream left to answer from: the merged references, whether
    any search ran at all, and the types that failed."""

    references: list[ResultItem]
    searched: bool
    failed: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Question:
    """What the answer stage works from."""

    query: str
    messages: list[Message]
    found: _Found


@dataclass(slots=True)
class _Answer:
    """What the answer stage produced: the references the model had (the merged ones plus
    what its tool calls found) and the model's failure, if it failed."""

    references: list[ResultItem]
    error: str | None


class _TextOut:
    """The visible text of a stream: chunks go through the citation tracker and out as
    ``text`` events."""

    def __init__(self, ctx: Context, tracker: CitationTracker) -> None:
        self._emit = ctx.events.emit
        self._rid = ctx.request_id
        self.tracker = tracker
        self.written = False
        """Whether any text was written, shown yet or not (markers may be held back)."""

    def write(self, chunk: str) -> None:
        self.written = self.written or bool(chunk)
        visible = self.tracker.feed(chunk)
        if visible:
            self._emit(TextDelta(self._rid, visible))

    def flush(self) -> None:
        tail = self.tracker.flush()
        if tail:
            self._emit(TextDelta(self._rid, tail))


def _refused_result(ctx: Context, refusal: Refusal) -> Result:
    """A data source out of the assistant's scope, reported as a failed user search (its
    own ``search_start`` / ``search_complete`` events), so the caller sees the refusal."""
    search_id = ctx.next_search_id()
    node = ctx.trace.child("search", search_type=refusal.type, query=refusal.query,
                           search_id=search_id, source="user")
    node.finish("failed", refusal.error)
    ctx.events.emit(SearchStart(ctx.request_id, search_id, refusal.type, refusal.query))
    ctx.events.emit(SearchComplete(ctx.request_id, search_id, refusal.type, 0, 0.0,
                                   refusal.error))
    return Result(type=refusal.type, query=refusal.query, source="user", search_id=search_id,
                  error=refusal.error)


class Assistant:
    """An assistant loaded from ``assistants/<id>/``. See the module docstring.

    The searcher is used as given, never changed: :meth:`load` builds one with the
    assistant's handlers (``mcp_resource``) and rerankers (``uses.rerank``); the NL → DSL
    generator of ``uses.query`` reaches db handlers through each stream's context.
    """

    def __init__(self, *, assistant_id: str, path: Path, package: AssistantPackage,
                 hooks: Hooks, settings: AgentSettings, searcher: Searcher,
                 config_dir: Path | None, delegates: Delegates | None = None,
                 owns_searcher: bool = False) -> None:
        self.id = assistant_id
        self.path = path
        self.package = package
        self.hooks = hooks
        self.settings = settings
        self.searcher = searcher
        self.config_dir = config_dir
        self._owns_delegates = delegates is None or owns_searcher
        self.delegates = delegates or Delegates(
            settings, assistants_root=path.parent, config_dir=config_dir,
            log_dir=searcher.config.home / "logs")
        self.records = RecordStore(searcher.config.home / "records.sqlite")
        self._clients: dict[str, ChatClient] = {}
        self._owns_searcher = owns_searcher

    @classmethod
    def load(cls, path: str | Path, *, config_dir: str | Path | None = None,
             builtin_handlers: bool = True) -> Assistant:
        """Load ``path`` (an assistant folder with ``package.yao`` and optional
        ``hooks.py``). ``config_dir`` defaults to the ``config`` folder next to the
        assistants folder (``assistants/demo`` → ``config``) when there is one.
        Raises :class:`ConfigError` naming the file (and line or key) on bad input.

        The searcher is built here with what the assistant needs (``mcp_resource``
        handler, the rerankers ``uses.rerank`` names); the assistant owns and closes it."""
        apath = Path(path)
        if not apath.is_dir():
            raise ConfigError("assistant folder not found", file=str(apath))
        cdir = Path(config_dir) if config_dir is not None else None
        if cdir is None and (apath.resolve().parent.parent / "config").is_dir():
            cdir = apath.resolve().parent.parent / "config"
        package = load_package(apath)
        hooks = load_hooks(apath, apath.name)
        settings = AgentSettings.load(cdir)
        config = load_config(cdir, assistant_dir=apath)
        if package.uses:
            config = config.merged({"uses": package.uses}, file=str(apath / "package.yao"))
        delegates = Delegates(settings, assistants_root=apath.parent, config_dir=cdir,
                              log_dir=config.home / "logs")
        searcher = Searcher(config, handlers=[McpResourceHandler(delegates.mcp)],
                            rerankers=delegates.request_rerankers(config.uses.rerank))
        if builtin_handlers:
            register_builtin_handlers(searcher, config_dir=cdir, assistant_dir=apath)
        return cls(assistant_id=apath.name, path=apath, package=package, hooks=hooks,
                   settings=settings, searcher=searcher, config_dir=cdir,
                   delegates=delegates, owns_searcher=True)

    # -- public API ---------------------------------------------------------------------

    def run_stream(self, messages: Sequence[Message | str], options: Options | None = None
                   ) -> contextlib.AbstractAsyncContextManager[AsyncIterator[Event]]:
        """``async with assistant.run_stream(messages, options) as events:`` the output
        events of one run (see the module docstring). Raises ValueError at once for
        malformed messages."""
        return self._open(validate_messages(list(messages)), options or Options())

    def stream(self, messages: Sequence[Message | str],
               options: Options | None = None) -> AsyncGenerator[Event, None]:
        """:meth:`run_stream` as an async generator. Raises ValueError at once for
        malformed messages. Stopping early: close it (``await stream.aclose()`` or
        ``contextlib.aclosing``), which cancels the work in flight."""
        return self._generate_events(validate_messages(list(messages)), options or Options())

    async def _generate_events(self, msgs: list[Message], options: Options
                               ) -> AsyncGenerator[Event, None]:
        async with self._open(msgs, options) as events:
            async for event in events:
                yield event

    @contextlib.asynccontextmanager
    async def _open(self, msgs: list[Message], options: Options
                    ) -> AsyncIterator[MemoryObjectReceiveStream[Event]]:
        channel = StreamSink()
        ctx = self.searcher.context(user_id=options.user_id, team_id=options.team_id,
                                    request_id=options.request_id)
        sink = RecordSink(ctx.request_id, self.id, channel)
        ctx.events = sink
        callers: BaseException | None = None
        try:
            async with channel.receive, anyio.create_task_group() as tg:
                tg.start_soon(self._run_safely, ctx, sink, msgs, options, channel)
                try:
                    yield channel.receive
                finally:
                    tg.cancel_scope.cancel()  # the caller left: stop what still runs
        except BaseExceptionGroup as group:
            # The pipeline ends every failure with a ``done`` event and never raises, so
            # what the task group caught is the caller's own exception (or GeneratorExit
            # when ``stream()`` is closed early): give it back as it was raised.
            if len(group.exceptions) != 1:
                raise
            callers = group.exceptions[0]
        if callers is not None:
            raise callers

    async def answer(self, messages: Sequence[Message | str],
                     options: Options | None = None) -> str:
        """The whole answer text of one stream (used for delegation and scripts)."""
        parts: list[str] = []
        error: str | None = None
        async with self.run_stream(messages, options) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    parts.append(event.text)
                elif isinstance(event, Done):
                    error = event.error
        if error and not parts:
            raise LLMError(error)
        return "".join(parts)

    async def record(self, request_id: str) -> SearchRecord | None:
        """The search record a stream stored (by its request id)."""
        return await self.records.get(request_id)

    async def aclose(self) -> None:
        """Close the LLM clients, the delegate assistants it loaded, and the searcher when
        :meth:`load` built it (a searcher or delegates handed in belong to the caller).
        Closing is best effort."""
        for client in self._clients.values():
            if isinstance(client, OpenAIChatClient):
                with contextlib.suppress(Exception):
                    await client.aclose()
        if self._owns_delegates:
            with contextlib.suppress(Exception):
                await self.delegates.aclose()
        if self._owns_searcher:
            with contextlib.suppress(Exception):
                await self.searcher.aclose()

    # -- the pipeline -------------------------------------------------------------------

    async def _run_safely(self, ctx: Context, sink: RecordSink, msgs: list[Message],
                          options: Options, channel: StreamSink) -> None:
        try:
            await self._run(ctx, sink, msgs, options)
        except Exception as exc:  # a bug must still end the stream cleanly
            ctx.events.emit(Done(ctx.request_id, error=f"internal error: {first_line(exc)}"))
        finally:
            channel.close()

    async def _run(self, ctx: Context, sink: RecordSink, msgs: list[Message],
                   options: Options) -> None:
        """The stages of one stream, in the order of the spec (module docstring)."""
        hctx = HookContext(searcher=self.searcher, ctx=ctx, assistant_id=self.id,
                           options=options)
        try:
            hook = await self._create_hook(hctx, msgs, options)
        except _HookFailed as failed:
            await self._finish(ctx, sink, Done(ctx.request_id, error=str(failed)))
            return
        query = conversation_query(msgs)
        ctx.trace.attributes["query"] = query
        generator = self.delegates.dsl_generator(ctx.config.uses.query)
        if generator is not None:  # db handlers find it by its uses.query name
            ctx.generators = {generator.name: generator}

        user_results = await self._user_data(ctx, msgs, query)
        decision = self._decide(ctx, options, hook, user_results)
        ctx.trace.attributes["decision"] = decision.reason
        auto_results = await self._auto_search(ctx, query) if decision.run else []

        results = [*user_results, *hctx.search.results, *auto_results]
        found = await self._merge(ctx, query, results)
        llm_msgs = self._compose(msgs, hook, found, ctx)

        citation = ctx.config.citation
        out = _TextOut(ctx, CitationTracker(
            [i.citation_id for i in found.references if i.citation_id],
            citation.format, citation.remove_unknown))
        answer = await self._answer(ctx, options, _Question(query, llm_msgs, found), out)
        out.flush()
        references = answer.references
        ctx.trace.attributes["references"] = [_reference(i) for i in references]
        error = answer.error
        grounding = await ground_answer(ctx, out.tracker.text, references)
        if self.hooks.next is not None:
            tracker = out.tracker
            payload = {"messages": llm_msgs, "text": tracker.text,
                       "references": [i.model_dump(mode="json") for i in references],
                       "citations": {"used": list(tracker.used),
                                     "unknown": list(tracker.unknown)},
                       "grounding": grounding, "decision": decision.reason, "error": error}
            extra, hook_failure = await self._next_hook(hctx, payload)
            error = error or hook_failure
            if extra:
                out.write(extra)
                out.flush()
                grounding = await ground_answer(ctx, out.tracker.text, references)

        used = list(out.tracker.used)
        by_id = {i.citation_id: i for i in references}
        ctx.events.emit(Citations(ctx.request_id, used=used, unknown=list(out.tracker.unknown)))
        ctx.events.emit(Grounding(ctx.request_id, grounding))
        cited = [*used, *added_citations(grounding, used)]
        await self._finish(ctx, sink, Done(
            ctx.request_id, references=[_reference(by_id[c]) for c in cited if c in by_id],
            error=error, grounding=grounding), citations_sent=True)

    async def _finish(self, ctx: Context, sink: RecordSink, done: Done, *,
                      citations_sent: bool = False) -> None:
        """Store the record, then end the stream with ``citations`` and ``grounding``
        (unless sent) and ``done``: a caller that saw ``done`` can read the record."""
        if not citations_sent:
            ctx.events.emit(Citations(ctx.request_id))
            ctx.events.emit(Grounding(ctx.request_id))
        record = sink.record(ctx.trace, done)
        if self.settings.records:
            with contextlib.suppress(Exception):  # a full disk must not break the answer
                await self.records.save(record)
        ctx.events.emit(done)

    async def _create_hook(self, hctx: HookContext, msgs: list[Message],
                           options: Options) -> HookResponse:
        """Run ``create``; apply its citation / uses overrides to the stream's config.
        Raises :class:`_HookFailed` (a one-line message) when the hook fails."""
        if self.hooks.create is None:
            return HookResponse()
        ctx = hctx.context
        with _stage(ctx, "create_hook") as node:
            try:
                hook = HookResponse.parse(
                    await self.hooks.create(hctx, copy.deepcopy(msgs), options))
            except Exception as exc:
                raise _HookFailed(hook_error(exc, self.hooks, "create")) from exc
            overrides: dict[str, Any] = {}
            if hook.citation:
                overrides["citation"] = hook.citation
            if hook.uses:
                overrides["uses"] = hook.uses
            if overrides:
                try:
                    ctx.config = ctx.config.merged(overrides, file=self.hooks.file)
                except ConfigError as exc:
                    _warnings(node).append(f"create hook overrides ignored: {exc}")
        return hook

    async def _user_data(self, ctx: Context, msgs: list[Message], query: str) -> list[Result]:
        """Searches for the ``type: "data"`` parts of the user's message (source user)."""
        requests, refused, warnings = data_source_requests(msgs, query,
                                                           DataScope.of(ctx.config))
        with _stage(ctx, "user_data") as node:
            _warnings(node).extend(warnings)
            results = [_refused_result(ctx, r) for r in refused]
            if requests:
                prepared = [build_request(r, "user") for r in requests]
                results += await self.searcher.search_many(prepared, ctx=ctx)
        return results

    @staticmethod
    def _decide(ctx: Context, options: Options, hook: HookResponse,
                user_results: list[Result]) -> Decision:
        return decide_auto_search(
            option=options.search, has_search_config=bool(ctx.config.enabled_types()),
            hook_search=hook.search, hook_handled=bool(hook.messages),
            user_results=sum(len(r.items) for r in user_results),
            skip_threshold=ctx.config.options.skip_threshold)

    async def _merge(self, ctx: Context, query: str, results: list[Result]) -> _Found:
        """All results merged, deduplicated, weighted and reranked (``uses.rerank``)."""
        references: list[ResultItem] = []
        with _stage(ctx, "merge") as node:
            node.attributes["errors"] = [f"{r.type}: {r.error}" for r in results if r.error]
            warnings = _warnings(node)
            warnings.extend(f"{r.type}: {w}" for r in results for w in r.warnings)
            node.attributes["dsl"] = next((r.dsl for r in results if r.dsl), None)
            if any(r.items for r in results):
                reranker = self.delegates.reranker(ctx.config.uses.rerank, warnings)
                merged = await self.searcher.merge(results, ctx=ctx, query=query,
                                                   reranker=reranker)
                if merged.rerank_error:
                    warnings.append(merged.rerank_error)
                references = merged.items
        ctx.trace.attributes["references"] = [_reference(i) for i in references]
        return _Found(references, searched=bool(results),
                      failed=list(dict.fromkeys(r.type for r in results if r.error)))

    async def _next_hook(self, hctx: HookContext, payload: dict[str, Any]
                         ) -> tuple[str | None, str | None]:
        """Run ``next``: (text it adds, its failure message)."""
        assert self.hooks.next is not None
        with _stage(hctx.context, "next_hook"):
            try:
                extra = await self.hooks.next(hctx, payload)
            except Exception as exc:
                return None, hook_error(exc, self.hooks, "next")
        if isinstance(extra, dict) and isinstance(extra.get("text"), str):
            return str(extra["text"]), None
        return None, None

    async def _auto_search(self, ctx: Context, query: str) -> list[Result]:
        """The configured types in parallel. Web keyword extraction (maybe a delegate
        call) runs inside the web task, so it never delays the kb and db searches."""
        if not query:
            with _stage(ctx, "auto_search_skipped") as node:
                _warnings(node).append(
                    "auto search skipped: the conversation has no user text")
            return []
        config = ctx.config
        types = config.enabled_types() or self.searcher.registry.searchable_types
        results: list[Result | None] = [None] * len(types)

        async def one(i: int, search_type: str, node: TraceNode) -> None:
            fields: dict[str, Any] = {"type": search_type, "query": query}
            if search_type == "web":
                keywords = await self.delegates.keywords(
                    config.uses.keyword, query, max_keywords=config.keyword.max_keywords,
                    language=config.keyword.language, warnings=_warnings(node))
                node.attributes["keywords"] = keywords
                if keywords:
                    fields["query"] = " ".join(keywords)
            results[i] = await self.searcher.search(build_request(fields, "auto"),
                                                    ctx=ctx)

        with _stage(ctx, "auto_search") as node:
            async with anyio.create_task_group() as tg:
                for i, search_type in enumerate(types):
                    tg.start_soon(one, i, search_type, node)
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

    async def _answer(self, ctx: Context, options: Options, question: _Question,
                      out: _TextOut) -> _Answer:
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
                                                     failed=found.failed):
                out.write(piece)

        with _stage(ctx, "llm") as node:
            client, reason = self._chat_client(options)
            if client is None:
                await offline(reason)
                return _Answer(references, None)
            try:
                await self._chat(ctx, client, question, out, references, node)
            except LLMError as exc:
                if not out.written:  # nothing said yet: answer offline rather than not at all
                    await offline(f"the language model failed: {exc}")
                return _Answer(references, f"llm: {exc}")
        return _Answer(references, None)

    async def _chat(self, ctx: Context, client: ChatClient, question: _Question,
                    out: _TextOut, references: list[ResultItem], node: TraceNode) -> None:
        """The model's turns: text to ``out``; tool calls run, their items added to
        ``references``, until the model answers without calling a tool. Warnings and the
        tool calls go on the stage's trace ``node`` for the record."""
        warnings = _warnings(node)
        tool_calls: list[dict[str, Any]] = node.attributes.setdefault("tool_calls", [])
        tool_types = self._tool_types()
        messages = to_llm_messages(question.messages)
        for round_ in range(MAX_TOOL_ROUNDS + 1):
            offer = [search_tool_spec(tool_types)] \
                if tool_types and round_ < MAX_TOOL_ROUNDS else None
            calls: list[ToolCall] = []
            said: list[str] = []
            async for ev in client.stream_chat(messages, tools=offer):
                if ev.kind == "text":
                    said.append(ev.text)
                    out.write(ev.text)
                elif ev.kind == "tool_calls":
                    calls = ev.tool_calls
                elif ev.kind == "warning":
                    warnings.append(ev.text)
            if not calls or not offer:
                return
            messages.append(assistant_tool_message("".join(said), calls))
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

    def _tool_types(self) -> list[str]:
        """Search types offered to the model through the ``search`` tool (none unless
        package.yao lists "search" in ``tools``)."""
        if SEARCH_TOOL not in self.package.tools:
            return []
        return self.searcher.registry.searchable_types

