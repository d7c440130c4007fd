from __future__ import annotations

import time

import anyio
import pytest

from agent_search import ConfigError, ListSink, Request, Result, ResultItem, SearchConfig, Searcher
from agent_search.events import SearchComplete, SearchResultEvent, SearchStart

from ..support.handlers import FailingHandler, StaticHandler, web_items

pytestmark = pytest.mark.anyio


def make_searcher(*handlers: object, **options: float) -> Searcher:
    config = SearchConfig().merged({"options": options}) if options else SearchConfig()
    s = Searcher(config)
    for h in handlers:
        s.registry.register(h)  # type: ignore[arg-type]
    return s


async def test_search_stamps_source_weight_citations_and_limit() -> None:
    s = make_searcher(StaticHandler("web", web_items(15)))
    r = await s.search(Request(type="web", query="q", limit=5, source="hook"))
    assert r.error is None and r.source == "hook"
    assert len(r.items) == 5 and r.total == 15
    assert [i.citation_id for i in r.items] == ["1", "2", "3", "4", "5"]
    assert {i.source for i in r.items} == {"hook"}
    assert {i.weight for i in r.items} == {0.8}
    assert all(i.type == "web" for i in r.items)


async def test_default_limit_is_resolved_before_the_handler_runs() -> None:
    h = StaticHandler("web", web_items(3))
    s = make_searcher(h)
    await s.search({"type": "web", "query": "q"})
    assert h.requests[0].limit == 10


async def test_limit_above_configured_max_is_an_error_result() -> None:
    s = make_searcher(StaticHandler("web"), max_limit=50)
    r = await s.search(Request(type="web", query="q", limit=51))
    assert r.error == "invalid request: limit 51 is outside 1..50"


async def test_unregistered_type_is_a_result_error_not_an_exception() -> None:
    r = await Searcher().search(Request(type="video", query="cats"))
    assert r.error == "unsupported search type: video" and r.items == []


async def test_invalid_request_dict_becomes_an_error_result() -> None:
    r = await Searcher().search({"type": "web", "query": "  "})
    assert r.error is not None and r.error.startswith("invalid request: query must not be empty")


async def test_first_handler_that_can_handle_wins_and_custom_types_work() -> None:
    declines = StaticHandler("video", web_items(1, prefix="http://a/"), accept=False)
    accepts = StaticHandler("video", web_items(1, prefix="http://b/"))
    s = make_searcher(declines, accepts)
    r = await s.search(Request(type="video", query="q"))
    assert r.items[0].url == "http://b/0" and not declines.requests


async def test_register_first_puts_a_handler_ahead() -> None:
    a, b = (
        StaticHandler("web", web_items(1, prefix="http://a/")),
        StaticHandler("web", web_items(1, prefix="http://b/")),
    )
    s = make_searcher(a)
    s.registry.register(b, first=True)
    assert (await s.search(Request(type="web", query="q"))).items[0].url == "http://b/0"


async def test_registering_a_non_handler_fails_clearly() -> None:
    with pytest.raises(TypeError, match=r"not a Handler|no search type"):
        Searcher().registry.register(object())  # type: ignore[arg-type]


async def test_handler_exception_becomes_one_line_error_with_duration() -> None:
    s = make_searcher(FailingHandler("kb", delay=0.02))
    r = await s.search(Request(type="kb", query="q"))
    assert r.error == "kb: RuntimeError: backend exploded"
    assert "\n" not in r.error and r.duration_ms >= 15


async def test_handler_returning_garbage_is_reported() -> None:
    class Garbage:
        type = "kb"

        def can_handle(self, ctx: object, req: object) -> bool:
            return True

        async def search(self, ctx: object, req: object) -> object:
            return {"items": []}

    r = await make_searcher(Garbage()).search(Request(type="kb", query="q"))
    assert r.error == "kb: handler returned dict, not a Result"


async def test_timeout_cancels_the_handler_and_says_so() -> None:
    h = StaticHandler("web", web_items(1), delay=5)
    s = make_searcher(h)
    started = time.perf_counter()
    r = await s.search(Request(type="web", query="q", timeout=0.05))
    assert time.perf_counter() - started < 3  # the slow one would take 5 s
    assert r.error == "web: timed out after 0.05s"
    assert h.cancelled == 1 and h.finished == 0


