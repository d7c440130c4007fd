"""The embedded store: Qdrant Edge, Qdrant's own engine in the process.

Layout under ``$AGENT_SEARCH_HOME/kb/collections/``::

    .lock                  held (flock) by the one process that has this store open
    <name>/collection.json what the collection was built with (model, BM25, …)
    <name>/shard/          the Edge shard (segments + write-ahead log)
    <name>/stats/          the statistics for the calibrated fusion: head.npz, block-N.npz
                           and writing-TOKEN markers (agent_search.kb._store._stats_keeper)

One process opens a data home's store at a time: a second one gets
:class:`StoreLockedError` at once (the lock is taken without waiting; Edge also locks each
shard's write-ahead log). Every write goes to the shard's write-ahead log before it
returns, so a process killed mid-ingest leaves a shard that opens with every acknowledged
write; the statistics are updated by each write and saved when the ingest settles, and
a writing marker, put before the first write of a session and taken away after that
save, makes the next reader rebuild them if the process died in between. A collection
folder without ``collection.json`` is a creation that did not finish and is cleared when
the name is created again.

Calls block; the kb calls them from worker threads. Calls on one collection are
serialised by that collection's lock; the store's own lock guards only the list of
collections, creating and dropping one, and closing (taken first when both are held). So
one tenant's write — its statistics update reads the written points back and sums them,
tens of milliseconds on a busy machine — never holds another collection's search.

Flushing (the shard's ``flush()``: sync its write-ahead log and segments to disk) is
coalesced, not done per write. ``update()`` appends each operation to the write-ahead log
(a memory-mapped file) before applying it, and a shard replays that log when it is
loaded, so a process killed after an acknowledged write but before any flush reopens
with the write (``tests/kb/test_store_durability.py`` kills one to hold this). What a
flush adds is surviving an operating-system crash or power loss, and qdrant-edge-py 0.9
holds the interpreter lock for the whole call (it syncs every file of every segment:
50-350 ms on a busy shared disk), so the server's event loop and every other thread stop
for it. A background thread therefore:

* every ``flush_interval`` seconds in which a collection was written, syncs that shard's
  write-ahead log files with ``os.fsync`` — which releases the interpreter lock — so an
  OS crash or a power loss loses at most the last interval's acknowledged writes, as
  before (the segments' own files need no sync for that: loading replays the log over
  them);
* calls the shard's ``flush()`` (which also lets the log be truncated, keeping a reload
  short) once the collection has had ``quiet_flush_interval`` seconds without writes
  (default four intervals), or after ``full_flush_interval`` seconds of writes without
  such a pause: a flood of uploads stalls the process once a minute, not once every two
  seconds, and a tenant writing now and then (an upload every few seconds, each a pause
  of a pass or two) not once per upload;
* and :meth:`EdgeStore.close` flushes whatever is left.

The statistics saved for writes an OS crash lost may count points the shard lost:
``agent-search kb repair`` rebuilds them.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import queue
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import IO, Any, cast

import qdrant_edge as qe

from agent_search.kb._store._base import (
    DENSE,
    SPARSE,
    CollectionInfo,
    CollectionNotFound,
    PointData,
    QuerySpec,
    Record,
    RescoreQuery,
    Scored,
    StoreError,
    StoreLockedError,
    VectorQuery,
    check_collection_name,
    engine_id,
)
from agent_search.kb._store._filters import (
    Condition,
    FilterError,
    Group,
    HasId,
    IndexKind,
    IsEmpty,
    IsNull,
    Match,
    MatchAny,
    MatchExcept,
    MatchText,
    Range,
)
from agent_search.kb._store._sparse import SparseVec
from agent_search.kb._store._stats import CollectionStats
from agent_search.kb._store._stats_keeper import StatsKeeper
from agent_search.kb._store._stats_state import Repaired
from agent_search.kb._store._stats_vault import FileVault

_META = "collection.json"
_SCHEMA: dict[IndexKind, qe.PayloadSchemaType] = {
    "keyword": qe.PayloadSchemaType.Keyword, "integer": qe.PayloadSchemaType.Integer,
    "float": qe.PayloadSchemaType.Float, "bool": qe.PayloadSchemaType.Bool,
    "text": qe.PayloadSchemaType.Text}


def _config(dimensions: int) -> qe.EdgeConfig:
    """A collection's shard: named dense (cosine) and BM25 (IDF) vectors, searched by one
    thread. With the default pool (one thread per CPU) the two queries of a batch ran in
    parallel, which on a shared 2-core machine cost more than it saved: the hybrid's
    store-only p50 on SciFact went 6.5-6.9 → 4.7-5.4 ms with one thread."""
    return qe.EdgeConfig(
        vectors={DENSE: qe.EdgeVectorParams(size=dimensions, distance=qe.Distance.Cosine)},
        sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        max_search_threads=1)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


class EdgeStore:
    """Collections as Qdrant Edge shards under one folder (see the module docstring)."""

    def __init__(self, root: Path, *, flush_interval: float = 2.0,
                 full_flush_interval: float = 60.0,
                 quiet_flush_interval: float | None = None) -> None:
        self.root = root
        self.location = str(root)
        self.lock = threading.RLock()  # the store's: the list, create, drop, close
        self._locks: dict[str, threading.RLock] = {}  # each collection's own
        self._locks_guard = threading.Lock()
        self._shards: dict[str, qe.EdgeShard] = {}
        self._meta: dict[str, dict[str, Any]] = {}
        self._indexed: dict[str, set[str]] = {}  # payload keys known to be indexed
        # what every search asks first, kept until this store changes it (no other
        # process can: the data home's lock)
        self._names: list[str] | None = None
        self._points: dict[str, int] = {}
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the knowledge base at {root}: "
                             f"{_first_line(exc)}") from exc
        self._lock_file = self._take_lock()
        self._keeper = StatsKeeper(self, lambda name: FileVault(self._dir(name)))
        self._flusher = _Flusher(self._sync_logs, self._flush_dirty, flush_interval,
                                 full_flush_interval, quiet_flush_interval)
        self._flusher.start()  # now, at the opener's priority (see _Flusher)
        self._writer = _WriteThread()

    @property
    def flushes(self) -> int:
        """How many times a shard has been flushed since this store was opened."""
        return self._flusher.count

    def _take_lock(self) -> IO[str] | None:
        try:
            import fcntl
        except ImportError:  # no flock (Windows): the shards' own locks still apply
            return None
        handle = open(self.root / ".lock", "a+", encoding="utf-8")  # noqa: SIM115
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            handle.seek(0)
            holder = handle.read().strip()[:20]
            handle.close()
            raise StoreLockedError(
                f"the knowledge base at {self.root} is open in another process"
                f"{f' (pid {holder})' if holder.isdigit() else ''}; stop that process "
                "or use a Qdrant server (kb.url) for concurrent access") from exc
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        return handle

    # -- collections ----------------------------------------------------------------------

    def _dir(self, name: str) -> Path:
        return self.root / check_collection_name(name)

    def lock_of(self, name: str) -> threading.RLock:
        """The lock that serialises the calls on collection ``name`` (made on first use;
        never removed: one per name this process has touched)."""
        lock = self._locks.get(name)
        if lock is None:
            with self._locks_guard:
                lock = self._locks.setdefault(name, threading.RLock())
        return lock

    def collections(self) -> list[str]:
        with self.lock:
            if self._names is None:
                self._names = sorted(p.name for p in self.root.iterdir()
                                     if p.is_dir() and (p / _META).is_file())
            return list(self._names)

    def exists(self, name: str) -> bool:
        with self.lock_of(name):
            return (self._dir(name) / _META).is_file()

    def _read_meta(self, name: str) -> dict[str, Any]:
        meta = self._meta.get(name)
        if meta is not None:
            return meta
        path = self._dir(name) / _META
        if not path.is_file():
            raise CollectionNotFound(name)
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(loaded, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as exc:
            raise StoreError(f"cannot open collection {name!r} at {path} (corrupt or "
                             f"unreadable storage): {_first_line(exc)}") from exc
        self._meta[name] = loaded
        return loaded

    def _write_meta(self, name: str, meta: dict[str, Any]) -> None:
        path = self._dir(name) / _META
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(meta, indent=1, sort_keys=True), encoding="utf-8")
        tmp.replace(path)
        self._meta[name] = dict(meta)

    def _shard(self, name: str) -> qe.EdgeShard:
        shard = self._shards.get(name)
        if shard is not None:
            return shard
        dims = int(self._read_meta(name).get("dimensions") or 0)
        path = self._dir(name) / "shard"
        try:
            try:  # shards made before the search pool was set get it here
                shard = qe.EdgeShard.load(str(path), _config(dims))
            except Exception as exc:
                if "WouldBlock" in str(exc) or not dims:
                    raise
                shard = qe.EdgeShard.load(str(path))
        except Exception as exc:  # the binding raises plain Exception
            if "WouldBlock" in str(exc):
                raise StoreLockedError(
                    f"collection {name!r} at {path} is open in another process; stop that "
                    "process or use a Qdrant server (kb.url) for concurrent access") from exc
            raise StoreError(f"cannot open collection {name!r} at {path} (corrupt or "
                             f"unreadable storage): {_first_line(exc)}") from exc
        self._shards[name] = shard
        return shard

    def info(self, name: str) -> CollectionInfo:
        with self.lock_of(name):
            meta = self._read_meta(name)
            points = self._points.get(name)
            if points is None:
                points = self._points[name] = int(
                    self._shard(name).count(qe.CountRequest(exact=True)))
            return CollectionInfo(name, points, dict(meta))

    def create(self, name: str, dimensions: int, meta: dict[str, Any],
               indexes: dict[str, IndexKind]) -> None:
        with self.lock, self.lock_of(name):
            folder = self._dir(name)
            if (folder / _META).is_file():
                raise StoreError(f"collection {name!r} already exists")
            if folder.exists():  # a creation that did not finish
                shutil.rmtree(folder)
            folder.mkdir(parents=True)
            try:
                shard = qe.EdgeShard.create(str(folder / "shard"), _config(dimensions))
            except Exception as exc:
                raise StoreError(f"cannot create collection {name!r}: "
                                 f"{_first_line(exc)}") from exc
            self._shards[name] = shard
            for key, kind in indexes.items():
                shard.update(qe.UpdateOperation.create_field_index(key, _SCHEMA[kind]))
            self._write_meta(name, meta)
            self._names = None
            self._keeper.created(name, dimensions)

    def update_meta(self, name: str, meta: dict[str, Any]) -> None:
        with self.lock_of(name):
            self._read_meta(name)
            self._write_meta(name, meta)

    def drop(self, name: str) -> bool:
        with self.lock, self.lock_of(name):
            folder = self._dir(name)
            if not folder.exists():
                return False
            shard = self._shards.pop(name, None)
            if shard is not None:
                shard.close()
            self._meta.pop(name, None)
            self._names = None
            self._points.pop(name, None)
            self._indexed.pop(name, None)
            self._keeper.forget(name)
            shutil.rmtree(folder)
            return True

    def ensure_indexes(self, name: str, fields: dict[str, IndexKind]) -> None:
        """Create the payload indexes a filter needs that the collection lacks."""
        known = self._indexed.get(name)
        if not fields or (known is not None and known.issuperset(fields)):
            return
        with self.lock_of(name):
            shard = self._shard(name)
            have = set(shard.info().payload_schema)
            for key, kind in fields.items():
                if key not in have:
                    shard.update(qe.UpdateOperation.create_field_index(key, _SCHEMA[kind]))
                    have.add(key)
            self._indexed[name] = have

    # -- points ---------------------------------------------------------------------------

    def upsert(self, name: str, points: list[PointData]) -> None:
        if not points:
            return
        self._writer.call(self._upsert, name, points)

    def _upsert(self, name: str, points: list[PointData]) -> None:
        edge_points = [qe.Point(engine_id(p.id), {DENSE: p.dense,
                                       SPARSE: qe.SparseVector(p.sparse.indices,
                                                               p.sparse.values)}, p.payload)
                       for p in points]
        with self.lock_of(name):
            shard = self._shard(name)
            self._points.pop(name, None)
            self._keeper.write(name, [p.id for p in points], lambda: shard.update(
                qe.UpdateOperation.upsert_points(edge_points)))

    def delete(self, name: str, ids: list[str]) -> None:
        if not ids:
            return
        self._writer.call(self._delete, name, ids)

    def _delete(self, name: str, ids: list[str]) -> None:
        with self.lock_of(name):
            shard = self._shard(name)
            self._points.pop(name, None)
            self._keeper.write(name, ids, lambda: shard.update(
                qe.UpdateOperation.delete_points([engine_id(i) for i in ids])), delete=True)

    def scroll(self, name: str, flt: Condition | None, *, limit: int, offset: str | None,
               payload: bool | list[str], vectors: bool) -> tuple[list[Record], str | None]:
        request = qe.ScrollRequest(offset=engine_id(offset) if offset is not None else None,
                                   limit=limit, filter=_filter(flt),
                                   with_payload=_with_payload(payload), with_vector=vectors)
        with self.lock_of(name):
            records, nxt = self._shard(name).scroll(request)
        return [_record(r) for r in records], (str(nxt) if nxt is not None else None)

    def query_batch(self, name: str, queries: list[QuerySpec]) -> list[list[Scored]]:
        if not queries:
            return []
        requests = [_request(q) for q in queries]
        with self.lock_of(name):
            shard = self._shard(name)
            found = (shard.query_batch(qe.QueryBatchRequest(requests)) if len(requests) > 1
                     else [shard.query(requests[0])])
        # reading a point's payload converts it from the engine's form each time: only
        # for the queries that asked for it, once
        return [[Scored(str(p.id), p.score, dict(p.payload or {})) for p in points]
                if getattr(q, "with_payload", False) else
                [Scored(str(p.id), p.score) for p in points]
                for q, points in zip(queries, found, strict=True)]

    def retrieve(self, name: str, ids: list[str], *, payload: bool,
                 vectors: bool | list[str]) -> list[Record]:
        if not ids:
            return []
        with self.lock_of(name):
            records = self._shard(name).retrieve([engine_id(i) for i in ids],
                                                 with_payload=payload,
                                                 with_vector=vectors)
        return [_record(r) for r in records]

    def count(self, name: str, flt: Condition | None = None) -> int:
        with self.lock_of(name):
            return int(self._shard(name).count(qe.CountRequest(exact=True,
                                                               filter=_filter(flt))))

    # -- statistics -----------------------------------------------------------------------

    def stats(self, name: str) -> CollectionStats | None:
        with self.lock_of(name):
            return self._keeper.stats(name)

    def settle(self, name: str) -> None:
        """After an ingest: let the engine optimise its segments, save the statistics the
        writes updated, and have the shard flushed in the background within
        ``flush_interval`` (the writes are durable against a killed process already, by
        the write-ahead log: see the module docstring)."""
        self._writer.call(self._settle, name)

    def _settle(self, name: str) -> None:
        with self.lock_of(name):
            shard = self._shard(name)
            shard.optimize()
            finish = self._keeper.settle(name)
        finish()  # the statistics' files, written and synced without the collection's lock
        self._flusher.mark(name)

    def _sync_logs(self, names: set[str]) -> None:
        """``fsync`` the write-ahead log files (and their folder) of the named collections
        whose shards are open: what makes their acknowledged writes survive an OS crash.
        Without any lock of the store and with the interpreter lock released (``os.fsync``):
        searches and writes go on meanwhile. A log file the shard removed meanwhile (it
        truncates its log after a flush) is skipped."""
        for name in sorted(names):
            if name not in self._shards:
                continue
            wal = self._dir(name) / "shard" / "wal"
            try:
                files = [wal, *wal.iterdir()]
            except FileNotFoundError:
                continue
            for path in files:
                _fsync(path)
            self._flusher.syncs += 1

    def _flush_dirty(self, names: set[str]) -> None:
        """Flush the named collections' shards that are still open (the flusher's work)."""
        for name in sorted(names):
            with self.lock_of(name):
                shard = self._shards.get(name)
                if shard is not None:
                    shard.flush()
                    self._flusher.count += 1

    def repair(self, name: str) -> Repaired:
        """Rebuild the collection's statistics from every point."""
        with self.lock_of(name):
            self._read_meta(name)
            return self._keeper.repair(name)

    def close(self) -> None:
        """Stop the background flusher, flush every open shard and release the lock."""
        self._flusher.stop()  # before taking the lock: its last pass may be waiting for it
        self._writer.stop()  # after the writes in progress
        with self.lock:
            for name, shard in list(self._shards.items()):
                with self.lock_of(name):
                    with contextlib.suppress(Exception):
                        shard.flush()
                        self._flusher.count += 1
                    shard.close()
            self._shards.clear()
            if self._lock_file is not None:
                self._lock_file.close()
                self._lock_file = None


