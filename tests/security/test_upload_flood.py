"""An upload flood must not cost the other tenants (their latency is measured by
``make bench-load``; these tests hold the mechanisms). Before: tenant B's posts were
read and parsed whole before a full write queue refused them, a rate-limited post was
answered at once (a client retrying in a loop got hundreds of 429s a second, each one
a request the event loop served), and an admitted ingest ran on the shared worker
threads at the server's priority, without a pause. Now:

* a kb write of text documents takes its place in the write queue before its body is
  read: a full share is refused with 429 while the body has not been sent;
* a rate-limited request is answered after a pause, its body unread;
* a request's ingest runs in a thread of its own at a lower OS priority, pausing after
  each file so it works at most half of its time."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agent_search import SearchConfig
from agent_search.kb import _uploads, ingest_texts
from agent_search.server import Service

from ..support.http_service import KEYS, auth, serve_with_kb, two_tenant_keys, write_project

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Service]]:
    root = tmp_path_factory.mktemp("upload-flood")
    cdir, adir = write_project(root, server={
        "api_keys": two_tenant_keys(), "rate_limit": {"per_minute": 1, "burst": 30}})
    (cdir / "search.yao").write_text(json.dumps({
        "kb": {"enabled": True, "ingest_per_tenant": 2, "ingest_queue": 4},
        "options": {"timeout": 30}}))
    yield from serve_with_kb(root, cdir, adir)


def _head_only(url: str, path: str, who: str, length: int = 5000) -> socket.socket:
    """A POST whose headers are sent and whose body never is."""
    host, port = url.removeprefix("http://").split(":")
    s = socket.create_connection((host, int(port)), timeout=10)
    s.sendall((f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
               f"Authorization: Bearer {KEYS[who]}\r\nContent-Type: application/json\r\n"
               f"Content-Length: {length}\r\n\r\n").encode())
    return s


def _answer(s: socket.socket) -> tuple[int, str]:
    data = b""
    while b"\r\n\r\n" not in data or len(data) < data.index(b"\r\n\r\n") + 10:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode(errors="replace")


def test_a_full_write_share_is_refused_before_the_body_is_read(
        served: tuple[str, Service]) -> None:
    url, _ = served
    holding = [_head_only(url, "/v1/kb/flood/documents", "bob") for _ in range(2)]
    third = _head_only(url, "/v1/kb/flood/documents", "bob")
    try:
        status, body = _answer(third)  # the body was never sent
        assert status == 429, body
        assert "kb.ingest_per_tenant" in body
    finally:
        for s in [*holding, third]:
            s.close()


def test_a_rate_limited_post_is_refused_with_its_body_unread(
        served: tuple[str, Service]) -> None:
    url, _ = served
    with httpx.Client(base_url=url, headers=auth("alice"), timeout=30) as http:
        spent = [http.get("/v1/models").status_code for _ in range(31)]  # the burst of 30
    assert spent.count(429) >= 1
    s = _head_only(url, "/v1/search", "alice", length=100)
    try:
        status, body = _answer(s)  # the body was never sent
        assert status == 429 and "rate limit" in body
    finally:
        s.close()


async def test_an_ingest_from_outside_runs_in_a_background_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}
    base = os.getpriority(os.PRIO_PROCESS, 0)

    def record(*args: Any, **kwargs: Any) -> Any:
        seen["thread"] = threading.current_thread().name
        seen["nice"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        seen["progress"] = args[6] if len(args) > 6 else kwargs.get("progress")
        return "report"

    monkeypatch.setattr(_uploads, "_ingest_texts_sync", record)
    config = SearchConfig(home=tmp_path)
    assert await ingest_texts(config, "c", [("a.md", "# A\n\nbees")], bounded=True) == "report"
    assert seen["thread"] == "agent-search-background-ingest"
    assert seen["nice"] >= min(base + _uploads.BACKGROUND_NICE, 19)
    assert seen["progress"] is not None  # the pacer
    # a local caller (not bounded) is not slowed down
    seen.clear()
    await ingest_texts(config, "c", [("a.md", "# A\n\nbees")])
    assert seen["thread"] != "agent-search-background-ingest" and seen["progress"] is None


def test_the_pacer_pauses_as_long_as_the_file_took(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([0.0, 0.3, 0.3, 1.5, 1.5])
    pauses: list[float] = []
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(_uploads.time, "perf_counter", lambda: next(clock))
    monkeypatch.setattr(_uploads.time, "sleep", pauses.append)
    pace = _uploads._Pacer(0.5, lambda done, total: calls.append((done, total)))
    pace(10, 30)  # a file took 0.3 s
    pace(30, 30)  # the next 1.2 s
    assert pauses == pytest.approx([0.3, 1.2])
    assert calls == [(10, 30), (30, 30)]


async def test_a_rate_limited_request_is_answered_after_a_pause(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_search.server import _middleware
    from agent_search.server._metrics import Metrics
    from agent_search.server.settings import ServerSettings

    class Empty:
        async def take(self, key: str) -> float:
            return 0.1  # no token for 0.1 s

    pauses: list[float] = []

    async def pause(seconds: float) -> None:
        pauses.append(seconds)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("a refused request reached the route")

    async def receive() -> Any:
        raise AssertionError("a refused request's body was read")

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    monkeypatch.setattr(_middleware.anyio, "sleep", pause)
    guard = _middleware.Authenticate(app, keys=_middleware.KeyRing(ServerSettings()),
                                     limiter=Empty(),  # type: ignore[arg-type]
                                     metrics=Metrics([]))
    await guard({"type": "http", "path": "/v1/search", "headers": []}, receive, send)
    assert sent[0]["status"] == 429
    assert pauses == [_middleware.REFUSAL_PAUSE_S / 2]  # at least half a second


async def test_a_refused_upload_reads_no_body_and_touches_no_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The refusal's whole cost, at the app's door: tenant B's write share is full, and
    its next post is answered 429 without a byte of its body read (the ASGI ``receive``
    is never called), without an ingest started and without a file of the data home
    created or changed (no store opened, no statistics written)."""
    from agent_search.kb import Access
    from agent_search.kb._ingest._admission import reserve_write
    from agent_search.kb.settings import KBSettings
    from agent_search.server import _kb_routes

    from ..support.http_service import in_process_app

    app, _ = in_process_app(tmp_path)
    config = app.state.service.searcher.config
    settings = KBSettings.from_config(config)
    held = [reserve_write(settings, config.home, "flood", Access.of("bob", "t2"),
                          bounded=True) for _ in range(settings.ingest_per_tenant)]

    def no_ingest(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a refused upload started an ingest")

    monkeypatch.setattr(_uploads, "_ingest_texts_sync", no_ingest)
    monkeypatch.setattr(_kb_routes, "REFUSAL_PAUSE_S", 0.0)
    before = sorted((str(p), p.stat().st_mtime_ns) for p in config.home.rglob("*"))
    body = json.dumps({"documents": [{"name": "a.md", "text": "x" * 4000}] * 5}).encode()
    reads: list[int] = []

    async def receive() -> dict[str, Any]:
        reads.append(1)
        return {"type": "http.request", "body": body, "more_body": False}

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": "/v1/kb/flood/documents",
             "raw_path": b"/v1/kb/flood/documents", "root_path": "", "query_string": b"",
             "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
                         (b"content-length", str(len(body)).encode()),
                         (b"authorization", f"Bearer {KEYS['bob']}".encode())],
             "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 80)}
    try:
        await app(scope, receive, send)
    finally:
        for ticket in held:
            ticket.release()
    start = next(m for m in sent if m["type"] == "http.response.start")
    answer = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    assert start["status"] == 429, answer
    assert b"kb.ingest_per_tenant" in answer
    assert reads == []  # the body was never read
    assert sorted((str(p), p.stat().st_mtime_ns) for p in config.home.rglob("*")) == before


