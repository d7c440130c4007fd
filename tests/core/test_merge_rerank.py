from __future__ import annotations

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_search import Context, Request, Result, ResultItem, Searcher
from agent_search._merge import dedupe, identity_keys, keep_each_best, merge_items, normalize_url
from agent_search.rerank import ScoreReranker, apply_rerank
from agent_search.types import SOURCE_PRIORITY

from ..support.handlers import StaticHandler

pytestmark = pytest.mark.anyio


def item(source: str, score: float, weight: float, **kw: object) -> ResultItem:
    return ResultItem(source=source, score=score, weight=weight, **kw)  # type: ignore[arg-type]


async def test_spec_example_user_outranks_auto() -> None:
    """user 0.8 × 1.0 = 0.80 ranks above auto 0.9 × 0.6 = 0.54."""
    user = item("user", 0.8, 1.0, title="user doc", url="http://a/1")
    auto = item("auto", 0.9, 0.6, title="auto doc", url="http://a/2")
    merged = await Searcher().merge([Result(type="web", query="q", items=[auto, user])])
    assert [i.title for i in merged.items] == ["user doc", "auto doc"]
    assert merged.items[0].final_score == pytest.approx(0.80)
    assert merged.items[1].final_score == pytest.approx(0.54)


async def test_weights_come_from_configuration_end_to_end() -> None:
    s = Searcher()
    s.config = s.config.merged({"weights": {"hook": 0.9, "auto": 0.5}})
    s.registry.register(StaticHandler("web", [ResultItem(url="http://x/1", score=0.9)]))
    s.registry.register(
        StaticHandler("kb", [ResultItem(document_id="d", collection="c", score=0.6)])
    )
    ctx = s.context()
    rs = await s.search_many(
        [
            Request(type="web", query="q", source="auto"),
            Request(type="kb", query="q", source="hook"),
        ],
        ctx=ctx,
    )
    merged = await s.merge(rs, ctx=ctx)
    assert [i.type for i in merged.items] == ["kb", "web"]  # 0.54 vs 0.45


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "https://www.Example.com/page/?utm_source=x&b=2&a=1#frag",
            "http://example.com/page?a=1&b=2",
        ),
        ("http://example.com:80/x/", "http://example.com/x"),
    ],
)
def test_normalize_url_equivalences(a: str, b: str) -> None:
    assert normalize_url(a) == normalize_url(b)


def test_normalize_url_keeps_real_differences() -> None:
    assert normalize_url("http://example.com/a?id=1") != normalize_url("http://example.com/a?id=2")
    assert normalize_url("http://example.com:8080/") != normalize_url("http://example.com/")


def test_dedupe_keeps_highest_priority_copy_by_url_doc_and_record() -> None:
    items = [
        item("auto", 0.99, 0.6, url="https://www.site.com/a/", title="auto copy"),
        item("hook", 0.1, 0.8, url="http://site.com/a", title="hook copy"),
        item("auto", 0.5, 0.6, collection="docs", document_id="d1", title="kb auto"),
        item("user", 0.2, 1.0, collection="docs", document_id="d1", title="kb user"),
        item("hook", 0.5, 0.8, model="product", record_id=7, title="db hook"),
        item("hook", 0.9, 0.8, model="product", record_id="7", title="db hook better"),
        item("auto", 0.5, 0.6, collection="docs", document_id="d2", title="other doc"),
    ]
    kept = dedupe(items)
    assert [i.title for i in kept] == ["hook copy", "kb user", "db hook better", "other doc"]


def test_chunks_of_one_document_are_not_collapsed() -> None:
    a = item("auto", 0.5, 0.6, collection="c", document_id="d", metadata={"chunk_index": 0})
    b = item("auto", 0.5, 0.6, collection="c", document_id="d", metadata={"chunk_index": 1})
    assert len(dedupe([a, b])) == 2


async def test_merge_reports_failed_searches_and_cuts_to_top_n() -> None:
    ok = Result(
        type="web",
        query="q",
        items=[item("auto", s / 10, 1.0, url=f"http://x/{s}") for s in range(10)],
    )
    bad = Result(type="kb", query="q", error="kb: boom")
    merged = await Searcher().merge([ok, bad], top_n=3)
    assert [i.url for i in merged.items] == ["http://x/9", "http://x/8", "http://x/7"]
    assert merged.warnings == ["kb: boom"]  # worded once (search_error)