def _fsync(path: Path) -> None:
    """``os.fsync`` of a file or folder; one that is gone is skipped."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class _Flusher:
    """A daemon thread that, for the collections marked since its last pass and at most
    once per ``interval`` seconds, calls ``sync(names)`` (cheap: the write-ahead logs),
    and ``flush(names)`` (the shard's whole flush, which holds the interpreter lock) for
    each written collection once it has gone ``quiet_interval`` seconds without writes
    (default ``QUIET_PASSES`` intervals) or ``full_interval`` seconds unflushed. A burst
    of writes costs one sync a pass and one flush after it. The thread is started with
    the store (:meth:`start`), so it runs at the OS priority of the thread that opened the
    store — not at that of the first writer, which in the HTTP service is an upload's
    ingest thread of lower priority: a whole flush holds the interpreter lock, and a
    low-priority thread that the OS stops while it holds it stops every other thread of
    the process until the OS lets it go on. It ends at :meth:`stop`."""

    QUIET_PASSES = 4
    """Intervals without writes before a whole flush, by default: one pass without writes
    (what it was) came between any two uploads of a tenant posting every few seconds, so
    each of them stalled the process once more."""

    def __init__(self, sync: Callable[[set[str]], None], flush: Callable[[set[str]], None],
                 interval: float, full_interval: float,
                 quiet_interval: float | None = None) -> None:
        self._sync = sync
        self._flush = flush
        self._interval = max(0.0, interval)
        self._full_interval = max(0.0, full_interval)
        self._quiet_interval = max(0.0, self.QUIET_PASSES * self._interval
                                   if quiet_interval is None else quiet_interval)
        self._dirty: set[str] = set()
        self._unflushed: dict[str, float] = {}  # name -> when its first unflushed write was synced
        self._written: dict[str, float] = {}  # name -> the last pass that saw it written
        self._cond = threading.Condition()
        self._stopped = False
        self._thread: threading.Thread | None = None
        self.count = 0  # whole flushes
        self.syncs = 0  # log syncs

    def mark(self, name: str) -> None:
        with self._cond:
            if self._stopped:
                return
            self._dirty.add(name)
            self._cond.notify()

    def start(self) -> None:
        with self._cond:
            if self._thread is None and not self._stopped:
                self._thread = threading.Thread(target=self._run, name="edge-flush",
                                                daemon=True)
                self._thread.start()

    def _next(self) -> tuple[set[str], set[str]] | None:
        """After the coalescing window: the collections written in it (to sync) and
        those due a whole flush; ``None`` once stopped."""
        with self._cond:
            self._cond.wait_for(lambda: bool(self._dirty or self._unflushed) or self._stopped)
            if not self._stopped:
                # the coalescing window: writes marked meanwhile share this pass
                self._cond.wait_for(lambda: self._stopped, timeout=self._interval)
            if self._stopped:
                return None  # close() flushes everything
            written, self._dirty = self._dirty, set()
            return written, self.due(written, time.monotonic())

    def due(self, written: set[str], now: float) -> set[str]:
        """The collections due a whole flush at a pass at ``now`` that saw writes to
        ``written``: those not written for ``quiet_interval`` seconds (their writes
        paused), and those unflushed for ``full_interval`` seconds; taken off the
        unflushed ones."""
        for name in written:
            self._unflushed.setdefault(name, now)
            self._written[name] = now
        due = {name for name, since in self._unflushed.items()
               if now - since >= self._full_interval or (
                   name not in written
                   and now - self._written.get(name, since) >= self._quiet_interval)}
        for name in due:
            del self._unflushed[name]
            self._written.pop(name, None)
        return due

    def _run(self) -> None:
        while (work := self._next()) is not None:
            written, due = work
            for step, names in ((self._sync, written), (self._flush, due)):
                try:
                    if names:
                        step(names)
                except Exception:  # tried again next pass (a failed sync stops no flush)
                    with self._cond:
                        if not self._stopped:
                            self._dirty |= names

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._dirty.clear()
            self._unflushed.clear()
            self._written.clear()
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join()


class _WriteThread:
    """A thread of the store's own that runs its writes (upsert, delete, settle), started
    with the store, so at the OS priority of the thread that opened it; the caller waits
    for the result (or the exception) as if it had made the call itself.

    Why: a write holds the interpreter lock through the engine's update and the
    statistics update (the written points read back and summed, ~50 ms at load 10). In
    the service the writer is an upload's ingest thread, niced so that the other tenants'
    requests win the CPU; a niced thread that the OS stops while it holds the interpreter
    lock stops every thread of the process until the OS lets it go on (a priority
    inversion: on a busy machine that can be tens of milliseconds and more). Here the
    lock is held at the server's priority; the upload's own thread waits without it."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[..., Any], tuple[Any, ...],
                                            Future[Any]] | None] = queue.SimpleQueue()
        self._stopped = False
        self._guard = threading.Lock()  # a job is queued before the end, or run here
        self._thread = threading.Thread(target=self._run, name="edge-write", daemon=True)
        self._thread.start()

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        if threading.current_thread() is self._thread:
            return fn(*args)
        done: Future[Any] = Future()
        with self._guard:
            queued = not self._stopped
            if queued:
                self._jobs.put((fn, args, done))
        return done.result() if queued else fn(*args)

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            fn, args, done = job
            if done.set_running_or_notify_cancel():
                try:
                    done.set_result(fn(*args))
                except BaseException as exc:  # the caller's: raised in its thread
                    done.set_exception(exc)

    def stop(self) -> None:
        """Run what is queued, then end the thread; later calls run in the caller's."""
        with self._guard:
            self._stopped = True
            self._jobs.put(None)
        if self._thread is not threading.current_thread():
            self._thread.join()


