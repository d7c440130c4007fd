"""Ready-made handlers for testing code that uses agent-search, and the conformance
suite a knowledge-base store passes (:class:`KBStoreTests`).

Handlers are pluggable by design, so these are real handlers, not stand-ins for a
component: register them on a :class:`~agent_search.searcher.Searcher` (or an
assistant's searcher) to exercise hooks, merging, citations, deadlines and failure paths
without a network or a store — as pydantic-ai's ``TestModel`` or httpx's
``MockTransport`` do for their layers. The project's own tests and benchmarks use them.

::

    from agent_search.testing import StaticHandler, FailingHandler, items

    searcher.registry.register(StaticHandler("web", items(3), delay=0.05))
    searcher.registry.register(FailingHandler("kb", "index offline"))

:class:`KBStoreTests` is what a kb store must do, as tests (the haystack
``DocumentStoreBaseTests`` pattern): subclass it in a pytest module, give it a ``store``
fixture yielding a fresh, empty, open store, and every test runs against yours. Both
builtin stores run it (``tests/kb/test_store_engines.py``).
"""

from __future__ import annotations

import math
import statistics
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio

from agent_search.context import Context
from agent_search.kb import Access, visibility
from agent_search.kb.store import (
    DENSE,
    SPARSE,
    CollectionNotFound,
    Condition,
    FusionQuery,
    Group,
    HasId,
    IsEmpty,
    IsNull,
    KBStore,
    Match,
    MatchAny,
    MatchExcept,
    MatchText,
    PointData,
    Range,
    RescoreQuery,
    SparseVec,
    StoreError,
    VectorQuery,
    to_filter,
)
from agent_search.types import QueryWhere, Request, Result, ResultItem

ItemLike = ResultItem | Mapping[str, Any]

__all__ = ["FailingHandler", "KBStoreTests", "StaticHandler", "items", "store_points"]


class StaticHandler:
    """Answers every request of its ``type`` with fresh copies of fixed items, after
    ``delay`` seconds (a slow handler), or raises ``RuntimeError(error)`` after the delay
    (a failing one). ``accept=False`` makes it decline every request (``can_handle``);
    ``keyword_queries=True`` makes it want keywords, as the web handler does (auto search
    then sends it the message's keywords).

    It records what it saw: ``requests`` (every request, in order), ``finished`` (searches
    that returned) and ``cancelled`` (searches cancelled during the delay)."""

    def __init__(self, type: str, items: Sequence[ItemLike] = (), *, delay: float = 0.0,
                 error: str | None = None, accept: bool = True,
                 keyword_queries: bool = False) -> None:
        self.type = type
        self.keyword_queries = keyword_queries
        self.items = list(items)
        self.delay = delay
        self.error = error
        self.accept = accept
        self.requests: list[Request] = []
        self.finished = 0
        self.cancelled = 0

    def can_handle(self, ctx: Context, request: Request) -> bool:
        return self.accept

    async def search(self, ctx: Context, request: Request) -> Result:
        self.requests.append(request)
        try:
            if self.delay:
                await anyio.sleep(self.delay)
        except anyio.get_cancelled_exc_class():
            self.cancelled += 1
            raise
        if self.error is not None:
            raise RuntimeError(self.error)
        self.finished += 1
        found = [_fresh(item, self.type) for item in self.items]
        return Result(type=self.type, query=request.query, items=found, total=len(found))


class FailingHandler(StaticHandler):
    """Raises ``RuntimeError(message)`` for every request, after ``delay`` seconds."""

    def __init__(self, type: str, message: str = "backend exploded\nwith a second line", *,
                 delay: float = 0.0) -> None:
        super().__init__(type, delay=delay, error=message)


def items(n: int, *, prefix: str = "https://example.com/", score: float = 0.9,
          step: float = 0.0, title: str = "page") -> list[ResultItem]:
    """``n`` web-like items: ``{title} i``, url ``{prefix}i``, a line of content, scores
    ``score``, ``score - step``, ..."""
    return [ResultItem(title=f"{title} {i}", url=f"{prefix}{i}", content=f"content {i}",
                       score=max(0.0, score - i * step)) for i in range(n)]


def _fresh(item: ItemLike, search_type: str) -> ResultItem:
    """A copy the searcher may stamp without touching the handler's own item."""
    if isinstance(item, ResultItem):
        return item.model_copy(deep=True)
    return ResultItem(**{"type": search_type, **item})


