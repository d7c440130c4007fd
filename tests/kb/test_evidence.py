"""Scores as evidence over the query's background (issues 24 and 26): the null a query's
matches are judged against, the score it gives, and the per-query branch weights."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from agent_search.kb._retrieval import QueryPlan, _background, dense_background, null_of
from agent_search.kb._retrieval._background import COVERAGE_STD_MIN, Null
from agent_search.kb._retrieval._background_texts import TEXTS
from agent_search.kb._retrieval._evidence import (
    EVIDENCE,
    dense_evidence_score,
    evidence_score,
    reliability,
    sparse_evidence_score,
)
from agent_search.kb._retrieval._search import _Pool, _weights
from agent_search.kb._store import BM25
from agent_search.kb.settings import KBSettings


class _CountingEmbedder:
    """Deterministic unit vectors per text; counts the texts it was asked to embed."""

    model_id = "test/counting"
    dimensions = 8

    def __init__(self) -> None:
        self.embedded = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:  # type: ignore[type-arg]
        self.embedded += len(texts)
        rows = [np.random.default_rng(sum(map(ord, t))).standard_normal(8) for t in texts]
        return np.asarray(rows, dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:  # type: ignore[type-arg]
        return self.embed([text])[0]


def test_the_background_is_embedded_once_per_model_and_kept(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    monkeypatch.setattr(_background, "_DENSE", {})
    embedder = _CountingEmbedder()
    first = dense_background(embedder, tmp_path)  # type: ignore[arg-type]
    assert first.shape == (len(TEXTS), 8)
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    assert dense_background(embedder, tmp_path) is first  # type: ignore[arg-type]
    monkeypatch.setattr(_background, "_DENSE", {})  # a new process: read from the home
    again = dense_background(embedder, tmp_path)  # type: ignore[arg-type]
    assert embedder.embedded == len(TEXTS) and np.array_equal(again, first)


def test_the_null_is_the_query_s_own_similarity_to_the_background() -> None:
    rng = np.random.default_rng(0)
    background = rng.standard_normal((50, 16)).astype(np.float32)
    background /= np.linalg.norm(background, axis=1, keepdims=True)
    query = rng.standard_normal(16).astype(np.float32)
    null = null_of(background, BM25(), query, None)
    cosines = background @ (query / np.linalg.norm(query))
    assert null.dense_mean == pytest.approx(float(cosines.mean()), abs=1e-6)
    assert null.dense_std == pytest.approx(float(cosines.std()), abs=1e-6)
    # a chunk as similar as the most similar unrelated text is no evidence of relevance
    assert dense_evidence_score(null, float(cosines.max())) < 0.02
    # a vector of another size than the background's: no dense null, never an error
    assert null_of(background, BM25(), query[:8], None).dense_std == 1.0


def test_a_query_s_coverage_null_comes_from_the_background_passages() -> None:
    bm25 = BM25()
    rare = null_of(None, bm25, None, bm25.query_vector("zymurgy quaternions"))
    assert rare.coverage_mean == 0.0 and rare.coverage_std > COVERAGE_STD_MIN
    # the spread of chance matches: one rare word of two is a larger share of the query
    # than one of six, so matching it alone is less surprising
    longer = null_of(None, bm25, None, bm25.query_vector(
        "zymurgy quaternions ophiology bathymetry cladistics orrery"))
    assert longer.coverage_std < rare.coverage_std
    common = null_of(None, bm25, None, bm25.query_vector("water in the city"))
    assert common.coverage_mean > 0.0 and common.coverage_std > COVERAGE_STD_MIN
    chinese = null_of(None, bm25, None, bm25.query_vector("城市里的水"))
    assert chinese.coverage_mean > 0.0  # the background holds Chinese text too


def test_scores_rise_with_evidence_and_either_branch_suffices() -> None:
    null = Null(0.1, 0.05, 0.0, COVERAGE_STD_MIN)
    cosines = [0.1, 0.3, 0.5, 0.7, 0.9]
    dense = [dense_evidence_score(null, c) for c in cosines]
    assert dense == sorted(dense) and dense[0] < 0.01 and dense[-1] > 0.99
    assert sparse_evidence_score(null, 0.0) == 0.0
    for c in cosines:
        for cov in (0.0, 0.05, 0.2, 0.5):
            both = evidence_score(null, c, cov)
            # a weak branch never drags a strong one down
            assert both >= max(dense_evidence_score(null, c), sparse_evidence_score(null, cov))
    # one shared word is no evidence on its own: only the coverage beyond the chunk's
    # best-matching word counts
    assert sparse_evidence_score(null, 0.4, single=0.4) == 0.0
    assert sparse_evidence_score(null, 0.4, single=0.1) > sparse_evidence_score(
        null, 0.4, single=0.3)
    # the middle of each branch's scale is 0.5
    middle_cos = null.dense_mean + EVIDENCE.dense[0] * null.dense_std
    assert dense_evidence_score(null, middle_cos) == pytest.approx(0.5)


def test_a_branch_whose_best_candidate_is_no_better_than_unrelated_text_gets_no_weight(
        ) -> None:
    plan = QueryPlan.of(KBSettings(), "hybrid", 10, 1.2)
    null = Null(0.4, 0.05, 0.0, COVERAGE_STD_MIN)
    # dense: the best candidate is 1 background deviation up (all-MiniLM on Chinese)
    weak_dense = _Pool({"a": 0.45, "b": 0.43}, {"b": 0.4, "c": 0.2}, both=True)
    assert _weights(weak_dense, plan, null) == (0.0, plan.sparse_weight)
    # both branches stand out: the configured weights
    strong = _Pool({"a": 0.95}, {"a": 0.5}, both=True)
    assert _weights(strong, plan, null) == (plan.dense_weight, plan.sparse_weight)
    # neither stands out: the configured weights (nothing to choose by)
    neither = _Pool({"a": 0.41}, {"a": 0.01}, both=True)
    assert _weights(neither, plan, null) == (plan.dense_weight, plan.sparse_weight)
    # without a background (kb.score_scale: reference) the weights are never touched
    assert _weights(weak_dense, plan, None) == (plan.dense_weight, plan.sparse_weight)
    assert reliability(0.0, 9.0) == 0.0 and reliability(9.0, 9.0) == 1.0
    assert 0.0 < reliability(5.0, 9.0) < 1.0



def test_a_cjk_query_is_compared_with_the_background_in_its_script() -> None:
    """A multilingual model gives text in the query's script higher cosines; over the
    whole background that gap would count as spread. A CJK query's dense null is taken
    over the CJK passages only; any other query's over all of them."""
    from agent_search.kb._retrieval._background_texts import ENGLISH

    rng = np.random.default_rng(7)
    query = np.zeros(16, dtype=np.float32)
    query[0] = 1.0
    first = np.where(np.arange(len(TEXTS)) < len(ENGLISH), 0.3, 0.8)
    first = first + rng.normal(0.0, 0.02, len(TEXTS))
    rest = rng.normal(0.0, 1.0, (len(TEXTS), 15))
    rest *= (np.sqrt(1 - first ** 2) / np.linalg.norm(rest, axis=1))[:, None]
    background = np.column_stack([first, rest]).astype(np.float32)
    cjk = null_of(background, BM25(), query, None, "链条多久上一次油")
    other = null_of(background, BM25(), query, None, "how often should I lube my chain")
    assert cjk.dense_mean == pytest.approx(float(first[len(ENGLISH):].mean()), abs=1e-5)
    assert cjk.dense_std < 0.05 < other.dense_std
    assert other.dense_mean == pytest.approx(float(first.mean()), abs=1e-5)
