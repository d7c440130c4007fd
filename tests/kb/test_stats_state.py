"""The statistics kept up to date write by write equal a full rebuild from the points: bit
for bit for the counts and sums, the same postings (issue 33 item 2), on the state alone
and through both stores (Qdrant Edge, and qdrant-client's local mode as the server)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_search.kb._store import KBStore, PointData, SparseVec, _stats_state, scroll_all
from agent_search.kb._store._edge import EdgeStore
from agent_search.kb._store._server import ServerStore
from agent_search.kb._store._stats_state import StateError, StatsState, Vectors, build

DIMS = 4


def _vectors(seed: int) -> tuple[list[float], list[int], list[float]]:
    rng = np.random.default_rng(seed)
    dense = rng.normal(size=DIMS).astype(np.float32).tolist()
    terms = sorted(set(rng.integers(0, 30, size=int(rng.integers(0, 6))).tolist()))
    values = rng.uniform(0.05, 2.2, size=len(terms)).astype(np.float32).tolist()
    return dense, terms, values


def assert_same(a: StatsState, b: StatsState) -> None:
    """Counts and integer sums bit for bit; the postings as (point, term, weight)."""
    assert a.points == b.points
    assert set(a.slot_of) == set(b.slot_of)
    for x, y in ((a.dense_sum, b.dense_sum), (a.dense_second, b.dense_second),
                 (a.sums.terms, b.sums.terms), (a.sums.df, b.sums.df),
                 (a.sums.wsum, b.sums.wsum), (a.sums.wsq, b.sums.wsq)):
        assert x.dtype == y.dtype == np.int64
        np.testing.assert_array_equal(x, y)
    assert a.postings() == b.postings()
    va, vb = a.view(), b.view()
    query = SparseVec(sorted({int(t) for t in a.sums.terms[:4].tolist()}), [1.0] * min(
        4, len(a.sums.terms)))
    dense = np.asarray([0.3, -1.0, 0.2, 0.5], dtype=np.float32)
    ma, mb = va.moments(dense, query, 1.2), vb.moments(dense, query, 1.2)
    assert ma.dense_mean == mb.dense_mean and ma.dense_var == mb.dense_var
    assert ma.coverage_mean == mb.coverage_mean
    assert ma.coverage_var == pytest.approx(mb.coverage_var, rel=1e-12, abs=1e-15)


# an operation: (kind, point number, vector seed)
OPS = st.lists(st.tuples(st.sampled_from(["put", "put", "del"]), st.integers(0, 12),
                         st.integers(0, 10_000)), max_size=40)


@settings(max_examples=150, deadline=None)
@given(ops=OPS, block=st.sampled_from([2, 3, 2048]))
def test_incremental_state_equals_a_rebuild(ops: list[tuple[str, int, int]],
                                            block: int) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_stats_state, "BLOCK", block)  # several blocks with a few points
        state = StatsState(DIMS)
        live: dict[str, Vectors] = {}
        for kind, n, seed in ops:
            pid = str(n)
            old = live.pop(pid, None)
            if old is not None:
                state.remove([old])
            if kind == "put":
                dense, terms, values = _vectors(seed)
                live[pid] = Vectors(pid, dense if seed % 7 else None, terms, values)
                state.add([live[pid]])
        assert_same(state, build(iter(live.values()), DIMS, page=3))
        # and saved and loaded, it is the same state
        loaded, _, _ = StatsState.from_records(
            state.head_bytes(5, dict.fromkeys(state.blocks, 5)),
            {b: state.block_bytes(b, 5) for b in state.blocks})
        assert_same(loaded, state)


def test_a_point_counted_twice_or_never_is_an_error() -> None:
    state = StatsState(DIMS)
    dense, terms, values = _vectors(1)
    state.add([Vectors("a", dense, terms, values)])
    with pytest.raises(StateError, match="already"):
        state.add([Vectors("a", dense, terms, values)])
    with pytest.raises(StateError, match="not counted"):
        state.remove([Vectors("b", dense, terms, values)])


@contextmanager
def _store(kind: str) -> Iterator[KBStore]:
    from qdrant_client import QdrantClient

    with tempfile.TemporaryDirectory() as tmp:
        s: KBStore = (EdgeStore(Path(tmp) / "edge") if kind == "edge" else
                      ServerStore(QdrantClient(location=":memory:"), location="memory",
                                  local=True))
        try:
            yield s
        finally:
            s.close()


def _state(store: KBStore) -> StatsState:
    keeper = store._keeper  # type: ignore[attr-defined]
    state = keeper._entries["c"].state
    assert state is not None
    return state  # type: ignore[no-any-return]


@pytest.mark.parametrize("kind", ["edge", "server"])
@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rounds=st.lists(OPS, min_size=1, max_size=4))
def test_writes_through_a_store_equal_a_rebuild(kind: str,
                                                rounds: list[list[tuple[str, int, int]]]
                                                ) -> None:
    """Adds, replacements and removals in rounds, each settled as an ingest settles: the
    kept statistics equal the repair's rebuild from the stored points, and the saved
    ones load as the same."""
    with _store(kind) as store:
        store.create("c", DIMS, {"dimensions": DIMS}, {})
        for ops in rounds:
            for op, n, seed in ops:
                pid = str(n + 1)
                if op == "put":
                    dense, terms, values = _vectors(seed)
                    store.upsert("c", [PointData(pid, dense, SparseVec(terms, values),
                                                 {"n": n})])
                else:
                    store.delete("c", [pid])
            store.settle("c")
            kept = _state(store)
            assert kept.points == store.count("c")
            before = StatsState.from_records(*store._keeper.vault("c").read())[0]  # type: ignore[attr-defined,misc]
            assert_same(before, kept)
        rebuilt = build((Vectors(r.id, r.dense, r.sparse.indices if r.sparse else [],
                                 r.sparse.values if r.sparse else [])
                         for r in scroll_all(store, "c", payload=False, vectors=True)), DIMS)
        assert_same(kept, rebuilt)
        assert store.repair("c").points == kept.points
        assert_same(_state(store), kept)


def _put(store: KBStore, numbers: range, seed: int = 0) -> None:
    points = []
    for n in numbers:
        dense, terms, values = _vectors(seed + n)
        points.append(PointData(str(n + 1), dense, SparseVec(terms, values), {"n": n}))
    store.upsert("c", points)


def _rebuilt(store: KBStore) -> StatsState:
    return build((Vectors(r.id, r.dense, r.sparse.indices if r.sparse else [],
                          r.sparse.values if r.sparse else [])
                  for r in scroll_all(store, "c", payload=False, vectors=True)), DIMS)


def test_a_crash_before_the_save_makes_the_next_reader_rebuild(tmp_path: Path) -> None:
    """Points written, the process gone before the statistics were saved: its marker is
    left, and the next process's statistics are those of the points, not the saved ones."""
    store = EdgeStore(tmp_path / "edge")
    store.create("c", DIMS, {"dimensions": DIMS}, {})
    _put(store, range(6))
    store.settle("c")
    _put(store, range(4, 12), seed=100)  # replaces two, adds six: never settled
    store.delete("c", ["1"])
    # "killed": the points are durable (Edge's write-ahead log), no settle, no save
    store._shards.pop("c").close()
    store._lock_file.close()  # type: ignore[union-attr]
    store._lock_file = None
    folder = tmp_path / "edge" / "c" / "stats"
    assert list(folder.glob("writing-*"))
    del store
    again = EdgeStore(tmp_path / "edge")
    stats = again.stats("c")
    assert stats is not None and stats.points == again.count("c") == 11
    assert_same(_state(again), _rebuilt(again))
    assert not list(folder.glob("writing-*"))
    again.close()