# -- the kb store conformance suite ------------------------------------------------------

_IDS = [str(uuid.UUID(int=i + 1)) for i in range(12)]
_C = "c"


def _access(i: int) -> Access:
    if i % 3 == 0:
        return Access.of()
    return Access.of(f"u{i % 2}", "t1") if i % 3 == 1 else \
        Access.of(f"u{i % 2}", "t2", share="private")


def store_points() -> list[PointData]:
    """Twelve small points: 4-d dense vectors, two-term sparse ones, payloads with the
    kb's fields (source, content, meta, access) in a pattern the filter cases read."""
    out = []
    for i, pid in enumerate(_IDS):
        meta: dict[str, object] = {"type": "md" if i % 2 else "txt", "year": 2000 + i,
                                   "tags": ["a", "b"] if i < 4 else ["c"]}
        if i % 4 == 0:
            meta["lang"] = None
        out.append(PointData(pid, [1.0, float(i), 0.5, float(i % 3)],
                             SparseVec([1, 2 + i % 4], [1.0, 0.1 * (i + 1)]),
                             {"source": f"docs/{i}.md", "content": f"note number {i} on bees",
                              "meta": meta, **_access(i).payload()}))
    return out


FILTER_CASES: list[tuple[Condition, set[int]]] = [
    (Match("meta.type", "md"), {1, 3, 5, 7, 9, 11}),
    (Group(must_not=(Match("meta.type", "md"),)), {0, 2, 4, 6, 8, 10}),
    (Range("meta.year", gte=2003, lt=2006), {3, 4, 5}),
    (MatchAny("meta.tags", ("a",)), {0, 1, 2, 3}),
    (MatchExcept("meta.type", ("md",)), {0, 2, 4, 6, 8, 10}),
    (MatchText("content", "number 1"), {1}),  # words, not a substring
    (IsNull("meta.lang"), {0, 4, 8}),
    (IsEmpty("meta.lang"), set(range(12))),  # null, or no such key
    (HasId((_IDS[2], _IDS[5])), {2, 5}),
    (Group(should=(Match("meta.year", 2001), Group(must=(Match("meta.type", "txt"),
                                                         Range("meta.year", gt=2009))))),
     {1, 10}),
    (visibility(None, None), {0, 3, 6, 9}),
    (visibility("u1", None), {0, 3, 6, 9} | {1, 5, 7, 11}),
    (visibility(None, "t1"), {0, 3, 6, 9} | {1, 4, 7, 10}),
    (visibility("u0", "t2"), {0, 3, 6, 9} | {2, 4, 8, 10}),
]
"""(filter, the indexes of the points of :func:`store_points` it selects)."""


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


def _bm25_dot(query: SparseVec, points: list[PointData]) -> dict[str, float]:
    """Each matching point's sparse score: the dot product with each query term weighted
    by Qdrant's IDF, ln(1 + (N − n + 0.5) / (n + 0.5)) over the collection."""
    df: dict[int, int] = {}
    for p in points:
        for t in p.sparse.indices:
            df[t] = df.get(t, 0) + 1
    scores: dict[str, float] = {}
    for p in points:
        weights = dict(zip(p.sparse.indices, p.sparse.values, strict=True))
        hit = [t for t in query.indices if t in weights]
        if hit:
            scores[p.id] = sum(
                math.log1p((len(points) - df[t] + 0.5) / (df[t] + 0.5))
                * q * weights[t] for t, q in zip(query.indices, query.values, strict=True)
                if t in weights)
    return scores


def _top(scores: Mapping[str, float], n: int) -> dict[str, float]:
    """The ``n`` best of ``scores``, best first."""
    return dict(sorted(scores.items(), key=lambda kv: -kv[1])[:n])


def _rrf(lists: Sequence[Mapping[str, float]], weights: Sequence[float],
         k: int) -> dict[str, float]:
    """Qdrant's weighted reciprocal rank fusion: Σ 1 / (k − 1 + rank / weight), ranks
    from 1 (with equal weights of 1, the usual 1 / (k + rank − 1))."""
    fused: dict[str, float] = {}
    for ranked, weight in zip(lists, weights, strict=True):
        for rank, pid in enumerate(ranked, start=1):
            fused[pid] = fused.get(pid, 0.0) + 1.0 / (k - 1 + rank / weight)
    return fused