class _FlushSpy:
    """A shard that records the thread of each ``flush()`` (and passes every call on)."""

    def __init__(self, shard: Any) -> None:
        self._shard = shard
        self.flushes: list[str] = []

    def flush(self) -> None:
        self.flushes.append(threading.current_thread().name)
        self._shard.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._shard, name)


@pytest.fixture(scope="module")
def served_unlimited(
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Service]]:
    """The project served with a rate limit the uploads below stay under (the module's
    other server's is spent by the tests of refusals)."""
    root = tmp_path_factory.mktemp("upload-burst")
    cdir, adir = write_project(root, server={
        "api_keys": two_tenant_keys(), "rate_limit": {"per_minute": 600, "burst": 60}})
    (cdir / "search.yao").write_text(json.dumps({"kb": {"enabled": True},
                                                 "options": {"timeout": 30}}))
    yield from serve_with_kb(root, cdir, adir)


def test_admitted_uploads_do_not_flush_the_store_each(
        served_unlimited: tuple[str, Service]) -> None:
    """An admitted upload's write is not followed by a flush in its own thread: the
    binding's flush holds the interpreter lock for tens to hundreds of milliseconds,
    so one per upload stalled the event loop and every other tenant's search once per
    upload. Before, each ingest's settle flushed the shard inline; now a burst is
    flushed later, once, by the store's own flush thread."""
    from agent_search.kb._store import get_store
    from agent_search.kb.settings import KBSettings

    url, service = served_unlimited
    config = service.searcher.config
    first = httpx.post(f"{url}/v1/kb/flush-burst/documents", headers=auth("alice"),
                       timeout=120, json={"documents": [{"name": "a0.md", "text": "bees"}]})
    assert first.status_code == 200, first.text
    store: Any = get_store(KBSettings.from_config(config), config.home)
    spy = _FlushSpy(store._shards["flush-burst"])
    store._shards["flush-burst"] = spy
    try:
        for i in range(1, 5):
            before = store.count("flush-burst")
            r = httpx.post(f"{url}/v1/kb/flush-burst/documents", headers=auth("alice"),
                           timeout=120, json={"documents": [
                               {"name": f"a{i}.md", "text": f"wasps number {i}"}]})
            assert r.status_code == 200, r.text
            assert store.count("flush-burst") > before  # read as soon as acknowledged
        inline = [name for name in spy.flushes if name != "edge-flush"]
        assert inline == [], f"uploads flushed in their own threads: {inline}"
    finally:
        store._shards["flush-burst"] = spy._shard