# -- translation to Edge's models ---------------------------------------------------------

def _with_payload(payload: bool | list[str]) -> Any:
    return payload if isinstance(payload, bool) else qe.PayloadSelector.Include(list(payload))


def _record(r: Any) -> Record:
    vec = r.vector if isinstance(r.vector, dict) else {}
    dense = vec.get(DENSE)
    sparse = vec.get(SPARSE)
    return Record(str(r.id), dict(r.payload or {}),
                  list(dense) if isinstance(dense, list) else None,
                  SparseVec(list(sparse.indices), list(sparse.values))
                  if sparse is not None and hasattr(sparse, "indices") else None)


def _vector(v: list[float] | SparseVec) -> Any:
    return qe.SparseVector(v.indices, v.values) if isinstance(v, SparseVec) else v


def _request(q: QuerySpec) -> qe.QueryRequest:
    if isinstance(q, VectorQuery):
        return qe.QueryRequest(limit=q.limit, query=qe.Query.Nearest(_vector(q.vector),
                                                                      using=q.using),
                               filter=_filter(q.filter), with_payload=q.with_payload,
                               with_vector=False)
    prefetches = [qe.Prefetch(limit=p.limit, query=qe.Query.Nearest(_vector(p.vector),
                                                                     using=p.using),
                              filter=_filter(p.filter)) for p in q.prefetch]
    if isinstance(q, RescoreQuery):
        return qe.QueryRequest(limit=q.limit, prefetches=prefetches,
                               query=qe.Query.Nearest(_vector(q.vector), using=q.using),
                               with_payload=False, with_vector=False)
    fusion: Any = (qe.Fusion.Rrf(k=q.rrf_k, weights=list(q.weights) if q.weights else None)
                   if q.fusion == "rrf" else qe.Fusion.Dbsf())
    return qe.QueryRequest(limit=q.limit, prefetches=prefetches, query=fusion,
                           with_payload=q.with_payload, with_vector=False)


