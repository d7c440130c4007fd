"""The in-process index of local mode ranks exactly like Qdrant's own query_points."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from agent_search import SearchConfig
from agent_search.kb import close_stores, ingest_paths
from agent_search.kb.embedder import get_embedder
from agent_search.kb.ingest import bm25_of
from agent_search.kb.retrieval import QueryPlan, dbsf, rrf, search_local, search_qdrant
from agent_search.kb.settings import KBSettings
from agent_search.kb.store import get_store

from .conftest import SCIFACT

QUERIES = [
    "vitamin D deficiency and bone density",
    "stem cells differentiate into neurons",
    "smoking increases the risk of lung cancer",
    "antibiotic resistance in bacteria",
]


@pytest.fixture(scope="module")
def sample_config(tmp_path_factory: pytest.TempPathFactory,
                  model_home: Path) -> Iterator[SearchConfig]:
    """40 SciFact abstracts, ingested once for the module."""
    base = tmp_path_factory.mktemp("kb-sample")
    home = base / "home"
    home.mkdir()
    (home / "models").symlink_to(model_home / "models", target_is_directory=True)
    lines = (SCIFACT / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:40]
    corpus = base / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = SearchConfig(home=home)
    anyio.run(lambda: ingest_paths(config, [corpus], "sample"))
    yield config
    close_stores()


@pytest.mark.parametrize(("mode", "fusion", "prf"), [
    ("dense", "dbsf", 0), ("sparse", "dbsf", 0), ("hybrid", "dbsf", 0), ("hybrid", "rrf", 0),
    ("hybrid", "dbsf", 3), ("dense", "dbsf", 2), ("hybrid", "calibrated", 0)])
def test_local_index_ranks_like_qdrant(sample_config: SearchConfig, mode: str,
                                       fusion: str, prf: int) -> None:
    config, name = sample_config, "sample"
    # equal weights: the server's DBSF has none
    settings = KBSettings(fusion=fusion, prefetch=30, prf_docs=prf, dense_weight=1.0,
                          sparse_weight=1.0)
    store = get_store(settings, config.home)
    info = store.info(name)
    bm25 = bm25_of(info.meta, settings)
    embedder = get_embedder(settings, config.home)
    plan = QueryPlan.of(settings, mode, 10, bm25.k1)
    without_prf = QueryPlan.of(settings.model_copy(update={"prf_docs": 0}), mode, 10, bm25.k1)
    prf_changed = False
    for query in QUERIES:
        dense = embedder.embed([query])[0]
        sparse = bm25.query_vector(query)
        local = search_local(store, name, plan, dense, sparse)
        remote = search_qdrant(store, name, plan, dense, sparse, None, info.points)
        if fusion == "calibrated":  # the server path standardises by the reference only
            assert local[0].point_id == remote[0].point_id, query
            assert len({h.point_id for h in local} & {h.point_id for h in remote}) >= 8
        else:
            assert [h.point_id for h in local] == [h.point_id for h in remote], query
        # the server path bounds the idf, so sparse scores differ; its calibrated hybrid
        # has no collection statistics (the reference's only), so its scores differ too
        if mode != "sparse" and fusion != "calibrated":
            assert [round(h.score, 4) for h in local] == [round(h.score, 4) for h in remote]
        plain = search_local(store, name, without_prf, dense, sparse)
        prf_changed |= [(h.point_id, h.score) for h in plain] != [(h.point_id, h.score)
                                                                  for h in local]
    assert prf_changed == bool(prf)  # feedback moves the query; without it nothing changes


def test_fusions_are_normalised_and_weighted() -> None:
    a = [("x", 0.9), ("y", 0.5), ("z", 0.1)]
    b = [("y", 12.0), ("z", 3.0)]
    fused = rrf([a, b], [1.0, 1.0], 60)
    assert max(fused.values()) <= 1.0 and fused["y"] > fused["x"]
    assert rrf([a, a], [1.0, 1.0], 60)["x"] == pytest.approx(1.0)
    only_b = dbsf([a, b], [0.0, 1.0])
    assert only_b["x"] == 0.0 and only_b["y"] > only_b["z"]
    assert all(0.0 <= v <= 1.0 for v in dbsf([a, b], [1.0, 2.0]).values())


def test_zscore_fusion_standardises_over_the_collection() -> None:
    import numpy as np

    from agent_search.kb.retrieval import standard_scores, z_to_unit, zscore_fusion

    dense = np.array([0.9, 0.5, 0.5, 0.1], dtype=np.float32)
    sparse = np.array([0.0, 30.0, 0.0, 0.0], dtype=np.float32)
    only_dense = zscore_fusion(dense, sparse, 1.0, 0.0)
    assert np.allclose(only_dense, standard_scores(dense))
    both = zscore_fusion(dense, sparse, 0.5, 0.5)
    assert int(np.argmax(both)) == 1  # a strong BM25 outlier beats a mild dense lead
    assert np.allclose(standard_scores(np.ones(3, dtype=np.float32)), 0.0)
    assert z_to_unit(5.0) == 0.5 and z_to_unit(-1.0) == 0.0 and 0 < z_to_unit(50.0) < 1