def _edge_point(i: int) -> Any:
    from agent_search.kb._store._base import PointData
    from agent_search.kb._store._sparse import SparseVec

    return PointData(str(1000 + i), [1.0, 0.1 * i, 0.2, 0.3], SparseVec([1, 2 + i], [1.0, 0.5]),
                     {"text": f"point {i}"})


def test_a_flood_of_writes_flushes_the_shard_whole_once_a_minute_not_every_pass(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shard's whole flush holds the interpreter lock (50-400 ms on a busy disk):
    before, a flood of uploads paid it at every pass of the flusher (every 2 s). Now a
    pass with writes only syncs the write-ahead log (``os.fsync``, the lock released);
    the whole flush waits for a pass without writes, or a minute of writes."""
    from agent_search.kb._store import _edge

    synced: list[str] = []
    monkeypatch.setattr(_edge, "_fsync", lambda path: synced.append(path.name))
    store = _edge.EdgeStore(tmp_path / "edge", flush_interval=3600.0,
                            full_flush_interval=60.0, quiet_flush_interval=8.0)
    try:
        store.create("c", 4, {"dimensions": 4}, {})
        store.upsert("c", [_edge_point(0)])
        store.settle("c")
        flusher = store._flusher  # its passes driven by hand, at the times given
        for t in range(0, 60, 2):  # writes in every pass for 58 s
            assert flusher.due({"c"}, 1000.0 + t) == set()
        assert flusher.due({"c"}, 1060.0) == {"c"}  # a minute without a pause
        assert flusher.due({"c"}, 1062.0) == set()  # written again: a new minute
        assert flusher.due(set(), 1064.0) == set()  # a pause of a pass: not yet
        assert flusher.due(set(), 1070.0) == {"c"}  # the writes paused 8 s
        assert flusher.due(set(), 1072.0) == set()  # flushed: nothing left
        store._sync_logs({"c"})  # what a pass with writes does
        assert "wal" in synced and any(name.startswith("open-") for name in synced)
    finally:
        store.close()
    assert store.flushes == 1  # close flushes what is left


def test_the_flusher_syncs_the_log_before_it_flushes_the_shard(tmp_path: Path) -> None:
    from agent_search.kb._store._edge import EdgeStore

    store = EdgeStore(tmp_path / "edge", flush_interval=0.01, full_flush_interval=3600.0)
    steps: list[str] = []
    flushed = threading.Event()
    try:
        store.create("c", 4, {"dimensions": 4}, {})
        store.upsert("c", [_edge_point(0)])
        sync, flush = store._flusher._sync, store._flusher._flush

        def sync_spy(names: set[str]) -> None:
            steps.append("sync")
            sync(names)

        def flush_spy(names: set[str]) -> None:
            steps.append("flush")
            flush(names)
            flushed.set()

        store._flusher._sync, store._flusher._flush = sync_spy, flush_spy
        store.settle("c")
        assert flushed.wait(30), "no flush after the writes paused"
        assert steps == ["sync", "flush"]
        assert store.flushes == 1 and store._flusher.syncs == 1
    finally:
        store.close()


def test_the_statistics_are_saved_without_the_store_lock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An ingest's settle saves the statistics it changed: two files, each synced to disk
    (30-60 ms a settle on a busy disk). Before, that was done holding the store's lock,
    and every other tenant's search waited for it; now a search of the same collection
    can take its lock while the files are written."""
    from agent_search.kb._store._edge import EdgeStore
    from agent_search.kb._store._stats_vault import FileVault

    store = EdgeStore(tmp_path / "edge", flush_interval=3600.0)
    free_during_save: list[bool] = []
    save = FileVault.save

    def spy(self: FileVault, *args: Any) -> None:
        def search_takes_the_lock() -> None:
            took = store.lock_of("c").acquire(timeout=5)
            if took:
                store.lock_of("c").release()
            free_during_save.append(took)

        other = threading.Thread(target=search_takes_the_lock)
        other.start()
        other.join()
        save(self, *args)

    try:
        store.create("c", 4, {"dimensions": 4}, {})
        monkeypatch.setattr(FileVault, "save", spy)
        store.upsert("c", [_edge_point(0)])
        store.settle("c")
        assert free_during_save == [True]
        stats = store.stats("c")
        assert stats is not None and stats.points == 1
    finally:
        store.close()


def test_a_statistics_save_that_failed_is_rebuilt_at_the_next_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_search.kb._store._edge import EdgeStore
    from agent_search.kb._store._stats_vault import FileVault

    store = EdgeStore(tmp_path / "edge", flush_interval=3600.0)
    save = FileVault.save
    failures = [OSError(28, "No space left on device")]

    def full_once(self: FileVault, *args: Any) -> None:
        if failures:
            raise failures.pop()
        save(self, *args)

    try:
        store.create("c", 4, {"dimensions": 4}, {})
        monkeypatch.setattr(FileVault, "save", full_once)
        store.upsert("c", [_edge_point(0)])
        with pytest.raises(OSError, match="No space"):
            store.settle("c")
        store.upsert("c", [_edge_point(1)])
        store.settle("c")
    finally:
        store.close()
    reopened = EdgeStore(tmp_path / "edge", flush_interval=3600.0)
    try:
        stats = reopened.stats("c")
        assert stats is not None and stats.points == 2
    finally:
        reopened.close()


def test_a_write_to_one_collection_does_not_hold_a_search_of_another(
        tmp_path: Path) -> None:
    """A write holds its collection's lock through the statistics update (the written
    points read back and summed: ~50 ms at load 10) and the marker's fsync at a write
    session's start. Before, the store had one lock, and tenant A's search of its own
    collection waited for tenant B's write; now each collection has its own."""
    from agent_search.kb._store._base import DENSE, VectorQuery
    from agent_search.kb._store._edge import EdgeStore

    store = EdgeStore(tmp_path / "edge", flush_interval=3600.0)
    inside, release = threading.Event(), threading.Event()
    write = store._keeper.write

    def held_write(name: str, *args: Any, **kwargs: Any) -> None:
        if name == "b":
            inside.set()
            assert release.wait(30), "the test never released the write"
        write(name, *args, **kwargs)

    read: dict[str, Any] = {}

    def a_searches(name: str) -> None:
        read["info"] = store.info(name).points
        read["count"] = store.count(name)
        stats = store.stats(name)
        read["stats"] = stats.points if stats is not None else None
        read["query"] = [p.id for p in store.query_batch(name, [VectorQuery(
            DENSE, [1.0, 0.0, 0.2, 0.3], 1)])[0]]

    try:
        for name in ("a", "b"):
            store.create(name, 4, {"dimensions": 4}, {})
        store.upsert("a", [_edge_point(0)])
        store.settle("a")
        store._keeper.write = held_write  # type: ignore[method-assign]
        writer = threading.Thread(target=store.upsert, args=("b", [_edge_point(1)]))
        writer.start()
        assert inside.wait(30), "the write never started"
        searcher = threading.Thread(target=a_searches, args=("a",))
        searcher.start()
        searcher.join(30)  # a guard against a hang, not a timing: it ends or it hangs
        held = searcher.is_alive()
        release.set()
        writer.join(30)
        searcher.join(30)
        assert not held, "A's search waited for B's write to another collection"
        assert read == {"info": 1, "count": 1, "stats": 1, "query": ["1000"]}
        assert store.count("b") == 1  # and B's write went through
    finally:
        release.set()
        store.close()


def test_a_write_still_holds_its_own_collection(tmp_path: Path) -> None:
    """Calls on one collection stay serialised: a count of B's collection waits for the
    write in progress on it (the engine's shard is not called from two threads)."""
    from agent_search.kb._store._edge import EdgeStore

    store = EdgeStore(tmp_path / "edge", flush_interval=3600.0)
    try:
        store.create("b", 4, {"dimensions": 4}, {})
        with store.lock_of("b"):  # what a write holds
            took = []
            other = threading.Thread(target=lambda: took.append(
                store.lock_of("b").acquire(blocking=False)))
            other.start()
            other.join()
            assert took == [False]
            assert store.lock_of("a") is not store.lock_of("b")
        store.upsert("b", [_edge_point(0)])
        assert store.count("b") == 1
    finally:
        store.close()


def _nice_of(native_id: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, native_id)


linux_threads = pytest.mark.skipif(
    not sys.platform.startswith("linux"),
    reason="a thread's own OS priority (setpriority on a thread id) is Linux's")


@linux_threads
def test_the_store_flusher_runs_at_the_openers_priority_not_the_first_writers(
        tmp_path: Path) -> None:
    """The flusher's whole flush holds the interpreter lock. Before, its thread was
    started by the first write's settle — in the service an upload's thread of lower
    priority — and so ran niced: on a busy machine the OS stopped it mid-flush while
    every other thread of the server waited for the lock. Now it starts with the store."""
    from agent_search.kb._store._edge import EdgeStore

    store = EdgeStore(tmp_path / "edge", flush_interval=3600.0)
    try:
        store.create("c", 4, {"dimensions": 4}, {})

        def niced_writer() -> None:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(),
                           _nice_of(threading.get_native_id()) + 10)
            store.upsert("c", [_edge_point(0)])
            store.settle("c")

        writer = threading.Thread(target=niced_writer)
        writer.start()
        writer.join()
        flusher = store._flusher._thread
        assert flusher is not None and flusher.native_id is not None
        assert _nice_of(flusher.native_id) == _nice_of(threading.get_native_id())
    finally:
        store.close()