def _filter(c: Condition | None) -> qe.Filter | None:
    if c is None:
        return None
    out = _condition(c)
    return out if isinstance(out, qe.Filter) else qe.Filter(must=[out])


def _values(values: tuple[str, ...] | tuple[int, ...]) -> list[str] | list[int]:
    return cast("list[str] | list[int]", list(values))


def _condition(c: Condition) -> Any:
    """The engine's form of ``c``. Translations are kept for the parts that recur in
    every query (the caller's visibility, a request's filter), not for ``has_id`` lists,
    nor for boolean matches (``True == 1``: a kept ``1`` must not answer for one)."""
    if isinstance(c, HasId):
        return qe.HasIdCondition({engine_id(i) for i in c.ids})
    if _uncached(c):
        return _translate(c)
    return _translated(c)


def _uncached(c: Condition) -> bool:
    if isinstance(c, Group):
        return any(_uncached(x) for x in (*c.must, *c.should, *c.must_not))
    return isinstance(c, HasId) or (isinstance(c, Match) and isinstance(c.value, bool))


@functools.lru_cache(maxsize=1024)
def _translated(c: Condition) -> Any:
    return _translate(c)


def _translate(c: Condition) -> Any:
    translate = _TRANSLATIONS.get(type(c))
    if translate is None:
        raise TypeError(f"unknown filter condition {c!r}")
    return translate(c)


