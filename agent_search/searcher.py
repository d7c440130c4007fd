"""The searcher: runs requests on their handlers, concurrently, within time limits.

Every search is wrapped the same way, whoever calls it (hook, auto search, tool, CLI):
validate → pick the handler → run it under a timeout and the call's deadline → stamp the
result (source, weight, citation ids, duration) → optional rerank → events and trace.
A handler that raises, overruns or returns garbage yields a Result with ``error`` set;
nothing here raises at the caller for a failed search.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from pydantic import ValidationError

from agent_search._assembly import loader
from agent_search._merge import keep_each_best, merge_items
from agent_search._results import (
    RequestLike,
    failed_result,
    ms,
    not_started,
    search_error,
    shared_deadline,
    stamp,
    store,
    timeout_error,
    type_and_query,
    with_defaults,
)
from agent_search.cache import ResultCache
from agent_search.config import SearchConfig, TypeConfig
from agent_search.context import Context
from agent_search.deps import Deps, Layered
from agent_search.errors import ConfigError, InputError, validation_summary
from agent_search.events import EventSink, SearchComplete, SearchResultEvent, SearchStart
from agent_search.registry import Handler, Registry
from agent_search.rerank import Reranker, ScoreReranker, apply_rerank, resolve_reranker
from agent_search.trace import TraceNode, activate, first_line, message_line
from agent_search.types import Request, Result, ResultItem

if TYPE_CHECKING:
    from agent_search.config import ResearchConfig
    from agent_search.query.dsl import DSLGenerator
    from agent_search.research import Planner, ResearchResult

class Searcher:
    """Entry point of the Python API: runs requests on their handlers, concurrently,
    within time limits, and merges their results.

    Args:
        config: the configuration (:class:`SearchConfig`); built-in defaults when None.
            :meth:`from_config` loads it from files.
        registry: the handlers by type; an empty one when None.
        handlers: handlers to register on it, in order.
        rerankers: rerankers of your own by name, usable as a request's
            ``rerank: {type}`` and as ``uses.rerank`` (``score``, the builtin ranking,
            is always there).
        generators: NL → DSL generators by ``uses.query`` name, handed to every run in
            ``ctx.deps``.

    Nothing here raises at the caller for a failed search: the Result's ``error`` says
    ``"<type>: <message>"``.
    """

    def __init__(
        self,
        config: SearchConfig | None = None,
        registry: Registry | None = None,
        *,
        handlers: Sequence[Handler] = (),
        rerankers: Mapping[str, Reranker] | None = None,
        generators: Mapping[str, DSLGenerator] | None = None,
    ) -> None:
        self.generators: dict[str, DSLGenerator] = dict(generators or {})
        self.config = config or SearchConfig()
        self.registry = registry or Registry()
        for handler in handlers:
            self.registry.register(handler)
        self.cache = ResultCache()
        """Results kept for identical searches, when ``cache.enabled`` (off by default)."""
        self.rerankers: dict[str, Reranker] = {"score": ScoreReranker()}
        if rerankers:
            self.rerankers.update(rerankers)

    @classmethod
    def from_config(
        cls,
        config_dir: str | Path | None = None,
        *,
        assistant_dir: str | Path | None = None,
        overrides: Mapping[str, Any] | None = None,
        overrides_file: str | None = None,
        builtin_handlers: bool = True,
        handlers: Sequence[Handler] = (),
        rerankers: Mapping[str, Reranker] | None = None,
        generators: Mapping[str, DSLGenerator] | None = None,
    ) -> Searcher:
        """Load the configuration layers, merge ``overrides`` on top (a later layer, e.g.
        command-line flags; ``overrides_file`` names it in errors) and build the searcher
        with everything it uses: ``handlers`` of the caller's own, then the builtin
        handlers (built from the final configuration; the db handler gets ``generators``,
        NL → DSL generators selectable by ``uses.query``) and ``rerankers`` by name.
        The files are read by :mod:`agent_search.loader`, above the core."""
        searcher: Searcher = loader()(
            cls, config_dir, assistant_dir=assistant_dir, overrides=overrides,
            overrides_file=overrides_file, builtin_handlers=builtin_handlers,
            handlers=handlers, rerankers=rerankers, generators=generators)
        return searcher

    def context(
        self,
        *,
        user_id: str | None = None,
        team_id: str | None = None,
        request_id: str | None = None,
        events: EventSink | None = None,
        config: SearchConfig | None = None,
        deps: Deps | None = None,
    ) -> Context:
        """A fresh context for one user request: its searches share citation ids,
        events and trace.

        Args:
            user_id: who is asking (permission filters of every handler read it).
            team_id: the asker's team (permission filters).
            request_id: the request's id; a random one when None.
            events: where search events go; none are kept when None.
            config: this request's configuration; the searcher's when None.
            deps: what the run hands to handlers (:class:`~agent_search.deps.Deps`:
                generators, keyword extractor, reranker resolver); filled once, here.
                Default: the builtin extractor, and the generators ``from_config`` was
                given; given deps keep their generators over those. Generators reach
                handlers only this way.
        """
        if deps is None:
            deps = Deps(generators=dict(self.generators))
        elif self.generators:  # the run's own first, then the searcher's
            deps = replace(deps, generators=Layered(deps.generators, self.generators))
        ctx = Context(user_id=user_id, team_id=team_id, config=config or self.config,
                      deps=deps)
        if request_id:
            ctx.request_id = request_id
        if events is not None:
            ctx.events = events
        return ctx

    async def aclose(self) -> None:
        """Close what handlers hold open (clients, engines): each handler that has an
        ``aclose()`` coroutine method gets it called once."""
        seen: set[int] = set()
        for search_type in self.registry.types:
            for handler in self.registry.handlers(search_type):
                aclose = getattr(handler, "aclose", None)
                if aclose is not None and id(handler) not in seen:
                    seen.add(id(handler))
                    await aclose()

    async def __aenter__(self) -> Searcher:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- single and multiple searches ------------------------------------------------

    async def search(self, request: RequestLike, *, ctx: Context | None = None) -> Result:
        """Run one search.

        Args:
            request: a :class:`Request` or a mapping of its fields (validated here; a bad
                one is a Result whose error starts ``invalid request:``).
            ctx: the request's context (citation ids, events, trace, identity, deps);
                a fresh :meth:`context` when None.

        Returns:
            The :class:`Result`: items floored, cut to the limit, stamped with source,
            weight and request-unique citation ids, and reranked when the request asks;
            on failure ``error`` is ``"<type>: <message>"`` and ``items`` is empty.
        """
        ctx = ctx or self.context()
        now = anyio.current_time()
        return await self._run(ctx, request, now, self._cutoff(ctx, None, now))

    async def search_many(
        self,
        requests: Sequence[RequestLike],
        *,
        ctx: Context | None = None,
        deadline: float | None = None,
    ) -> list[Result]:
        """Run all requests concurrently; results in request order. ``deadline`` (seconds,
        default ``options.deadline``) bounds the whole call."""
        ctx = ctx or self.context()
        now = anyio.current_time()
        cutoff = self._cutoff(ctx, deadline, now)
        count = len(requests)
        results: list[Result | None] = [None] * count
        if count == 1:
            results[0] = await self._run(ctx, requests[0], now, cutoff)
        elif count > 1:
            async with anyio.create_task_group() as tg:
                # The task group's own scope enforces the timeout all these searches share
                # (the usual case: the configured one), instead of a scope per search; a
                # search with a shorter limit of its own still gets its own in _execute.
                shared = tg.cancel_scope
                shared.deadline = shared_deadline(ctx, requests, now, cutoff)
                for i in range(1, count):
                    tg.start_soon(self._run, ctx, requests[i], now, cutoff, shared, results, i)
                # the first runs in this task (one task fewer to spawn); it gets to its
                # first await before the others start, so search ids follow request order
                await self._run(ctx, requests[0], now, cutoff, shared, results, 0)
        return [
            not_started(raw) if result is None else result
            for raw, result in zip(requests, results, strict=True)
        ]

    async def any(
        self,
        requests: Sequence[RequestLike],
        *,
        ctx: Context | None = None,
        deadline: float | None = None,
    ) -> Result:
        """The first successful result; the other searches are cancelled. If all fail,
        a Result whose error lists every failure."""
        return await self._first(requests, ctx, deadline, lambda r: r.ok, "any")

    async def race(
        self,
        requests: Sequence[RequestLike],
        *,
        ctx: Context | None = None,
        deadline: float | None = None,
    ) -> Result:
        """The first finished result, success or not; the others are cancelled."""
        return await self._first(requests, ctx, deadline, lambda r: True, "race")

    async def research(
        self,
        question: str,
        *,
        ctx: Context | None = None,
        types: Sequence[str] = (),
        settings: ResearchConfig | Mapping[str, Any] | None = None,
        planner: Planner | None = None,
        limit: int | None = None,
    ) -> ResearchResult:
        """Search until every part of ``question`` is covered or a budget is spent: rounds
        of parallel searches over ``types`` (default ``research.types``, else the types
        enabled for auto search, else every registered one), each round searching the
        parts no reference covers yet. ``settings`` overrides ``research`` (budgets,
        planner; a bad value raises :class:`InputError` naming it). Never raises for a
        failed search; see :mod:`agent_search.research`."""
        from agent_search.config import ResearchConfig
        from agent_search.research import research

        ctx = ctx or self.context()
        if isinstance(settings, Mapping):
            try:
                settings = ResearchConfig.model_validate(
                    {**ctx.config.research.model_dump(), **settings})
            except ValidationError as exc:
                raise InputError(f"research settings: {validation_summary(exc, '')}"
                                 ) from None
        return await research(self, question, ctx=ctx, settings=settings, types=types,
                              planner=planner, limit=limit)

    async def merge(
        self,
        results: Sequence[Result],
        *,
        ctx: Context | None = None,
        query: str | None = None,
        reranker: str | Reranker = "score",
        top_n: int | None = None,
    ) -> Result:
        """One Result from several: items deduplicated (strongest source wins), weighted,
        reranked, cut to ``top_n`` (default ``rerank.top_n``; 0 = all) where every search
        that found something keeps its best item (:func:`keep_each_best`). Failed searches
        are listed in ``warnings``; a reranker that is missing or fails is replaced by the
        score ranking and reported in ``rerank_error`` (see :func:`apply_rerank`)."""
        ctx = ctx or self.context()
        started = time.perf_counter()
        items = merge_items(results)
        top = ctx.config.rerank.top_n if top_n is None else top_n
        query = query or (results[0].query if results else "")
        with activate(ctx.trace):
            items, rerank_error = await self._rerank(ctx, reranker, query, items, 0)
        items = keep_each_best(items, top, results)
        return Result(
            type="merged",
            query=query,
            items=items,
            total=len(items),
            duration_ms=round((time.perf_counter() - started) * 1000, 3),
            rerank_error=rerank_error,
            warnings=[search_error(r.type, r.error) for r in results if r.error],
        )

    # -- internals ---------------------------------------------------------------------

    def _cutoff(self, ctx: Context, deadline: float | None, now: float) -> float:
        return now + (ctx.config.options.deadline if deadline is None else deadline)

    async def _first(
        self,
        requests: Sequence[RequestLike],
        ctx: Context | None,
        deadline: float | None,
        accept: Callable[[Result], bool],
        name: str,
    ) -> Result:
        ctx = ctx or self.context()
        if not requests:
            return Result(type=name, query="", error=f"{name}: no requests given")
        now = anyio.current_time()
        cutoff = self._cutoff(ctx, deadline, now)
        finished: list[Result] = []
        winner: list[Result] = []

        async with anyio.create_task_group() as tg:

            async def run(req: RequestLike) -> None:
                result = await self._run(ctx, req, now, cutoff)
                finished.append(result)
                if not winner and accept(result):
                    winner.append(result)
                    tg.cancel_scope.cancel()

            for req in requests:
                tg.start_soon(run, req)

        if winner:
            return winner[0]
        last = finished[-1]
        errors = "; ".join(search_error(r.type, r.error) for r in finished)
        return last.model_copy(update={"error": f"all {len(finished)} searches failed: {errors}"})

    async def _run(
        self,
        ctx: Context,
        raw: RequestLike,
        now: float,
        cutoff: float,
        shared: anyio.CancelScope | None = None,
        out: list[Result | None] | None = None,
        i: int = 0,
    ) -> Result:
        """One search, whatever happens: validation, events, trace, then :meth:`_execute`.
        ``now`` is when the call began (the per-search timeout counts from it) and
        ``cutoff`` the call's deadline, both on anyio's clock. ``shared`` is the scope that
        enforces this search's time limit when it has none of its own. With ``out`` the
        Result also goes to ``out[i]`` (tasks of a fan-out return nothing), also when the
        shared scope fires: then the cancellation goes on to that scope."""
        started = time.perf_counter()
        search_id = ctx.next_search_id()
        events = ctx.events
        rid = ctx.request_id
        try:
            request = raw if isinstance(raw, Request) else Request.model_validate(raw)
        except ValidationError as exc:
            rtype, query = type_and_query(raw)
            events.emit(SearchStart(rid, search_id, rtype, query))
            failed = Result(
                type=rtype,
                query=query,
                search_id=search_id,
                error=f"invalid request: {validation_summary(exc)}",
            )
            return self._finish(ctx, failed, started, out, i)
        events.emit(SearchStart(rid, search_id, request.type, request.query))
        node = TraceNode(
            "search",
            {
                "search_type": request.type,
                "query": request.query,
                "search_id": search_id,
                "source": request.source,
            },
        )
        ctx.trace.children.append(node)
        try:
            result = await self._execute(ctx, request, search_id, now, cutoff, node, shared)
        except BaseException:
            if (shared is not None and out is not None and shared.cancel_called
                    and anyio.current_time() >= shared.deadline):
                # the time limit this search shares with the others ran out: a timeout
                # (not the task group cancelling the rest after a search's own bug)
                failed = failed_result(
                    request, search_id, timeout_error(request, shared.deadline, now, cutoff))
                node.finish("failed", failed.error)
                self._finish(ctx, failed, started, out, i)
            else:
                # cancelled from outside (any/race loser, caller gone): report it
                node.finish("cancelled", "cancelled")
                events.emit(
                    SearchComplete(rid, search_id, request.type, 0, ms(started), "cancelled")
                )
            raise
        node.attributes["result_count"] = len(result.items)
        node.finish("success" if result.error is None else "failed", result.error)
        return self._finish(ctx, result, started, out, i)

    async def _execute(
        self,
        ctx: Context,
        request: Request,
        search_id: str,
        now: float,
        cutoff: float,
        node: TraceNode,
        shared: anyio.CancelScope | None,
    ) -> Result:
        prepared = self._prepare(ctx, request, search_id)
        if isinstance(prepared, Result):
            return prepared
        request, handler, limit, section = prepared
        deadline = min(cutoff, now + (request.timeout or ctx.config.options.timeout))
        scope = _own_scope(deadline, shared)
        with activate(node):
            try:
                result = await self._call(ctx, request, handler, scope)
            except Exception as exc:  # a handler's failure stays in its Result
                return _handler_failed(request, search_id, first_line(exc))
        if _timed_out(scope, deadline):
            return failed_result(request, search_id, timeout_error(request, deadline, now, cutoff))
        if not isinstance(result, Result):
            return _handler_failed(request, search_id,
                                   f"handler returned {type(result).__name__}, not a Result")
        stamp(ctx, request, _own_words(request, result), search_id, limit, section)
        if request.rerank is not None and result.items:
            with activate(node):
                result.items, result.rerank_error = await self._rerank(
                    ctx, request.rerank.type, request.query, result.items,
                    request.rerank.top_k)
        return result

    def _prepare(self, ctx: Context, request: Request, search_id: str
                 ) -> tuple[Request, Handler, int, TypeConfig | None] | Result:
        """The request with its limit and options filled once, its handler, limit and
        section — or the Result saying why it cannot run, before the search costs
        anything."""
        config = ctx.config
        section = config.section(request.type)  # once: limit, defaults and floor
        limit = request.limit or config.limit_in(section)
        if limit > config.options.max_limit:
            return failed_result(request, search_id, "invalid request: limit "
                                 f"{limit} is outside 1..{config.options.max_limit}")
        try:
            handler = self.registry.resolve(ctx, request)
        except Exception as exc:  # a handler's can_handle is its code too: its Result
            return _handler_failed(request, search_id, first_line(exc))
        if handler is None:
            return failed_result(request, search_id, f"unsupported search type: {request.type}")
        try:
            filled = with_defaults(request, section, limit, handler, config)
        except (InputError, ConfigError, ValueError) as exc:
            return failed_result(request, search_id,
                                 search_error(request.type, " ".join(str(exc).split())))
        return filled, handler, limit, section

    async def _call(self, ctx: Context, request: Request, handler: Handler,
                    scope: anyio.CancelScope | None) -> Any:
        """The handler's answer, through the result cache when it keeps this type."""
        cache = ctx.config.cache
        if cache.enabled and cache.caches(request.type):
            return await self._cached(ctx, request, handler, scope)
        return await _search_under(scope, handler, ctx, request)

    async def _cached(self, ctx: Context, request: Request, handler: Handler,
                      scope: anyio.CancelScope | None) -> Any:
        """The handler's Result through the result cache (see :mod:`agent_search.cache`):
        kept, shared with an identical search under way, or searched (under ``scope``)."""

        async def call() -> Any:
            return await _search_under(scope, handler, ctx, request)

        key = await self.cache.key(ctx, request, handler)
        if key is None:
            return await call()
        settings = ctx.config.cache
        return await self.cache.run(key, request.type, call, float(settings.ttl),
                                    settings.max_entries)

    async def _rerank(self, ctx: Context, reranker: str | Reranker, query: str,
                      items: list[ResultItem], top_n: int
                      ) -> tuple[list[ResultItem], str | None]:
        """Rerank under the one policy (:func:`apply_rerank`), a name resolved the one way
        (:func:`resolve_reranker`): the same for a request's ``rerank`` and a merge."""
        if not isinstance(reranker, str):
            return await apply_rerank(reranker, ctx, query, items, top_n)
        try:
            found, why = resolve_reranker(reranker, self.rerankers, ctx), "not configured"
        except Exception as exc:  # a delegate named but not buildable: its one line
            found, why = None, message_line(exc)
        label = getattr(found, "label", None) or reranker  # a delegate's own: "agent:<id>"
        return await apply_rerank(found, ctx, query, items, top_n, label=label, missing=why)

    def _finish(
        self, ctx: Context, result: Result, started: float, out: list[Result | None] | None,
        i: int,
    ) -> Result:
        if out is not None:
            out[i] = result
        return self._complete(ctx, result, started)

    def _complete(self, ctx: Context, result: Result, started: float) -> Result:
        duration = ms(started)
        store(result, duration_ms=duration)
        emit = ctx.events.emit
        rid, sid = ctx.request_id, result.search_id or ""
        items = result.items
        for item in items:
            emit(SearchResultEvent(rid, sid, item.citation_id, item.title, item.url, item.score))
        emit(SearchComplete(rid, sid, result.type, len(items), duration, result.error,
                            result.dropped_below_floor))
        return result