@linux_threads
def test_an_upload_opens_the_store_at_the_servers_priority_before_it_is_niced(
        monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[int] = []
    monkeypatch.setattr(_uploads, "get_store",
                        lambda *_: opened.append(_nice_of(threading.get_native_id())))
    niced = _uploads.in_background(lambda _: _nice_of(threading.get_native_id()),
                                   store=(object(), Path("home")))  # type: ignore[arg-type]
    mine = _nice_of(threading.get_native_id())
    assert opened == [mine] and niced == mine + _uploads.BACKGROUND_NICE


@linux_threads
def test_the_service_tokenizes_each_query_in_the_asking_thread(tmp_path: Path) -> None:
    """The embedding tokenizer's thread pool is one per process: a query waited there
    behind an upload's batch, on threads that kept the priority of the (niced) upload
    that started them. The service turns the pool off (unless the operator set
    TOKENIZERS_PARALLELISM): a batch makes no thread."""
    import subprocess

    cdir, adir = write_project(tmp_path)
    code = f"""
import os
from pathlib import Path
from tokenizers import Tokenizer, models, pre_tokenizers
from agent_search.server import Service, ServiceOptions
Service.load(ServiceOptions(config_dir=Path({str(cdir)!r}), assistants_dir=Path({str(adir)!r}),
                            builtin_handlers=False))
tok = Tokenizer(models.WordLevel({{"a": 0, "[UNK]": 1}}, unk_token="[UNK]"))
tok.pre_tokenizer = pre_tokenizers.Whitespace()
before = set(os.listdir("/proc/self/task"))
tok.encode_batch(["a b a " * 50] * 2000)
print(len(set(os.listdir("/proc/self/task")) - before))
"""
    env = {k: v for k, v in os.environ.items() if k != "TOKENIZERS_PARALLELISM"}
    env["AGENT_SEARCH_HOME"] = str(tmp_path / "home")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-1] == "0"


