"""Collection statistics: a query's coverage moments against the brute-force ones over
every chunk, with terms that co-occur (where taking them as independent is wrong)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agent_search.kb import _stats as stats_module
from agent_search.kb._sparse import SparseVec
from agent_search.kb._stats import CollectionStats


def _collection(seed: int, n: int = 400) -> list[tuple[list[float] | None, SparseVec]]:
    """Chunks whose terms 1-3 come together (one topic) and 4-9 at random."""
    rng = np.random.default_rng(seed)
    rows: list[tuple[list[float] | None, SparseVec]] = []
    for i in range(n):
        terms: dict[int, float] = {}
        if rng.random() < 0.3:
            terms.update({t: float(rng.uniform(0.5, 2.0)) for t in (1, 2, 3)})
        for t in range(4, 10):
            if rng.random() < 0.2:
                terms[t] = float(rng.uniform(0.2, 2.0))
        ids = sorted(terms)
        rows.append(([1.0, float(i % 7), 0.5] if i % 5 else None,
                     SparseVec(ids, [terms[t] for t in ids])))
    return rows


def _brute_force(rows: list[tuple[list[float] | None, SparseVec]], stats: CollectionStats,
                 query: SparseVec, k1: float) -> np.ndarray:  # type: ignore[type-arg]
    weights = (stats.idf(query.indices) * np.asarray(query.values)
               / stats.sparse_bound(query, k1))
    a = dict(zip(query.indices, weights.tolist(), strict=True))
    return np.asarray([sum(a.get(t, 0.0) * w for t, w in zip(s.indices, s.values,
                                                              strict=True))
                       for _, s in rows])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_coverage_moments_are_exact_with_co_occurring_terms(seed: int,
                                                            tmp_path: Path) -> None:
    rows = _collection(seed)
    stats = CollectionStats.build(iter(rows), 3)
    stats.save(tmp_path / "stats.npz")
    loaded = CollectionStats.load(tmp_path / "stats.npz")
    for query in (SparseVec([1, 2, 3], [1.0, 1.0, 1.0]), SparseVec([2, 5, 42], [1.0, 2.0, 1.0]),
                  SparseVec([4], [1.0]), SparseVec([99], [1.0])):
        coverage = _brute_force(rows, stats, query, 1.2)
        for s in (stats, loaded):
            m = s.moments(None, query, 1.2)
            assert m.coverage_mean == pytest.approx(float(coverage.mean()), rel=1e-6, abs=1e-12)
            assert m.coverage_var == pytest.approx(float(coverage.var()), rel=1e-5, abs=1e-12)
    # the topic's terms always come together: the independent-terms estimate is far off
    topic = SparseVec([1, 2, 3], [1.0, 1.0, 1.0])
    legacy = CollectionStats(stats.points, stats.dense_mean, stats.dense_second, stats.terms,
                             stats.df, stats.weight_sum, stats.weight_sq_sum,
                             np.zeros(0, np.int64), np.zeros(0, np.int32),
                             np.zeros(0, np.float32))
    exact = float(_brute_force(rows, stats, topic, 1.2).var())
    assert legacy.moments(None, topic, 1.2).coverage_var < 0.6 * exact


def test_beyond_the_postings_budget_the_commonest_terms_count_as_independent(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _collection(4)
    stats = CollectionStats.build(iter(rows), 3)
    legacy = CollectionStats(stats.points, stats.dense_mean, stats.dense_second, stats.terms,
                             stats.df, stats.weight_sum, stats.weight_sq_sum,
                             np.zeros(0, np.int64), np.zeros(0, np.int32),
                             np.zeros(0, np.float32))
    query = SparseVec([1, 2, 3, 4], [1.0] * 4)
    exact = float(_brute_force(rows, stats, query, 1.2).var())
    assert stats.moments(None, query, 1.2).coverage_var == pytest.approx(exact, rel=1e-5)
    monkeypatch.setattr(stats_module, "POSTINGS_BUDGET", 0)
    assert stats.moments(None, query, 1.2).coverage_var == pytest.approx(
        legacy.moments(None, query, 1.2).coverage_var, rel=1e-9)
    # room for the rarest term only: its own variance exact, the others independent
    rarest = int(np.argmin(stats.df[:4]))
    monkeypatch.setattr(stats_module, "POSTINGS_BUDGET", int(stats.df[rarest]))
    partial = stats.moments(None, query, 1.2).coverage_var
    assert partial == pytest.approx(legacy.moments(None, query, 1.2).coverage_var, rel=1e-6)
    assert partial < exact


def test_an_empty_collection_has_no_variance() -> None:
    stats = CollectionStats.build(iter([]), 3)
    m = stats.moments(None, SparseVec([1], [1.0]), 1.2)
    assert (m.points, m.coverage_mean, m.coverage_var) == (0, 0.0, 0.0)


def test_statistics_saved_without_postings_are_not_loaded(tmp_path: Path) -> None:
    """A data home written before the postings were kept: loading fails (the store then
    recomputes the statistics) rather than silently estimating."""
    stats = CollectionStats.build(iter(_collection(3, 20)), 3)
    np.savez(tmp_path / "stats.npz", points=np.asarray([stats.points]),
             dense_mean=stats.dense_mean, dense_second=stats.dense_second, terms=stats.terms,
             df=stats.df, weight_sum=stats.weight_sum, weight_sq_sum=stats.weight_sq_sum)
    with pytest.raises(KeyError):
        CollectionStats.load(tmp_path / "stats.npz")