@pytest.mark.parametrize(("top_n", "expected"), [(0, 5), (2, 2), (5, 5), (99, 5)])
async def test_score_reranker_top_n(top_n: int, expected: int) -> None:
    items = [item("user", s, 1.0) for s in (0.1, 0.5, 0.3, 0.5, 0.9)]
    ranked = await ScoreReranker().rerank(Context(), "q", items, top_n)
    assert len(ranked) == expected
    assert [i.score for i in ranked] == sorted((i.score for i in items), reverse=True)[:expected]


async def test_score_reranker_is_stable_for_ties() -> None:
    items = [item("user", 0.5, 1.0, title=str(n)) for n in range(6)]
    ranked = await ScoreReranker().rerank(Context(), "q", items)
    assert [i.title for i in ranked] == [str(n) for n in range(6)]


class ExplodingReranker:
    async def rerank(
        self, ctx: Context, query: str, items: list[ResultItem], top_n: int = 0
    ) -> list[ResultItem]:
        for i in items:
            i.rerank_score = 0.0  # half-done work must be undone
        raise ConnectionError("rerank service down")


class InventingReranker:
    async def rerank(
        self, ctx: Context, query: str, items: list[ResultItem], top_n: int = 0
    ) -> list[ResultItem]:
        return [ResultItem(title="made up")]


@pytest.mark.parametrize("reranker", [ExplodingReranker(), InventingReranker()])
async def test_failing_reranker_loses_no_item_and_ranks_by_score(reranker: object) -> None:
    """The one policy: a failed reranker is replaced by the score ranking (and its cut)."""
    items = [item("user", s, 1.0, title=str(s)) for s in (0.3, 0.9, 0.1)]
    kept, error = await apply_rerank(reranker, Context(), "q", items)  # type: ignore[arg-type]
    assert [i.title for i in kept] == ["0.9", "0.3", "0.1"]
    assert all(i.rerank_score is None for i in kept)
    name = type(reranker).__name__
    assert error is not None and error.startswith(f"rerank {name} failed, used builtin: ")
    cut, _ = await apply_rerank(reranker, Context(), "q", items, 2)  # type: ignore[arg-type]
    assert [i.title for i in cut] == ["0.9", "0.3"]


class SlowReranker:
    label = "model:slow"
    timeout = 0.05

    async def rerank(
        self, ctx: Context, query: str, items: list[ResultItem], top_n: int = 0
    ) -> list[ResultItem]:
        await anyio.sleep(5)
        return items


async def test_a_reranker_past_its_timeout_is_the_same_failure() -> None:
    items = [item("user", s, 1.0, title=str(s)) for s in (0.3, 0.9)]
    kept, error = await apply_rerank(SlowReranker(), Context(), "q", items)
    assert [i.title for i in kept] == ["0.9", "0.3"]
    assert error == "rerank model:slow failed, used builtin: timed out after 0.05s"


async def test_a_missing_reranker_is_the_same_failure() -> None:
    items = [item("user", s, 1.0, title=str(s)) for s in (0.3, 0.9)]
    kept, error = await apply_rerank(None, Context(), "q", items, label="model")
    assert [i.title for i in kept] == ["0.9", "0.3"]
    assert error == "rerank model failed, used builtin: not configured"


async def test_merge_with_failing_reranker_reports_and_keeps_items() -> None:
    s = Searcher(rerankers={"model": ExplodingReranker()})
    r = Result(
        type="web", query="q", items=[item("user", 0.5, 1.0, url=f"http://x/{n}") for n in range(4)]
    )
    ctx = s.context()
    merged = await s.merge([r], ctx=ctx, reranker="model")
    assert len(merged.items) == 4
    assert merged.rerank_error == \
        "rerank model failed, used builtin: ConnectionError: rerank service down"
    rerank_nodes = ctx.trace.find("rerank")
    assert rerank_nodes and rerank_nodes[0].status == "failed"