def _own_scope(deadline: float, shared: anyio.CancelScope | None) -> anyio.CancelScope | None:
    """The scope enforcing a search's ``deadline``: none when the ``shared`` one (the
    fan-out's) does, i.e. unless this search's own limit is shorter."""
    if shared is None or deadline < shared.deadline:
        return anyio.CancelScope(deadline=deadline)
    return None


def _timed_out(scope: anyio.CancelScope | None, deadline: float) -> bool:
    """Did the search run out of time? Also when the handler blocked the event loop past
    its limit, so no scope could fire: a late answer is reported as the timeout it is."""
    return (scope is not None and scope.cancelled_caught) or anyio.current_time() > deadline


def _own_words(request: Request, result: Result) -> Result:
    """``result`` with the handler's error, if any, prefixed with its type: the
    handler's own words, on the one boundary."""
    if result.error is not None:
        store(result, error=search_error(request.type, result.error))
    return result


async def _search_under(scope: anyio.CancelScope | None, handler: Handler, ctx: Context,
                        request: Request) -> Any:
    """The handler's search, under ``scope`` when there is one (``None`` when the scope
    fired: the caller reports the timeout)."""
    if scope is None:
        return await handler.search(ctx, request)
    with scope:
        return await handler.search(ctx, request)
    return None


def _handler_failed(request: Request, search_id: str, message: str) -> Result:
    """A Result for what a handler's own code did wrong, worded by :func:`search_error`."""
    return failed_result(request, search_id, search_error(request.type, message))