@linux_threads
def test_a_niced_writer_holds_the_interpreter_lock_at_the_stores_priority(
        tmp_path: Path) -> None:
    """A write holds the interpreter lock through the engine's update and the statistics
    update. Before, an upload's write ran in its own niced thread, which the OS could
    stop while holding that lock, every tenant's request waiting meanwhile; now the
    store's own thread, at the opener's priority, runs it while the niced thread waits
    (its errors still raised to it)."""
    from agent_search.kb._store._edge import EdgeStore

    store = EdgeStore(tmp_path / "edge", flush_interval=3600.0)
    ran_at: list[int] = []
    write = store._keeper.write

    def spy(name: str, *args: Any, **kwargs: Any) -> None:
        ran_at.append(_nice_of(threading.get_native_id()))
        write(name, *args, **kwargs)

    errors: list[BaseException] = []
    try:
        store.create("c", 4, {"dimensions": 4}, {})
        store._keeper.write = spy  # type: ignore[method-assign]

        def niced_writer() -> None:
            me = threading.get_native_id()
            os.setpriority(os.PRIO_PROCESS, me, _nice_of(me) + 10)
            store.upsert("c", [_edge_point(0)])
            store.settle("c")
            try:
                store.upsert("missing", [_edge_point(1)])
            except Exception as exc:
                errors.append(exc)

        writer = threading.Thread(target=niced_writer)
        writer.start()
        writer.join()
        assert ran_at == [_nice_of(threading.get_native_id())]
        assert store.count("c") == 1
        assert [type(e).__name__ for e in errors] == ["CollectionNotFound"]
    finally:
        store.close()


