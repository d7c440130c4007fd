"""The searcher: runs requests on their handlers, concurrently, within time limits.

Every search is wrapped the same way, whoever calls it (hook, auto search, tool, CLI):
validate → pick the handler → run it under a timeout and the call's deadline → stamp the
result (source, weight, citation ids, duration) → optional rerank → events and trace.
A handler that raises, overruns or returns garbage yields a Result with ``error`` set;
nothing here raises at the caller for a failed search.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from pydantic import BaseModel, ValidationError

from agent_search._links import safe_url
from agent_search._merge import merge_items
from agent_search._text import scrub
from agent_search.config import SearchConfig, TypeConfig, load_config
from agent_search.context import Context
from agent_search.errors import validation_summary
from agent_search.events import EventSink, SearchComplete, SearchResultEvent, SearchStart
from agent_search.registry import Handler, Registry
from agent_search.rerank import Reranker, ScoreReranker, apply_rerank
from agent_search.trace import TraceNode, activate, first_line
from agent_search.types import Request, Result

if TYPE_CHECKING:
    from agent_search.query.dsl import DSLGenerator

RequestLike = Request | Mapping[str, Any]


class Searcher:
    """Entry point of the Python API. See README "Python API"."""

    def __init__(
        self,
        config: SearchConfig | None = None,
        registry: Registry | None = None,
        *,
        handlers: Sequence[Handler] = (),
        rerankers: Mapping[str, Reranker] | None = None,
    ) -> None:
        self.config = config or SearchConfig()
        self.registry = registry or Registry()
        for handler in handlers:
            self.registry.register(handler)
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
        NL → DSL generators selectable by ``uses.query``) and ``rerankers`` by name."""
        config = load_config(config_dir, assistant_dir=assistant_dir)
        if overrides:
            config = config.merged(overrides, file=overrides_file)
        searcher = cls(config, handlers=handlers, rerankers=rerankers)
        if builtin_handlers:
            from agent_search._builtins import register_builtin_handlers

            register_builtin_handlers(searcher, config_dir=config_dir,
                                      assistant_dir=assistant_dir, generators=generators)
        return searcher

    def context(
        self,
        *,
        user_id: str | None = None,
        team_id: str | None = None,
        request_id: str | None = None,
        events: EventSink | None = None,
        config: SearchConfig | None = None,
    ) -> Context:
        """A fresh context for one user request: its searches share citation ids,
        events and trace."""
        ctx = Context(user_id=user_id, team_id=team_id, config=config or self.config)
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
                shared.deadline = _shared_deadline(ctx, requests, now, cutoff)
                for i in range(1, count):
                    tg.start_soon(self._run, ctx, requests[i], now, cutoff, shared, results, i)
                # the first runs in this task (one task fewer to spawn); it gets to its
                # first await before the others start, so search ids follow request order
                await self._run(ctx, requests[0], now, cutoff, shared, results, 0)
        return [
            _not_started(raw) if result is None else result
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
        reranked, cut to ``top_n`` (default ``rerank.top_n``; 0 = all). Failed searches
        are listed in ``warnings``; a reranker that is missing or fails is replaced by the
        score ranking and reported in ``rerank_error`` (see :func:`apply_rerank`)."""
        ctx = ctx or self.context()
        started = time.perf_counter()
        items = merge_items(results)
        top = ctx.config.rerank.top_n if top_n is None else top_n
        rr = self.rerankers.get(reranker) if isinstance(reranker, str) else reranker
        query = query or (results[0].query if results else "")
        with activate(ctx.trace):
            items, rerank_error = await apply_rerank(
                rr, ctx, query, items, top,
                label=reranker if isinstance(reranker, str) else None)
        return Result(
            type="merged",
            query=query,
            items=items,
            total=len(items),
            duration_ms=round((time.perf_counter() - started) * 1000, 3),
            rerank_error=rerank_error,
            warnings=[f"{r.type}: {r.error}" for r in results if r.error],
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
        errors = "; ".join(f"{r.type}: {r.error}" for r in finished)
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
            rtype, query = _type_and_query(raw)
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
                failed = _failed(request, search_id, _timeout_error(request, shared.deadline,
                                                                   now, cutoff))
                node.finish("failed", failed.error)
                self._finish(ctx, failed, started, out, i)
            else:
                # cancelled from outside (any/race loser, caller gone): report it
                node.finish("cancelled", "cancelled")
                events.emit(
                    SearchComplete(rid, search_id, request.type, 0, _ms(started), "cancelled")
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
        opts = ctx.config.options
        limit = request.limit or ctx.config.limit_for(request.type)
        if limit > opts.max_limit:
            return _failed(
                request, search_id, f"invalid request: limit {limit} is outside 1..{opts.max_limit}"
            )
        request = _with_defaults(request, ctx.config.section(request.type), limit)
        try:
            handler = self.registry.resolve(ctx, request)
        except Exception as exc:  # a handler's can_handle is its code too: its Result
            return _failed(request, search_id, f"{request.type}: {first_line(exc)}")
        if handler is None:
            return _failed(request, search_id, f"unsupported search type: {request.type}")

        deadline = min(cutoff, now + (request.timeout or opts.timeout))
        # a shared scope enforces this limit unless this search's own is shorter
        scope = (anyio.CancelScope(deadline=deadline)
                 if shared is None or deadline < shared.deadline else None)
        result: Any = None
        with activate(node):
            try:
                if scope is None:
                    result = await handler.search(ctx, request)
                else:
                    with scope:
                        result = await handler.search(ctx, request)
            except Exception as exc:  # a handler's failure stays in its Result
                return _failed(request, search_id, f"{request.type}: {first_line(exc)}")
        if (scope is not None and scope.cancelled_caught) or anyio.current_time() > deadline:
            # also when the handler blocked the event loop past its limit, so no scope
            # could fire: a late answer is reported as the timeout it is
            return _failed(request, search_id, _timeout_error(request, deadline, now, cutoff))
        if not isinstance(result, Result):
            return _failed(
                request,
                search_id,
                f"{request.type}: handler returned {type(result).__name__}, not a Result",
            )

        # relevance floor before anything else: what is under it never reaches a merge,
        # an event or a prompt, and the Result says how much was dropped
        items = result.items
        floor = request.min_score
        if floor is None:
            floor = ctx.config.min_score_for(request.type)
        if floor and items:
            kept = [item for item in items if item.score >= floor]
            if len(kept) < len(items):
                _store(result, dropped_below_floor=result.dropped_below_floor
                       + len(items) - len(kept))
                items[:] = kept
        # stamp: the searcher, not the handler, owns identity, source, weight and ids
        if len(items) > limit:
            del items[limit:]
        rtype, source = request.type, request.source
        _store(result, type=rtype, query=request.query, source=source,
               search_id=search_id, total=max(result.total, len(items)))
        weight = ctx.config.weights.for_source(source)
        first_id = ctx.citations.reserve(len(items))
        unsafe_urls = 0
        for n, item in enumerate(items, first_id):
            values = item.__dict__
            values["source"] = source
            values["weight"] = weight
            values["citation_id"] = str(n)
            if not values["type"]:
                values["type"] = rtype
            url = values["url"]
            if url is not None:
                values["url"] = safe = safe_url(url)
                unsafe_urls += safe is None
            item.__pydantic_fields_set__.update(_STAMPED_FIELDS)
        if unsafe_urls:
            result.warnings.append(
                f"{rtype}: removed {unsafe_urls} item url(s) that were not plain http(s) links"
            )
        if request.rerank is not None and items:
            with activate(node):
                result.items, result.rerank_error = await apply_rerank(
                    self.rerankers.get(request.rerank.type), ctx, request.query, items,
                    request.rerank.top_k, label=request.rerank.type)
        return result

    def _finish(
        self, ctx: Context, result: Result, started: float, out: list[Result | None] | None,
        i: int,
    ) -> Result:
        if out is not None:
            out[i] = result
        return self._complete(ctx, result, started)

    def _complete(self, ctx: Context, result: Result, started: float) -> Result:
        duration = _ms(started)
        _store(result, duration_ms=duration)
        emit = ctx.events.emit
        rid, sid = ctx.request_id, result.search_id or ""
        items = result.items
        for item in items:
            emit(SearchResultEvent(rid, sid, item.citation_id, item.title, item.url, item.score))
        emit(SearchComplete(rid, sid, result.type, len(items), duration, result.error,
                            result.dropped_below_floor))
        return result


_STAMPED_FIELDS = ("source", "weight", "citation_id", "type")


def _shared_deadline(
    ctx: Context, requests: Sequence[RequestLike], now: float, cutoff: float
) -> float:
    """The latest time limit among ``requests``: no search is cut short by the shared
    scope. A limit that can't be read before validation makes it the call's cutoff."""
    longest = ctx.config.options.timeout
    for raw in requests:
        if isinstance(raw, Request):
            seconds: Any = raw.timeout
        else:
            seconds = raw.get("timeout") if isinstance(raw, Mapping) else None
        if seconds is None:
            continue
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            return cutoff
        longest = max(longest, float(seconds))
    return min(cutoff, now + longest)


def _timeout_error(request: Request, deadline: float, now: float, cutoff: float) -> str:
    why = "deadline exceeded" if deadline >= cutoff else "timed out"
    return f"{request.type}: {why} after {_fmt_seconds(max(0.0, deadline - now))}"


def _type_and_query(raw: RequestLike) -> tuple[str, str]:
    """What a request says its type and query are, even one that does not validate."""
    if isinstance(raw, Request):
        return raw.type, raw.query
    if isinstance(raw, Mapping):  # echoed in the error Result: must serialise
        return scrub(str(raw.get("type", "")))[:64], scrub(str(raw.get("query", "")))
    return "", ""


def _not_started(raw: RequestLike) -> Result:
    """The Result of a search whose task was cancelled before it could start."""
    rtype, query = _type_and_query(raw)
    return Result(type=rtype, query=query, error=f"{rtype}: deadline exceeded before it started")


def _failed(request: Request, search_id: str, message: str) -> Result:
    return Result(
        type=request.type,
        query=request.query,
        source=request.source,
        search_id=search_id,
        error=message,
    )


def _with_defaults(request: Request, section: TypeConfig | None, limit: int) -> Request:
    """``request`` with its limit and the section's ``request_defaults`` filled in where
    it leaves them empty: a shallow copy (the caller's request is not changed), cheaper
    than ``model_copy`` on the hot path, and no copy when nothing is missing."""
    values: dict[str, Any] = {} if request.limit is not None else {"limit": limit}
    if section is not None:
        for name in section.request_defaults:
            if not getattr(request, name):
                default = getattr(section, name)
                if default:
                    values[name] = list(default) if isinstance(default, list) else default
    if not values:
        return request
    copy = request.__copy__()
    _store(copy, **values)
    return copy


def _store(model: BaseModel, **values: Any) -> None:
    """Set already-valid field values without pydantic's validating ``__setattr__``,
    which costs more than the rest of a search's bookkeeping on the hot path."""
    model.__dict__.update(values)
    model.__pydantic_fields_set__.update(values)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _fmt_seconds(s: float) -> str:
    return f"{s:.3g}s" if math.isfinite(s) else "∞"