def test_a_server_writer_that_died_is_rebuilt_after_its_marker_expires(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from qdrant_client import QdrantClient

    from agent_search.kb._store import _stats_vault

    client = QdrantClient(location=":memory:")
    writer = ServerStore(client, location="memory", local=True)
    writer.create("c", DIMS, {"dimensions": DIMS}, {})
    _put(writer, range(5))
    writer.settle("c")
    _put(writer, range(5, 9), seed=7)  # the writer dies here: no settle
    reader = ServerStore(client, location="memory", local=True)  # another process
    stats = reader.stats("c")  # the marker is fresh: a writer may be at work
    assert stats is not None and stats.points == 5
    monkeypatch.setattr(_stats_vault, "MARKER_TTL", 0.0)
    reader._keeper._entries.clear()  # type: ignore[attr-defined]  # the next check
    stats = reader.stats("c")
    assert stats is not None and stats.points == reader.count("c") == 9
    assert_same(_state(reader), _rebuilt(reader))
    assert reader._keeper.vault("c").markers() == []  # type: ignore[attr-defined]


def test_two_server_writers_at_once_end_with_the_statistics_of_the_points() -> None:
    """Two processes writing one server collection: the one that settles while the other
    writes rebuilds, and so does the other (the saved generation moved under it)."""
    from qdrant_client import QdrantClient

    client = QdrantClient(location=":memory:")
    a = ServerStore(client, location="memory", local=True)
    b = ServerStore(client, location="memory", local=True)
    a.create("c", DIMS, {"dimensions": DIMS}, {})
    _put(a, range(4))
    _put(b, range(2, 9), seed=50)
    b.settle("c")
    _put(a, range(9, 12), seed=9)
    a.settle("c")
    fresh = ServerStore(client, location="memory", local=True)
    stats = fresh.stats("c")
    assert stats is not None and stats.points == fresh.count("c") == 12
    assert_same(_state(fresh), _rebuilt(fresh))
    assert_same(_state(a), _state(fresh))
    assert fresh.collections() == ["c"]  # the statistics' sibling is not a collection
    assert fresh.drop("c") and not client.collection_exists("_stats.c")