def test_writes_every_few_seconds_do_not_flush_the_shard_whole_after_each(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tenant uploading every few seconds (each upload slowed by its pacing and its
    lower priority) left a pass of the flusher without writes between any two of them,
    and each such pass flushed the shard whole (~120 ms holding the interpreter lock,
    every other tenant's search stopped): the worst phase of ``make bench-load`` was one
    flooding client. Now the whole flush waits for a pause of ``QUIET_PASSES``
    intervals (or a minute of writes)."""
    from agent_search.kb._store import _edge

    monkeypatch.setattr(_edge, "_fsync", lambda path: None)
    store = _edge.EdgeStore(tmp_path / "edge", flush_interval=3600.0,
                            full_flush_interval=60.0)
    try:
        flusher = store._flusher  # its passes driven by hand, every 2 s
        flushed = [t for t in range(0, 40, 2)
                   if flusher.due({"c"} if t % 4 == 0 else set(), 1000.0 + t)]
        assert flushed == []  # one upload every 4 s for 40 s: no whole flush between
    finally:
        store.close()
    quiet = _edge.EdgeStore(tmp_path / "edge2", flush_interval=2.0)
    try:
        flusher = quiet._flusher
        assert flusher.due({"c"}, 0.0) == set()
        assert flusher.due(set(), 2.0) == set() and flusher.due(set(), 6.0) == set()
        assert flusher.due(set(), 8.0) == {"c"}  # four passes without writes
    finally:
        quiet.close()