async def test_deadline_bounds_the_whole_call_and_others_complete() -> None:
    slow, fast = StaticHandler("web", web_items(1), delay=5), StaticHandler("kb", web_items(2))
    s = make_searcher(slow, fast)
    started = time.perf_counter()
    results = await s.search_many(
        [Request(type="web", query="q"), Request(type="kb", query="q")], deadline=0.1
    )
    assert time.perf_counter() - started < 3  # the slow one would take 5 s
    assert results[0].error is not None and "deadline exceeded" in results[0].error
    assert results[1].error is None and len(results[1].items) == 2


async def test_shared_timeout_in_search_many_reports_timeouts_not_cancellations() -> None:
    # every request uses the configured timeout, so one scope enforces it for all three
    slow_web = StaticHandler("web", web_items(1), delay=5)
    slow_db = StaticHandler("db", web_items(1), delay=5)
    fast = StaticHandler("kb", web_items(2))
    s = make_searcher(slow_web, fast, slow_db, timeout=0.1)
    sink = ListSink()
    ctx = s.context(events=sink)
    started = time.perf_counter()
    results = await s.search_many(
        [Request(type=t, query="q") for t in ("web", "kb", "db")], ctx=ctx
    )
    assert time.perf_counter() - started < 3  # the slow one would take 5 s
    assert [r.error for r in results] == [
        "web: timed out after 0.1s", None, "db: timed out after 0.1s"
    ]
    assert [r.search_id for r in results] == ["s1", "s2", "s3"]
    assert len(results[1].items) == 2
    assert slow_web.cancelled == 1 and slow_db.cancelled == 1
    completes = {e.id: e.error for e in sink.events if isinstance(e, SearchComplete)}
    assert completes == {
        "s1": "web: timed out after 0.1s", "s2": None, "s3": "db: timed out after 0.1s"
    }
    assert [n.status for n in ctx.trace.find("search")] == ["failed", "success", "failed"]


async def test_a_longer_own_timeout_is_not_cut_by_the_shared_one() -> None:
    patient = StaticHandler("web", web_items(1), delay=0.3)
    s = make_searcher(patient, StaticHandler("kb", web_items(1)), timeout=0.1)
    results = await s.search_many(
        [Request(type="web", query="q", timeout=2), Request(type="kb", query="q")]
    )
    assert [r.error for r in results] == [None, None]
    assert patient.finished == 1


async def test_a_shorter_own_timeout_fires_first_and_the_others_go_on() -> None:
    hasty = StaticHandler("web", web_items(1), delay=5)
    steady = StaticHandler("kb", web_items(1), delay=0.2)
    s = make_searcher(hasty, steady, timeout=3)
    results = await s.search_many(
        [{"type": "web", "query": "q", "timeout": 0.05}, {"type": "kb", "query": "q"}]
    )
    assert results[0].error == "web: timed out after 0.05s"
    assert results[1].error is None and steady.finished == 1


async def test_unreadable_timeout_in_a_dict_falls_back_safely() -> None:
    # "0.05" is validated (and coerced) later; the shared scope then uses the call cutoff
    slow = StaticHandler("web", web_items(1), delay=5)
    s = make_searcher(slow, StaticHandler("kb", web_items(1)), timeout=3)
    results = await s.search_many(
        [{"type": "web", "query": "q", "timeout": "0.05"}, {"type": "kb", "query": "q"}]
    )
    assert results[0].error == "web: timed out after 0.05s"
    assert results[1].error is None


async def test_search_many_is_concurrent_and_keeps_request_order() -> None:
    """Each handler waits until all three have started: run one after another they would
    wait forever (cut at 5 s), so finishing at all proves they ran at the same time; the
    last to start finishes first, yet the results keep the request order."""
    started: list[str] = []
    everyone_in = anyio.Event()

    class Barrier:
        def __init__(self, type_: str) -> None:
            self.type = type_

        def can_handle(self, ctx: object, request: object) -> bool:
            return True

        async def search(self, ctx: object, request: Request) -> Result:
            started.append(self.type)
            if len(started) == 3:
                everyone_in.set()
            await everyone_in.wait()
            return Result(type=self.type, query=request.query,
                          items=web_items(1, prefix=f"http://{self.type}/"))

    s = make_searcher(*(Barrier(t) for t in "abc"))
    with anyio.fail_after(5):
        results = await s.search_many([{"type": t, "query": "q"} for t in "abc"])
    assert [r.type for r in results] == ["a", "b", "c"]
    assert all(r.ok for r in results) and sorted(started) == ["a", "b", "c"]