def _dedupe_by_identity_keys(items: list[ResultItem]) -> list[ResultItem]:
    """The definition dedupe implements (with a fast path for url-only items): every
    item under all its identity keys, the first key already seen picks the slot."""
    kept: list[ResultItem] = []
    index: dict[tuple[str, ...], int] = {}
    for it in items:
        keys = identity_keys(it)
        slot = next((index[k] for k in keys if k in index), -1)
        if slot < 0:
            slot = len(kept)
            kept.append(it)
        else:
            mine = SOURCE_PRIORITY.get(it.source or "", 9)
            theirs = SOURCE_PRIORITY.get(kept[slot].source or "", 9)
            if mine < theirs or (mine == theirs and it.final_score > kept[slot].final_score):
                kept[slot] = it
        for k in keys:
            index.setdefault(k, slot)
    return kept


_identity_parts = st.fixed_dictionaries(
    {},
    optional={
        "url": st.sampled_from(
            ["http://a.com/x", "https://www.a.com/x/", "http://a.com/y", "javascript:x", ""]
        ),
        "model": st.sampled_from(["product", ""]),
        "record_id": st.sampled_from([1, "1", 2]),
        "collection": st.sampled_from(["docs", ""]),
        "document_id": st.sampled_from(["d1", "d2", ""]),
        "source": st.sampled_from(["user", "hook", "auto"]),
        "score": st.sampled_from([0.1, 0.5, 0.9]),
    },
)


@settings(deadline=None)
@given(st.lists(_identity_parts, max_size=12))
def test_dedupe_matches_its_definition_for_any_mix_of_identities(
    parts: list[dict[str, object]],
) -> None:
    items = [ResultItem(title=str(n), **p) for n, p in enumerate(parts)]  # type: ignore[arg-type]
    assert [i.title for i in dedupe(items)] == [i.title for i in _dedupe_by_identity_keys(items)]


async def test_many_strong_rows_of_one_search_keep_another_searchs_best() -> None:
    """A db search for products answering with eight rows that satisfy every condition
    (1.00 each) beside a kb search whose right passage scores 0.97: a cut to 8 keeps the
    passage (each search that found something keeps its best), in ranked order."""
    rows = [ResultItem(type="db", model="product", record_id=n, score=1.0, title=f"row {n}")
            for n in range(9)]
    passages = [ResultItem(type="kb", collection="docs", document_id=f"d{n}",
                           score=s, title=f"passage {n}") for n, s in enumerate((0.97, 0.86))]
    kb = Result(type="kb", query="how are citation ids kept unique?", items=passages)
    db = Result(type="db", query="products under $50 in stock", items=rows)
    merged = await Searcher().merge([kb, db], top_n=8)
    titles = [i.title for i in merged.items]
    assert len(titles) == 8 and titles[-1] == "passage 0", titles
    assert titles[:7] == [f"row {n}" for n in range(7)]
    assert [i.final_score for i in merged.items] == sorted(
        (i.final_score for i in merged.items), reverse=True)
    one = await Searcher().merge([db], top_n=8)  # one search: the plain cut
    assert [i.title for i in one.items] == [f"row {n}" for n in range(8)]
    every = await Searcher().merge([kb, db], top_n=0)
    assert len(every.items) == 11


def _keep_each_best_by_definition(ranked: list[ResultItem], top_n: int,
                                  results: list[Result]) -> list[ResultItem]:
    """The cut as defined: each search's best-ranked item reserved, the rest by rank."""
    if top_n <= 0 or top_n >= len(ranked):
        return ranked
    reserved: list[int] = []
    for result in results:
        found = [n for n, item in enumerate(ranked) if any(item is i for i in result.items)]
        if found and len(reserved) < top_n and min(found) not in reserved:
            reserved.append(min(found))
    rest = [n for n in range(len(ranked)) if n not in reserved][:top_n - len(reserved)]
    return [ranked[n] for n in sorted(set(reserved) | set(rest))]


@settings(deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 6), st.sampled_from([0.2, 0.5, 0.9, 1.0])),
                         max_size=6), min_size=1, max_size=4),
       st.integers(0, 8))
def test_the_cut_keeps_each_searchs_best_by_its_definition(
    searches: list[list[tuple[int, float]]], top_n: int,
) -> None:
    # searches share urls (so copies lose the merge to another search's), scores tie
    results = [Result(type=f"t{k}", query="q", items=[
        ResultItem(title=f"{k}-{u}", url=f"http://x.example/{u}", score=score)
        for u, score in found]) for k, found in enumerate(searches)]
    ranked = sorted(merge_items(results), key=lambda i: -i.final_score)
    assert keep_each_best(ranked, top_n, results) == \
        _keep_each_best_by_definition(ranked, top_n, results)