def _match(c: Match) -> Any:
    if isinstance(c.value, bool):
        raise FilterError(f"filter on {c.key!r}: the embedded store cannot match a "
                          "boolean (qdrant-edge-py 0.9 reads it as 1); store the field as "
                          "a string or an integer")
    return qe.FieldCondition(c.key, match=qe.MatchValue(c.value))


_TRANSLATIONS: dict[type, Callable[[Any], Any]] = {
    Group: lambda c: qe.Filter(must=[_condition(x) for x in c.must] or None,
                               should=[_condition(x) for x in c.should] or None,
                               must_not=[_condition(x) for x in c.must_not] or None),
    Match: _match,
    MatchAny: lambda c: qe.FieldCondition(c.key, match=qe.MatchAny(_values(c.values))),
    MatchExcept: lambda c: qe.FieldCondition(c.key, match=qe.MatchExcept(_values(c.values))),
    Range: lambda c: qe.FieldCondition(c.key, range=qe.RangeFloat(gte=c.gte, gt=c.gt,
                                                                  lte=c.lte, lt=c.lt)),
    MatchText: lambda c: qe.FieldCondition(c.key, match=qe.MatchText(c.text)),
    IsNull: lambda c: qe.IsNullCondition(c.key),
    IsEmpty: lambda c: qe.IsEmptyCondition(c.key),
}
"""The engine's form of each kind of condition (``HasId`` is translated uncached, in
:func:`_condition`)."""