def _dbsf(lists: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Distribution-based score fusion: each list's scores mapped from mean ± 3 sample
    standard deviations onto 0..1 (clipped), summed."""
    fused: dict[str, float] = {}
    for ranked in lists:
        scores = list(ranked.values())
        mean, sd = statistics.mean(scores), statistics.stdev(scores)
        low, high = mean - 3 * sd, mean + 3 * sd
        for pid, score in ranked.items():
            fused[pid] = fused.get(pid, 0.0) + min(1.0, max(0.0, (score - low) / (high - low)))
    return fused


def _df(stats: Any, term: int) -> int:
    """How many points of the statistics hold ``term``."""
    terms = [int(t) for t in stats.terms]
    return int(stats.df[terms.index(term)]) if term in terms else 0


def _raises(kind: type[BaseException], call: Callable[[], object]) -> BaseException:
    try:
        call()
    except kind as exc:
        return exc
    raise AssertionError(f"expected {kind.__name__}")


class KBStoreTests:
    """What every kb store does, as pytest tests. Subclass it (as ``Test...``) and give
    the subclass a ``store`` fixture: a fresh, empty, open store, closed after the test.

    Scores are checked to 1e-4 against the formulas the kb's scores are calibrated on
    (dense: cosine; sparse: the dot product with Qdrant's IDF; Qdrant's weighted RRF and
    DBSF; rescoring: exact cosine over the prefetched candidates), not against another
    store, so the embedded store is held to them as much as yours."""

    @staticmethod
    def filled(store: KBStore) -> KBStore:
        """``store`` with the collection ``c`` of :func:`store_points` (12 points)."""
        store.create(_C, 4, {"dimensions": 4}, {"source": "keyword", "acl_owner": "keyword"})
        store.upsert(_C, store_points())
        return store

    def test_collections_are_created_listed_and_dropped(self, store: KBStore) -> None:
        assert not store.exists(_C) and _C not in store.collections()
        store.create(_C, 4, {"dimensions": 4, "model": "m"}, {})
        assert store.exists(_C) and _C in store.collections()
        info = store.info(_C)
        assert (info.name, info.points, info.meta["model"]) == (_C, 0, "m")
        _raises(StoreError, lambda: store.create(_C, 4, {"dimensions": 4}, {}))
        store.update_meta(_C, {**info.meta, "model": "m2"})
        assert store.info(_C).meta["model"] == "m2"
        assert store.drop(_C) is True
        assert not store.exists(_C) and _C not in store.collections()
        assert store.drop(_C) is False
        _raises(CollectionNotFound, lambda: store.info(_C))

    def test_points_are_written_read_replaced_and_deleted(self, store: KBStore) -> None:
        points = store_points()
        self.filled(store)
        assert store.count(_C) == store.info(_C).points == 12
        [two] = store.retrieve(_C, [_IDS[2]], payload=True, vectors=True)
        assert two.id == _IDS[2] and two.payload == points[2].payload
        assert two.dense is not None and two.sparse is not None
        assert _cosine(two.dense, points[2].dense) > 0.9999  # stored as given, or normalised
        assert list(two.sparse.indices) == points[2].sparse.indices
        assert all(abs(a - b) < 1e-6 for a, b in zip(two.sparse.values,
                                                     points[2].sparse.values, strict=True))
        store.upsert(_C, [PointData(_IDS[2], points[2].dense, points[2].sparse,
                                    {**points[2].payload, "content": "replaced"})])
        assert store.count(_C) == 12
        [again] = store.retrieve(_C, [_IDS[2]], payload=True, vectors=False)
        assert again.payload["content"] == "replaced" and again.dense is None
        store.delete(_C, [_IDS[0], _IDS[1]])
        assert store.count(_C) == 10
        assert store.retrieve(_C, [_IDS[0], _IDS[1]], payload=False, vectors=False) == []

    def test_scroll_pages_give_every_point_once(self, store: KBStore) -> None:
        self.filled(store)
        seen: list[str] = []
        offset: str | None = None
        while True:
            records, offset = store.scroll(_C, None, limit=5, offset=offset,
                                           payload=["source"], vectors=False)
            assert len(records) <= 5
            seen.extend(r.id for r in records)
            assert all(set(r.payload) == {"source"} for r in records)
            if offset is None:
                break
        assert sorted(seen) == sorted(_IDS)
        md, _ = store.scroll(_C, Match("meta.type", "md"), limit=20, offset=None,
                             payload=True, vectors=False)
        assert {r.id for r in md} == {_IDS[i] for i in (1, 3, 5, 7, 9, 11)}

    def test_filters_select_the_documented_points(self, store: KBStore) -> None:
        self.filled(store)
        for flt, expected in FILTER_CASES:
            group = flt if isinstance(flt, Group) else Group(must=(flt,))
            found = store.query_batch(_C, [VectorQuery(DENSE, [1.0, 0.0, 0.0, 0.0], 50,
                                                       group)])[0]
            assert {_IDS.index(p.id) for p in found} == expected, flt
            assert store.count(_C, flt) == len(expected), flt

    def test_where_clauses_run_in_the_store(self, store: KBStore) -> None:
        self.filled(store)
        store.ensure_indexes(_C, {"meta.type": "keyword", "meta.year": "float"})
        flt = to_filter([QueryWhere(field="type", op="=", value="txt"),
                         QueryWhere(field="year", op=">=", value=2006)])
        assert store.count(_C, flt) == 3

    def test_dense_and_sparse_scores_follow_their_formulas(self, store: KBStore) -> None:
        points = store_points()
        self.filled(store)
        dense = [0.2, 1.0, 0.0, 0.3]
        sparse = SparseVec([2, 3], [1.0, 0.5])
        by_dense, by_sparse = store.query_batch(_C, [
            VectorQuery(DENSE, dense, 5, with_payload=True), VectorQuery(SPARSE, sparse, 12)])
        want = _top({p.id: _cosine(dense, p.dense) for p in points}, 5)
        assert [p.id for p in by_dense] == list(want)
        assert all(abs(p.score - want[p.id]) < 1e-4 for p in by_dense)
        assert all(p.payload is not None and "source" in p.payload for p in by_dense)
        expected = _bm25_dot(sparse, points)
        assert {p.id for p in by_sparse} == set(expected)
        assert all(abs(p.score - expected[p.id]) < 1e-4 for p in by_sparse)

    def test_fusion_and_rescoring_follow_their_formulas(self, store: KBStore) -> None:
        points = store_points()
        dense_vec, sparse_vec = [0.2, 1.0, 0.0, 0.3], SparseVec([3], [1.0])
        dense, sparse = VectorQuery(DENSE, dense_vec, 8), VectorQuery(SPARSE, sparse_vec, 8)
        rrf, dbsf, rescored = self.filled(store).query_batch(_C, [
            FusionQuery((dense, sparse), "rrf", 5, 60, (0.75, 0.25)),
            FusionQuery((dense, sparse), "dbsf", 5),
            RescoreQuery((dense, sparse), DENSE, dense_vec, 6)])
        lists = [_top({p.id: _cosine(dense_vec, p.dense) for p in points}, 8),
                 _top(_bm25_dot(sparse_vec, points), 8)]
        by_cosine = {p.id: _cosine(dense_vec, p.dense) for p in points
                     if any(p.id in ranked for ranked in lists)}
        for got, want in ((rrf, _top(_rrf(lists, (0.75, 0.25), 60), 5)),
                          (dbsf, _top(_dbsf(lists), 5)), (rescored, _top(by_cosine, 6))):
            assert [p.id for p in got] == list(want)
            assert all(abs(p.score - want[p.id]) < 1e-4 for p in got)

    def test_statistics_follow_writes_and_repair(self, store: KBStore) -> None:
        self.filled(store)
        store.settle(_C)
        stats = store.stats(_C)
        assert stats is not None and stats.points == 12
        assert _df(stats, 1) == 12 and _df(stats, 3) == 3  # term 1 in every point
        store.delete(_C, [_IDS[0], _IDS[1]])  # point 1 held term 3
        store.settle(_C)
        after = store.stats(_C)
        assert after is not None and after.points == 10
        assert _df(after, 1) == 10 and _df(after, 3) == 2
        assert store.repair(_C).points == 10

    def test_a_missing_collection_is_named(self, store: KBStore) -> None:
        for call in (lambda: store.count("nope"),
                     lambda: store.upsert("nope", store_points()[:1]),
                     lambda: store.query_batch("nope", [VectorQuery(DENSE, [1.0] * 4, 3)])):
            error = _raises(StoreError, call)
            assert "nope" in str(error)