async def test_one_failing_search_does_not_break_the_others() -> None:
    s = make_searcher(FailingHandler("web"), StaticHandler("kb", web_items(2)))
    results = await s.search_many(
        [
            {"type": "web", "query": "q"},
            {"type": "kb", "query": "q"},
            {"type": "nope", "query": "q"},
        ]
    )
    assert results[0].error and results[1].ok and results[2].error


async def test_any_returns_first_success_and_cancels_the_rest() -> None:
    failing = FailingHandler("a")
    winner = StaticHandler("b", web_items(1), delay=0.05)
    loser = StaticHandler("c", web_items(1), delay=5)
    sink = ListSink()
    s = make_searcher(failing, winner, loser)
    ctx = s.context(events=sink)
    started = time.perf_counter()
    r = await s.any([{"type": t, "query": "q"} for t in "abc"], ctx=ctx)
    assert time.perf_counter() - started < 3  # the slow one would take 5 s
    assert r.type == "b" and r.ok
    assert loser.cancelled == 1 and loser.finished == 0
    completes = [e for e in sink.events if isinstance(e, SearchComplete)]
    assert {e.type: e.error for e in completes}["c"] == "cancelled"


async def test_any_when_all_fail_lists_every_error() -> None:
    s = make_searcher(FailingHandler("a"), FailingHandler("b", message="nope"))
    r = await s.any([{"type": "a", "query": "q"}, {"type": "b", "query": "q"}])
    assert r.error is not None and r.error.startswith("all 2 searches failed")
    assert "backend exploded" in r.error and "nope" in r.error


async def test_race_returns_first_finished_even_a_failure() -> None:
    slow = StaticHandler("b", web_items(1), delay=5)
    s = make_searcher(FailingHandler("a", delay=0.02), slow)
    r = await s.race([{"type": "a", "query": "q"}, {"type": "b", "query": "q"}])
    assert r.type == "a" and r.error is not None
    assert slow.cancelled == 1


async def test_events_are_emitted_in_order_with_request_id() -> None:
    sink = ListSink()
    s = make_searcher(StaticHandler("web", web_items(3)))
    ctx = s.context(events=sink, request_id="req-1")
    await s.search(Request(type="web", query="hello"), ctx=ctx)
    assert sink.kinds() == ["search_start"] + ["search_result"] * 3 + ["search_complete"]
    start, *items, complete = sink.events
    assert isinstance(start, SearchStart) and start.query == "hello" and start.id == "s1"
    assert all(isinstance(e, SearchResultEvent) and e.id == "s1" for e in items)
    assert isinstance(complete, SearchComplete) and complete.count == 3
    assert all(e.request_id == "req-1" for e in sink.events)
    assert complete.to_dict()["event"] == "search_complete"


async def test_citation_ids_are_unique_across_calls_sharing_a_context() -> None:
    s = make_searcher(StaticHandler("web", web_items(4)), StaticHandler("kb", web_items(3)))
    ctx = s.context()
    first = await s.search_many(
        [{"type": "web", "query": "q"}, {"type": "kb", "query": "q"}], ctx=ctx
    )
    second = await s.search(Request(type="web", query="again"), ctx=ctx)
    ids = [i.citation_id for r in [*first, second] for i in r.items]
    assert len(ids) == 11 and len(set(ids)) == 11


async def test_trace_has_a_node_per_search_with_status() -> None:
    s = make_searcher(StaticHandler("web", web_items(2)), FailingHandler("kb"))
    ctx = s.context()
    await s.search_many([{"type": "web", "query": "q"}, {"type": "kb", "query": "q"}], ctx=ctx)
    nodes = ctx.trace.find("search")
    assert {n.attributes["search_type"]: n.status for n in nodes} == {
        "web": "success",
        "kb": "failed",
    }
    assert nodes[0].attributes["result_count"] == 2


async def test_handler_spans_nest_under_their_search() -> None:
    from agent_search import span

    class Traced:
        type = "kb"

        def can_handle(self, ctx: object, req: object) -> bool:
            return True

        async def search(self, ctx: object, req: Request) -> Result:
            with span("embedding"):
                await anyio.sleep(0)
            with span("vector_search", collection="docs"):
                pass
            return Result(type="kb", query=req.query)

    s = make_searcher(Traced())
    ctx = s.context()
    await s.search_many([{"type": "kb", "query": "a"}, {"type": "kb", "query": "b"}], ctx=ctx)
    for node in ctx.trace.find("search"):
        assert [c.name for c in node.children] == ["embedding", "vector_search"]
        assert all(c.status == "success" and c.end is not None for c in node.children)


