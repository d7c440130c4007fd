"""An assistant and its stream: hooks, user data, auto search, citations, LLM.

``async with assistant.run_stream(messages, options) as events`` runs the stages of the
spec in a task group of the block, in this order:

1. one :class:`~agent_search.context.Context` (citation ids unique across everything
   below);
2. ``create`` hook (its ``ctx.search.*`` searches have source ``hook``);
3. user data sources (``type: "data"`` content parts, source ``user``);
4. the auto-search decision (:mod:`agent_search.agent._decision`);
5. auto search of the configured types in parallel (source ``auto``; web without its
   API key left out, with a ``notice`` event);
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
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from agent_search._builtins import register_builtin_handlers
from agent_search._results import search_error
from agent_search.agent._answering import Answerer
from agent_search.agent._citations import CitationTracker
from agent_search.agent._conversation import (
    Message,
    insert_after_system,
    validate_conversation,
)
from agent_search.agent._datasources import DataScope, data_source_requests
from agent_search.agent._decision import Decision, decide_auto_search
from agent_search.agent._followup import Reading, read_conversation, rewrite_conversation
from agent_search.agent._grounding import added_citations
from agent_search.agent._hook_api import HookContext
from agent_search.agent._hooks import HookResponse, Hooks, hook_error, load_hooks
from agent_search.agent._notices import usable_types
from agent_search.agent._record_text import record_counts, with_counts
from agent_search.agent._requests import build_request, keyword_fields
from agent_search.agent._resources import McpResourceHandler
from agent_search.agent._stages import (
    Found,
    Question,
    TextOut,
    reference,
    refused_result,
    stage,
    stage_warnings,
)
from agent_search.agent.delegation import Delegates
from agent_search.agent.llm import LLMError
from agent_search.agent.options import Options
from agent_search.agent.package import AssistantPackage, load_package, sources_package
from agent_search.agent.records import RecordSink, RecordStore, SearchRecord
from agent_search.agent.settings import AgentSettings
from agent_search.citation import build_prompt, no_reference_prompt
from agent_search.config import SearchConfig
from agent_search.context import Context
from agent_search.errors import ConfigError
from agent_search.events import (
    Citations,
    Done,
    Event,
    Grounding,
    Notice,
    StreamSink,
    TextDelta,
)
from agent_search.loader import load_config
from agent_search.searcher import Searcher
from agent_search.trace import TraceNode, first_line
from agent_search.types import Result, ResultItem

if sys.version_info < (3, 11):  # anyio's own dependency there
    from exceptiongroup import BaseExceptionGroup

def _load_delegate(path: Path, config_dir: Path | None) -> Assistant:
    """How delegates load an assistant they run tasks on (handed to
    :class:`Delegates`, so delegation does not import this module)."""
    return Assistant.load(path, config_dir=config_dir)


class _HookFailed(Exception):
    """The create hook failed; the message is the one-line error for ``done``."""


class Assistant:
    """An assistant loaded from ``assistants/<id>/``. See the module docstring.

    The searcher is used as given, never changed: :meth:`load` builds one with the
    assistant's handlers (``mcp_resource``) and rerankers (``uses.rerank``); the NL → DSL
    generator of ``uses.query`` reaches db handlers through each stream's context. The
    model's part of a stream (its client, turns, tool calls, the ``next`` hook) is the
    :class:`~agent_search.agent._answering.Answerer` it holds.
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
            log_dir=searcher.config.home / "logs", load_assistant=_load_delegate)
        self.records = RecordStore(searcher.config.home / "records.sqlite")
        self.answerer = Answerer(package, settings, searcher, hooks)
        self._owns_searcher = owns_searcher

    @classmethod
    def load(cls, path: str | Path, *, config_dir: str | Path | None = None,
             builtin_handlers: bool = True,
             overrides: dict[str, Any] | None = None) -> Assistant:
        """Load ``path`` (an assistant folder with ``package.yao`` and optional
        ``hooks.py``). ``config_dir`` defaults to the ``config`` folder next to the
        assistants folder (``assistants/demo`` → ``config``) when there is one.
        ``overrides`` is a last configuration layer (e.g. command-line flags).
        Raises :class:`ConfigError` naming the file (and line or key) on bad input.

        The searcher is built here with what the assistant needs (``mcp_resource``
        handler, builtin and plug-in handlers); the assistant owns and closes it."""
        apath = Path(path)
        if not apath.is_dir():
            raise ConfigError("assistant folder not found", file=str(apath))
        cdir = Path(config_dir) if config_dir is not None else None
        if cdir is None and (apath.resolve().parent.parent / "config").is_dir():
            cdir = apath.resolve().parent.parent / "config"
        package = load_package(apath)
        AgentSettings.load(cdir).check_connectors(package.connector,
                                                  str(apath / "package.yao"))
        config = load_config(cdir, assistant_dir=apath)  # its uses layer included
        if overrides:
            config = config.merged(overrides, file="command line")
        return cls._build(apath, package, load_hooks(apath, apath.name), cdir, config,
                          builtin_handlers=builtin_handlers)

    @classmethod
    def for_database(cls, url: str, *, config_dir: str | Path | None = None) -> Assistant:
        """An assistant without a folder that answers from the database at ``url``
        (SQLAlchemy URL): auto search of ``db`` only, every table of it, the configured
        connector (``ask --db-url``). A bad URL is the db search's error, not a raise."""
        return cls.for_sources(db_url=url, config_dir=config_dir)

    @classmethod
    def for_sources(cls, *, db_url: str | None = None, collections: Sequence[str] = (),
                    config_dir: str | Path | None = None) -> Assistant:
        """An assistant without a folder that answers from the database at ``db_url``
        and/or the knowledge-base ``collections`` (auto search of those alone, web off;
        ``ask --db-url`` / ``ask --collection``), with the configured connector."""
        cdir = Path(config_dir) if config_dir is not None else None
        package, layer, flags = sources_package(db_url, collections)
        config = load_config(cdir).merged(layer, file=flags)
        return cls._build(config.home / "assistants" / package.name, package, Hooks(), cdir,
                          config, builtin_handlers=True)

    @classmethod
    def _build(cls, apath: Path, package: AssistantPackage, hooks: Hooks,
               cdir: Path | None, config: SearchConfig, *, builtin_handlers: bool
               ) -> Assistant:
        settings = AgentSettings.load(cdir)
        delegates = Delegates(settings, assistants_root=apath.parent, config_dir=cdir,
                              log_dir=config.home / "logs", load_assistant=_load_delegate)
        resources = McpResourceHandler(delegates.mcp, allowed=package.mcp_resources)
        searcher = Searcher(config, handlers=[resources])
        if builtin_handlers:
            register_builtin_handlers(searcher.registry, config, config_dir=cdir,
                                      assistant_dir=apath if apath.is_dir() else None)
        return cls(assistant_id=apath.name, path=apath, package=package, hooks=hooks,
                   settings=settings, searcher=searcher, config_dir=cdir,
                   delegates=delegates, owns_searcher=True)

    # -- public API ---------------------------------------------------------------------

    @property
    def tools(self) -> frozenset[str]:
        """The tools this assistant runs itself, of those ``package.yao`` lists in
        ``tools`` (the ``search`` tool): what a chat request may offer the model."""
        return self.answerer.tools

    def run_stream(self, messages: Sequence[Message | str], options: Options | None = None
                   ) -> contextlib.AbstractAsyncContextManager[AsyncIterator[Event]]:
        """``async with assistant.run_stream(messages, options) as events:`` the output
        events of one run (see the module docstring).

        Args:
            messages: the conversation, OpenAI-style ``{"role", "content"}`` dicts (a
                plain string is one user message); ``type: "data"`` content parts of
                the last user message are searched as user data.
            options: this run's options (:class:`Options`): ``search`` (force auto search
                on or off), ``connector``, ``user_id`` / ``team_id`` (permission
                filters of every search), ``request_id``. Defaults when None.

        Returns:
            An async context manager yielding the stream of events: ``search_start`` /
            ``search_result`` / ``search_complete`` while searches run, then ``text``
            deltas, ``citations`` and ``done``. Leaving the block cancels what is still
            running. A failure ends the stream with ``done`` carrying ``error``; the
            stream itself does not raise.

        Raises:
            ValueError: at once, for malformed messages.
        """
        return self._open(validate_conversation(list(messages)), options or Options())

    def stream(self, messages: Sequence[Message | str],
               options: Options | None = None) -> AsyncGenerator[Event, None]:
        """:meth:`run_stream` as an async generator. Raises ValueError at once for
        malformed messages. Stopping early: close it (``await stream.aclose()`` or
        ``contextlib.aclosing``), which cancels the work in flight."""
        return self._generate_events(validate_conversation(list(messages)), options or Options())

    async def _generate_events(self, msgs: list[Message], options: Options
                               ) -> AsyncGenerator[Event, None]:
        async with self._open(msgs, options) as events:
            async for event in events:
                yield event

    @contextlib.asynccontextmanager
    async def _open(self, msgs: list[Message], options: Options
                    ) -> AsyncIterator[MemoryObjectReceiveStream[Event]]:
        channel = StreamSink()
        ctx = self.searcher.context(
            user_id=options.user_id, team_id=options.team_id, request_id=options.request_id,
            deps=self.delegates.deps(self.searcher.config.uses.query))
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
        await self.answerer.aclose()
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
        reading = await self._read(ctx, msgs, options)
        query = reading.query

        user_results = await self._user_data(ctx, msgs, query)
        decision = self._decide(ctx, options, hook, user_results)
        ctx.trace.attributes["decision"] = decision.reason
        auto_results = await self._auto_search(ctx, reading, research=options.research) \
            if decision.run else []

        results = [*user_results, *hctx.search.results, *auto_results]
        found = await self._merge(ctx, query, results)
        llm_msgs = self._compose(msgs, hook, found, ctx)

        citation = ctx.config.citation
        out = TextOut(ctx, CitationTracker(
            [i.citation_id for i in found.references if i.citation_id],
            citation.format, citation.remove_unknown))
        answer = await self.answerer.answer(ctx, options, Question(query, llm_msgs, found), out)
        out.flush()
        references = answer.references
        ctx.trace.attributes["references"] = [reference(i) for i in references]
        grounding, error = await self.answerer.ground_and_next(
            hctx, out, references, found.counts,
            {"messages": llm_msgs, "decision": decision.reason, "error": answer.error})

        used = list(out.tracker.used)
        by_id = {i.citation_id: i for i in references}
        ctx.events.emit(Citations(ctx.request_id, used=used, unknown=list(out.tracker.unknown)))
        ctx.events.emit(Grounding(ctx.request_id, grounding))
        cited = [*used, *added_citations(grounding, used)]
        await self._finish(ctx, sink, Done(
            ctx.request_id, references=[reference(by_id[c]) for c in cited if c in by_id],
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
        with stage(ctx, "create_hook") as node:
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
                    stage_warnings(node).append(f"create hook overrides ignored: {exc}")
        return hook

    async def _read(self, ctx: Context, msgs: list[Message], options: Options) -> Reading:
        """How the last turn is searched (:mod:`agent_search.agent._followup`): the
        builtin reading, or the LLM's rewrite when the assistant has a model; the record
        says which (``follow_up``)."""
        with stage(ctx, "follow_up") as node:
            reading = read_conversation(msgs)
            client, _ = self.answerer.chat_client(options)
            rewrite = self.settings.rewrite
            if client is not None and rewrite.enabled and reading.earlier:
                reading = await rewrite_conversation(client, msgs, float(rewrite.timeout))
            stage_warnings(node).extend(reading.warnings)
            node.attributes["reading"] = reading.record()
        ctx.trace.attributes["query"] = reading.query
        ctx.trace.attributes["follow_up"] = reading.record()
        return reading

    async def _user_data(self, ctx: Context, msgs: list[Message], query: str) -> list[Result]:
        """Searches for the ``type: "data"`` parts of the user's message (source user)."""
        requests, refused, warnings = data_source_requests(msgs, query,
                                                           DataScope.of(ctx.config))
        with stage(ctx, "user_data") as node:
            stage_warnings(node).extend(warnings)
            results = [refused_result(ctx, r) for r in refused]
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

    async def _merge(self, ctx: Context, query: str, results: list[Result]) -> Found:
        """All results merged, deduplicated, weighted and reranked (``uses.rerank``)."""
        references: list[ResultItem] = []
        with stage(ctx, "merge") as node:
            warnings = _note_results(node, results)
            if any(r.items for r in results):
                merged = await self.searcher.merge(
                    results, ctx=ctx, query=query, reranker=ctx.config.uses.rerank or "builtin")
                if merged.rerank_error:
                    warnings.append(merged.rerank_error)
                references = merged.items
        ctx.trace.attributes["references"] = [reference(i) for i in references]
        return Found(references, searched=bool(results),
                     failed=list(dict.fromkeys(r.type for r in results if r.error)),
                     counts=record_counts(results))

    async def _auto_search(self, ctx: Context, reading: Reading, *, research: bool = False
                           ) -> list[Result]:
        """The configured types in parallel. Keyword extraction for a type whose handler
        wants keywords (``keyword_queries``: the web's; maybe a delegate call) runs
        inside that type's task, so it never delays the other searches. A type whose
        handler reads follow-ups itself (``reads_history``: the db's) gets the last turn
        and the earlier user turns; the others the reading's query. With ``research``, a
        research run over the same types instead (its plan, rounds, gaps and budgets in
        the trace's ``research`` stage)."""
        query = reading.query
        if not query:
            with stage(ctx, "auto_search_skipped") as node:
                stage_warnings(node).append(
                    "auto search skipped: the conversation has no user text")
            return []
        config = ctx.config
        types = config.enabled_types() or self.searcher.registry.searchable_types
        types, notices = usable_types(types, self.searcher.registry, config)
        for kind, text in notices:  # not configured is not a failure: no failed search
            ctx.events.emit(Notice(ctx.request_id, kind, text))
        if research:
            return [await self._research(ctx, query, types)]
        results: list[Result | None] = [None] * len(types)

        async def one(i: int, search_type: str, node: TraceNode) -> None:
            fields: dict[str, Any] = {"type": search_type, "query": query}
            if reading.earlier and self.searcher.registry.reads_history(search_type):
                fields = {**fields, "query": reading.last,
                          "options": {"history": reading.earlier}}
            elif self.searcher.registry.keyword_queries(search_type):
                fields |= await keyword_fields(ctx, query, node)
            results[i] = await self.searcher.search(build_request(fields, "auto"),
                                                    ctx=ctx)

        with stage(ctx, "auto_search") as node:
            async with anyio.create_task_group() as tg:
                for i, search_type in enumerate(types):
                    tg.start_soon(one, i, search_type, node)
        return [r for r in results if r is not None]

    async def _research(self, ctx: Context, query: str, types: list[str]) -> Result:
        with stage(ctx, "research") as node:
            report = await self.searcher.research(query, ctx=ctx, types=types)
            node.attributes["research"] = report.model_dump(
                mode="json", include={"planner", "parts", "stopped", "budget"})
            stage_warnings(node).extend(report.warnings)
        return report.to_result()

    def _compose(self, msgs: list[Message], hook: HookResponse, found: Found,
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
            content = build_prompt(with_counts(found.references, found.counts),
                                   ctx.config.citation)
        elif found.searched:
            content = no_reference_prompt(found.failed)
        else:
            return out  # no search ran: nothing to say about references
        return insert_after_system(out, [{"role": "system", "content": content}])


def _note_results(node: TraceNode, results: list[Result]) -> list[str]:
    """The merge stage's record of the searches: their errors, their warnings (each
    named by its type) and the first DSL run; returns the stage's warnings list."""
    node.attributes["errors"] = [search_error(r.type, r.error) for r in results if r.error]
    warnings = stage_warnings(node)
    warnings.extend(f"{r.type}: {w}" for r in results for w in r.warnings)
    node.attributes["dsl"] = next((r.dsl for r in results if r.dsl), None)
    return warnings
