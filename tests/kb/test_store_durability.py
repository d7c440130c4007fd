"""The embedded store's writes are durable without a flush per write, and a burst of
writes is flushed once, not once each.

A process that acknowledged writes (``upsert`` and ``settle`` returned) and is then
killed with SIGKILL — no flush, no close — must leave a store that reopens with every
acknowledged point, searchable, and its statistics. Small synthetic points: no model."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from agent_search.kb._store._base import DENSE, PointData, VectorQuery
from agent_search.kb._store._edge import EdgeStore
from agent_search.kb._store._sparse import SparseVec

_DIMS = 4


def _point(i: int) -> PointData:
    return PointData(str(1000 + i), [1.0, 0.1 * i, 0.2, 0.3],
                     SparseVec([1, 2 + i], [1.0, 0.5]), {"text": f"point {i}"})


_WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from agent_search.kb._store._base import PointData
    from agent_search.kb._store._edge import EdgeStore
    from agent_search.kb._store._sparse import SparseVec

    root, first, n = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    store = EdgeStore(root, flush_interval=3600.0)  # no background flush before the kill
    if not store.exists("c"):
        store.create("c", 4, {"dimensions": 4}, {})
    for i in range(first, first + n):
        store.upsert("c", [PointData(str(1000 + i), [1.0, 0.1 * i, 0.2, 0.3],
                                     SparseVec([1, 2 + i], [1.0, 0.5]),
                                     {"text": f"point {i}"})])
        store.settle("c")
    print("acknowledged", store.flushes, flush=True)
    time.sleep(600)
""")


def _write_and_kill(root: Path, first: int, n: int) -> int:
    """Run a writer of points ``first .. first+n-1`` in a child process, SIGKILL it once
    it acknowledged them all, and return how many flushes it had made by then."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(root), str(first), str(n)],
                            stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().split()
        assert line[:1] == ["acknowledged"], f"the writer failed: {line}"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    return int(line[1])


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_acknowledged_writes_survive_a_killed_process_without_a_flush(
        tmp_path: Path) -> None:
    root = tmp_path / "edge"
    assert _write_and_kill(root, 0, 3) == 0  # the child never flushed
    assert _write_and_kill(root, 3, 2) == 0  # and again, on the reopened store
    store = EdgeStore(root)
    try:
        assert store.info("c").points == 5
        got = {r.id: r.payload["text"] for r in store.retrieve(
            "c", [str(1000 + i) for i in range(5)], payload=True, vectors=False)}
        assert got == {str(1000 + i): f"point {i}" for i in range(5)}
        hits = store.query_batch("c", [VectorQuery(DENSE, _point(4).dense, 1)])
        assert [h.id for h in hits[0]] == ["1004"]
        stats = store.stats("c")
        assert stats is not None and stats.points == 5
    finally:
        store.close()


def test_a_burst_of_writes_is_flushed_once_and_read_at_once(tmp_path: Path) -> None:
    store = EdgeStore(tmp_path / "edge", flush_interval=3600.0)
    store.create("c", _DIMS, {"dimensions": _DIMS}, {})
    for i in range(20):
        store.upsert("c", [_point(i)])
        store.settle("c")
        # read-your-writes: each point is found as soon as its write returned
        assert [r.id for r in store.retrieve("c", [str(1000 + i)], payload=False,
                                             vectors=False)] == [str(1000 + i)]
    assert store.flushes == 0  # within the interval: nothing flushed yet
    store.close()
    assert store.flushes == 1  # close flushes the one collection once


def test_the_background_flush_runs_without_a_close(tmp_path: Path) -> None:
    store = EdgeStore(tmp_path / "edge", flush_interval=0.01)
    try:
        store.create("c", _DIMS, {"dimensions": _DIMS}, {})
        store.upsert("c", [_point(0)])
        flushed = threading.Event()
        original = store._flush_dirty

        def spy(names: set[str]) -> None:
            original(names)
            flushed.set()

        store._flusher._flush = spy
        store.settle("c")
        assert flushed.wait(30), "no background flush after a settle"
        assert store.flushes == 1
    finally:
        store.close()
