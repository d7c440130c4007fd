"""Collection statistics: a query's coverage moments against the brute-force ones over
every chunk, with terms that co-occur (where taking them as independent is wrong)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agent_search.kb._store import CollectionStats, SparseVec
from agent_search.kb._store import _stats as stats_module
from agent_search.kb._store._stats_state import StatsState, Vectors, build


def _stats(rows: list[tuple[list[float] | None, SparseVec]]) -> CollectionStats:
    return build((Vectors(str(i), d, s.indices, s.values) for i, (d, s) in enumerate(rows)),
                 3).view()


def _without_postings(stats: CollectionStats) -> CollectionStats:
    return CollectionStats(stats.points, stats.dense_mean, stats.dense_second, stats.terms,
                           stats.df, stats.weight_sum, stats.weight_sq_sum, None)


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
    state = build((Vectors(str(i), d, s.indices, s.values) for i, (d, s) in enumerate(rows)),
                  3)
    stats = state.view()
    loaded, _, _ = StatsState.from_records(state.head_bytes(1, dict.fromkeys(state.blocks, 1)),
                                           {b: state.block_bytes(b, 1) for b in state.blocks})
    loaded_view = loaded.view()
    for query in (SparseVec([1, 2, 3], [1.0, 1.0, 1.0]), SparseVec([2, 5, 42], [1.0, 2.0, 1.0]),
                  SparseVec([4], [1.0]), SparseVec([99], [1.0])):
        coverage = _brute_force(rows, stats, query, 1.2)
        for s in (stats, loaded_view):
            m = s.moments(None, query, 1.2)
            assert m.coverage_mean == pytest.approx(float(coverage.mean()), rel=1e-6, abs=1e-12)
            assert m.coverage_var == pytest.approx(float(coverage.var()), rel=1e-5, abs=1e-12)
    # the topic's terms always come together: the independent-terms estimate is far off
    topic = SparseVec([1, 2, 3], [1.0, 1.0, 1.0])
    legacy = _without_postings(stats)
    exact = float(_brute_force(rows, stats, topic, 1.2).var())
    assert legacy.moments(None, topic, 1.2).coverage_var < 0.6 * exact


def test_beyond_the_postings_budget_the_commonest_terms_count_as_independent(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _collection(4)
    stats = _stats(rows)
    legacy = _without_postings(stats)
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
    stats = build(iter([]), 3).view()
    m = stats.moments(None, SparseVec([1], [1.0]), 1.2)
    assert (m.points, m.coverage_mean, m.coverage_var) == (0, 0.0, 0.0)


def test_a_saved_state_missing_a_block_is_not_loaded() -> None:
    """A head whose block is gone (or of another save) is refused: the keeper then
    rebuilds rather than using statistics that are not those of the points."""
    from agent_search.kb._store._stats_state import StateError

    state = build((Vectors(str(i), d, s.indices, s.values)
                   for i, (d, s) in enumerate(_collection(3, 20))), 3)
    head = state.head_bytes(2, dict.fromkeys(state.blocks, 2))
    with pytest.raises(StateError, match="missing"):
        StatsState.from_records(head, {})
    with pytest.raises(StateError, match="another save"):
        StatsState.from_records(head, {b: state.block_bytes(b, 1) for b in state.blocks})
    with pytest.raises(StateError):
        StatsState.from_records(b"not an npz", {})
