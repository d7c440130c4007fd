"""Retrieval on the real engines: the embedded store (Qdrant Edge) against qdrant-client's
own query code (local mode, the stand-in for a ``kb.url`` server), the candidate fusion
against the exhaustive one, and the collection moments against exact ones."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest

from agent_search import SearchConfig
from agent_search.embedding import get_embedder
from agent_search.kb import close_stores, ingest_paths, visibility
from agent_search.kb._retrieval import Hit, QueryPlan, search
from agent_search.kb._retrieval._search import fuse
from agent_search.kb._store import (
    BASE_INDEXES,
    KBStore,
    PointData,
    Record,
    bm25_of,
    get_store,
    scroll_all,
)
from agent_search.kb._store._server import ServerStore
from agent_search.kb.calibrate import FullIndex
from agent_search.kb.settings import KBSettings

from ..support.data import KB_SAMPLE

QUERIES = [
    "vitamin D deficiency and bone density",
    "stem cells differentiate into neurons",
    "smoking increases the risk of lung cancer",
    "antibiotic resistance in bacteria",
]


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory,
           model_home: Path) -> Iterator[tuple[SearchConfig, KBStore]]:
    """40 passages of tests/data/kb-sample ingested once into Qdrant Edge, and copied point
    for point into qdrant-client's local mode (the server path's stand-in)."""
    from qdrant_client import QdrantClient

    base = tmp_path_factory.mktemp("kb-sample")
    home = base / "home"
    home.mkdir()
    (home / "models").symlink_to(model_home / "models", target_is_directory=True)
    lines = (KB_SAMPLE / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:40]
    corpus = base / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = SearchConfig(home=home)
    anyio.run(lambda: ingest_paths(config, [corpus], "sample"))
    edge = get_store(KBSettings(), home)
    server = ServerStore(QdrantClient(location=":memory:"), location="memory", local=True)
    info = edge.info("sample")
    server.create("sample", int(info.meta["dimensions"]), info.meta, BASE_INDEXES)
    server.upsert("sample", [PointData(r.id, r.dense or [], r.sparse, r.payload)  # type: ignore[arg-type]
                             for r in scroll_all(edge, "sample", vectors=True)])
    yield config, server
    server.close()
    close_stores()


def _vectors(config: SearchConfig, settings: KBSettings, query: str):  # type: ignore[no-untyped-def]
    store = get_store(settings, config.home)
    bm25 = bm25_of(store.info("sample").meta, settings)
    return store, bm25, get_embedder(settings, config.home).embed([query])[0], \
        bm25.query_vector(query)


# The two engines compute the same scores in different float orders (float32 in Rust,
# numpy/Python in qdrant-client): they agree to about 1e-6, so two hits whose scores are
# that close may come in either order, and one of them may fall off the end of the list.
# What is promised is the same ranking up to such ties, and the same scores to 1e-5.
_SCORE_TOLERANCE = 1e-5


def _tied(a: float, b: float) -> bool:
    return abs(a - b) <= _SCORE_TOLERANCE * max(1.0, abs(a), abs(b))


def _assert_same_ranking(mine: list[Hit], theirs: list[Hit], query: str,
                         head: int | None = None) -> None:
    """Equal rankings up to ties. The first ``head`` hits of each list (all but the last
    10) are all in the other list, which may differ at its tail, where a tie at the cut
    decides what is kept; and every pair of them the two lists order differently is tied
    in at least one list (each list's own scale: the sparse scores differ by design)."""
    head = max(1, len(mine) - 10) if head is None else head
    for first, second in ((mine, theirs), (theirs, mine)):
        rank = {h.point_id: i for i, h in enumerate(second)}
        top = first[:head]
        for hit in top:
            assert hit.point_id in rank, (query, hit.point_id)
        for i, a in enumerate(top):
            for b in top[i + 1:]:
                if rank[a.point_id] > rank[b.point_id]:
                    assert _tied(a.score, b.score) or _tied(
                        second[rank[a.point_id]].score, second[rank[b.point_id]].score), \
                        (query, a.point_id, b.point_id)


def _assert_same_scores(mine: list[Hit], theirs: list[Hit], query: str) -> None:
    """The hits both lists hold carry the same score (to the tolerance above)."""
    score = {h.point_id: h.score for h in theirs}
    shared = [h for h in mine if h.point_id in score]
    assert len(shared) >= len(mine) - 2, query
    for hit in shared:
        assert _tied(hit.score, score[hit.point_id]), (query, hit.point_id)


def test_ranking_comparison_tolerates_ties_only() -> None:
    """The comparison above is not vacuous: a swap of tied hits passes, any other fails."""
    def hits(*pairs: tuple[int, float]) -> list[Hit]:
        return [Hit(point_id=str(i), score=s, payload={}) for i, s in pairs]

    _assert_same_ranking(hits((1, 0.9), (2, 0.5000001), (3, 0.5)),
                         hits((1, 0.9), (3, 0.5000001), (2, 0.5000001)), "tie", head=3)
    _assert_same_ranking(hits((1, 0.9), (2, 0.5), (3, 0.5)),
                         hits((1, 0.9), (3, 0.5), (4, 0.5)), "tail", head=1)
    with pytest.raises(AssertionError):
        _assert_same_ranking(hits((1, 0.9), (2, 0.5)), hits((2, 0.9), (1, 0.5)), "swap",
                             head=2)
    with pytest.raises(AssertionError):
        _assert_same_ranking(hits((1, 0.9), (2, 0.5), (3, 0.4)),
                             hits((1, 0.9), (3, 0.5), (4, 0.4)), "gone", head=2)
    with pytest.raises(AssertionError):
        _assert_same_scores(hits((1, 0.9)), hits((1, 0.8)), "score")


@pytest.mark.parametrize(("mode", "fusion", "prf"), [
    ("dense", "rrf", 0), ("sparse", "rrf", 0), ("hybrid", "dbsf", 0), ("hybrid", "rrf", 0),
    ("hybrid", "rrf", 3), ("dense", "rrf", 2), ("hybrid", "calibrated", 0)])
def test_edge_ranks_like_qdrant_client(sample: tuple[SearchConfig, KBStore], mode: str,
                                       fusion: str, prf: int) -> None:
    config, server = sample
    settings = KBSettings(fusion=fusion, prefetch=30, prf_docs=prf)
    public = visibility(None, None)
    prf_changed = False
    for query in QUERIES:
        edge, bm25, dense, sparse = _vectors(config, settings, query)
        plan = QueryPlan.of(settings, mode, 10, bm25.k1)
        mine = search(edge, "sample", plan, dense, sparse, public, 40)
        theirs = search(server, "sample", plan, dense, sparse, public, 40)
        assert len(mine) == len(theirs) > 0
        # the server keeps the collection statistics too (issue 33): the same idf, the
        # same moments, so the same ranking and the same scores in every mode and fusion
        _assert_same_ranking(mine, theirs, query)
        _assert_same_scores(mine, theirs, query)
        plain = search(edge, "sample", QueryPlan.of(settings.model_copy(
            update={"prf_docs": 0}), mode, 10, bm25.k1), dense, sparse, public, 40)
        prf_changed |= [h.point_id for h in plain] != [h.point_id for h in mine]
    assert prf_changed == bool(prf)  # feedback moves the query; without it nothing changes


@pytest.fixture(params=["edge", "server"])
def either(request: pytest.FixtureRequest,
           sample: tuple[SearchConfig, KBStore]) -> tuple[SearchConfig, KBStore]:
    """The sample on one store or the other: the tests that take it hold on both."""
    config, server = sample
    return config, (server if request.param == "server"
                    else get_store(KBSettings(), config.home))


def test_candidate_fusion_equals_the_exhaustive_one(
        either: tuple[SearchConfig, KBStore]) -> None:
    """The calibrated hybrid fuses the union of both branches' top ``prefetch``; over the
    whole collection, with the same moments, the top 10 are the same."""
    config, store = either
    settings = KBSettings(prefetch=20)
    for query in QUERIES:
        _, bm25, dense, sparse = _vectors(config, settings, query)
        edge = store
        full = FullIndex(edge, "sample")
        stats = edge.stats("sample")
        assert stats is not None
        cos = full.dense_scores(np.asarray(dense, dtype=np.float32))
        cov = full.sparse_scores(sparse) / np.float32(full.max_sparse(sparse, bm25.k1))
        moments = stats.moments(dense, sparse, bm25.k1)
        exhaustive = np.argsort(-fuse(cos, cov, moments, 0.75, 0.25), kind="stable")[:10]
        ids = [str(full.payloads[i]["content_hash"]) for i in exhaustive.tolist()]
        plan = QueryPlan.of(settings, "hybrid", 10, bm25.k1)
        found = search(edge, "sample", plan, dense, sparse, visibility(None, None), 40)
        assert [str(h.payload["content_hash"]) for h in found] == ids, query
        # the moments are exact, the coverage's variance too (the terms' co-occurrence
        # included: taking them as independent is off by ~30%)
        assert moments.dense_mean == pytest.approx(float(cos.mean()), abs=1e-5)
        assert moments.dense_var == pytest.approx(float(cos.var()), rel=1e-3)
        assert moments.coverage_mean == pytest.approx(float(cov.mean()), rel=1e-4)
        assert moments.coverage_var == pytest.approx(float(cov.var()), rel=1e-4)
        assert stats.sparse_bound(sparse, bm25.k1) == pytest.approx(
            full.max_sparse(sparse, bm25.k1), rel=1e-6)


@pytest.mark.parametrize(("prefetch", "limit"), [(5, 3), (8, 2), (12, 5), (20, 1)])
def test_pruned_candidates_rank_like_the_whole_union(
        either: tuple[SearchConfig, KBStore], prefetch: int, limit: int) -> None:
    """The calibrated hybrid scores only the candidates that can still reach the top
    ``limit`` (bounded by each list's last score); the result is the one of scoring the
    whole union of both branches' top ``prefetch`` exactly, scores included."""
    config, store = either
    settings = KBSettings(prefetch=prefetch)
    for query in QUERIES:
        _, bm25, dense, sparse = _vectors(config, settings, query)
        edge = store
        full = FullIndex(edge, "sample")
        stats = edge.stats("sample")
        assert stats is not None
        cos = full.dense_scores(np.asarray(dense, dtype=np.float32))
        bm = full.sparse_scores(sparse)
        cov = bm / np.float32(stats.sparse_bound(sparse, bm25.k1))
        dense_top = np.argsort(-cos, kind="stable")[:prefetch].tolist()
        sparse_top = [i for i in np.argsort(-bm, kind="stable")[:prefetch].tolist() if bm[i] > 0]
        union = [*dense_top, *sorted(set(sparse_top) - set(dense_top), key=lambda i: -cos[i])]
        fused = fuse(cos[union], cov[union], stats.moments(dense, sparse, bm25.k1), 0.75, 0.25)
        expected = [str(full.payloads[union[i]]["content_hash"])
                    for i in np.argsort(-fused, kind="stable")[:limit].tolist()]
        assert len(union) > limit  # something to prune
        found = search(edge, "sample", QueryPlan.of(settings, "hybrid", limit, bm25.k1),
                       dense, sparse, visibility(None, None), 40)
        assert [str(h.payload["content_hash"]) for h in found] == expected, query
        assert [h.score for h in found] == sorted((h.score for h in found), reverse=True)


class _VectorsGone:
    """The store, but the chunks' vectors are gone when feedback reads them (removed
    between the search and the read)."""

    def __init__(self, store: KBStore) -> None:
        self.store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def retrieve(self, collection: str, ids: list[str], *, payload: bool,
                 vectors: Any) -> list[Record]:
        records = self.store.retrieve(collection, ids, payload=payload, vectors=vectors)
        return [Record(r.id, r.payload) for r in records] if vectors else records


def test_hits_keep_their_payloads_when_feedback_finds_no_vectors(
        sample: tuple[SearchConfig, KBStore]) -> None:
    config, _ = sample
    settings = KBSettings(prf_docs=2)  # the calibrated hybrid, then Rocchio feedback
    edge, bm25, dense, sparse = _vectors(config, settings, QUERIES[0])
    hits = search(_VectorsGone(edge), "sample",  # type: ignore[arg-type]
                  QueryPlan.of(settings, "hybrid", 10, bm25.k1), dense, sparse,
                  visibility(None, None), 40)
    assert len(hits) == 10
    assert all(h.payload.get("content") for h in hits)