async def test_rerank_on_a_request_sorts_and_cuts() -> None:
    items = [
        ResultItem(title=str(i), url=f"http://x/{i}", score=s)
        for i, s in enumerate([0.2, 0.9, 0.5])
    ]
    s = make_searcher(StaticHandler("web", items))
    r = await s.search({"type": "web", "query": "q", "rerank": {"type": "score", "top_k": 2}})
    assert [i.title for i in r.items] == ["1", "2"]


async def test_unconfigured_reranker_ranks_by_score_and_reports() -> None:
    items = [ResultItem(title=str(i), url=f"http://x/{i}", score=s)
             for i, s in enumerate([0.2, 0.9, 0.5])]
    s = make_searcher(StaticHandler("web", items))
    r = await s.search({"type": "web", "query": "q", "rerank": {"type": "model", "top_k": 2}})
    assert [i.title for i in r.items] == ["1", "2"] and r.error is None
    assert r.rerank_error == "rerank model failed, used builtin: not configured"


async def test_1000_concurrent_searches_on_one_context_get_unique_ids() -> None:
    s = make_searcher(StaticHandler("web", web_items(1)))
    ctx = s.context()
    results: list[Result] = []

    async def one() -> None:
        results.append(await s.search(Request(type="web", query="q"), ctx=ctx))

    async with anyio.create_task_group() as tg:
        for _ in range(1000):
            tg.start_soon(one)
    ids = [r.items[0].citation_id for r in results]
    assert len(set(ids)) == 1000


def _scored(*scores: float) -> list[ResultItem]:
    return [ResultItem(title=f"t{i}", url=f"https://example.com/{i}", score=s)
            for i, s in enumerate(scores)]


async def test_items_under_the_type_floor_are_dropped_and_counted() -> None:
    sink = ListSink()
    s = Searcher(SearchConfig().merged({"kb": {"min_score": 0.5}}))
    s.registry.register(StaticHandler("kb", _scored(0.9, 0.49, 0.5, 0.1)))
    r = await s.search(Request(type="kb", query="q"), ctx=s.context(events=sink))
    assert [i.score for i in r.items] == [0.9, 0.5]
    assert [i.citation_id for i in r.items] == ["1", "2"]  # no id spent on dropped items
    assert r.dropped_below_floor == 2 and r.to_json()["dropped_below_floor"] == 2
    complete = [e for e in sink.events if isinstance(e, SearchComplete)]
    assert complete[0].count == 2 and complete[0].dropped_below_floor == 2
    assert complete[0].to_dict()["dropped_below_floor"] == 2


async def test_request_min_score_overrides_the_configured_floor() -> None:
    s = Searcher(SearchConfig().merged({"web": {"min_score": 0.5}}))
    s.registry.register(StaticHandler("web", _scored(0.9, 0.3)))
    lower = await s.search(Request(type="web", query="q", min_score=0.2))
    off = await s.search(Request(type="web", query="q", min_score=0))
    higher = await s.search(Request(type="web", query="q", min_score=0.95))
    assert [len(r.items) for r in (lower, off, higher)] == [2, 2, 0]
    assert higher.error is None and higher.dropped_below_floor == 2


async def test_the_floor_applies_before_the_limit() -> None:
    s = Searcher(SearchConfig().merged({"db": {"min_score": 0.5}}))
    s.registry.register(StaticHandler("db", _scored(0.1, 0.2, 0.8, 0.9)))
    r = await s.search(Request(type="db", query="q", limit=2))
    assert [i.score for i in r.items] == [0.8, 0.9]


async def test_custom_types_have_no_floor_unless_the_request_sets_one() -> None:
    s = make_searcher(StaticHandler("video", _scored(0.01)))
    assert len((await s.search(Request(type="video", query="q"))).items) == 1
    assert (await s.search(Request(type="video", query="q", min_score=0.5))).items == []


def test_min_score_is_validated() -> None:
    with pytest.raises(ValueError, match=r"min_score 1\.5 is outside 0\.\.1"):
        Request(type="kb", query="q", min_score=1.5)
    with pytest.raises(ConfigError, match=r"kb\.min_score"):
        SearchConfig().merged({"kb": {"min_score": -0.1}})
