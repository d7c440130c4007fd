"""Per-key token buckets: ``burst`` requests at once, refilled at ``per_minute``.

Buckets are keyed by the identity's ``key_id``, of which there are as many as configured
keys (plus the anonymous one), so memory (and the shared table) stays bounded whatever
callers send. :class:`SharedRateLimiter` keeps them in the database the workers share
(what the service uses); :class:`RateLimiter` in this process (its fallback).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass
from typing import Any

import anyio
import sqlalchemy as sa
import sqlalchemy.dialects.sqlite
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

log = logging.getLogger("agent_search.server")


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


class RateLimiter:
    """``take(key)`` → 0 when allowed, else the seconds until a token is available."""

    def __init__(self, per_minute: float, burst: int) -> None:
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()

    def take(self, key: str, *, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = self._buckets[key] = _Bucket(self.burst, now)
            elapsed = max(0.0, now - bucket.updated)
            bucket.tokens = min(self.burst, bucket.tokens + elapsed * self.rate)
            bucket.updated = now
            if bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                return 0.0
            return (1.0 - bucket.tokens) / self.rate


def retry_after_header(wait: float) -> str:
    """Whole seconds, at least 1 (HTTP's Retry-After has no fractions)."""
    return str(max(1, math.ceil(wait)))


_TRIES = 3
"""Rounds of spend / read / insert one take tries before it is refused as contended."""

BUSY_TIMEOUT_S = 0.1
"""How long a take waits for a locked shared store (SQLite's busy timeout, PostgreSQL's
``lock_timeout``) before the process-local bucket decides: a writer holding the record
database for seconds must not hold every request, and a worker thread, that long."""

RETRY_SHARED_AFTER_S = 1.0
"""After the shared store failed, takes go straight to the local buckets for this long,
then one take tries the store again (so a lock costs each request nothing, and the shared
buckets are back within a second of it clearing)."""

_META = sa.MetaData()
BUCKETS = sa.Table(
    "agent_search_rate_limits", _META,
    sa.Column("key_id", sa.String(128), primary_key=True),
    sa.Column("tokens", sa.Float, nullable=False),
    sa.Column("updated", sa.Float, nullable=False),
)
"""One row per key; the name is in the project's reserved namespace, so the db handler
never offers it as a model (:mod:`agent_search.db._reserved`)."""


class SharedRateLimiter:
    """The token buckets in a SQL database every worker (and host) of the service shares
    — the record store's (``server.records_url``, else ``db.url``, else the local
    ``records.sqlite``) — so ``--workers N`` does not multiply the configured limit.

    A take is one atomic ``UPDATE`` that refills by the time elapsed (wall clock, shared
    by hosts) and spends a token only when one is there; a key's first take inserts its
    row. A bucket is not worth an fsync: commits do not wait for the disk (SQLite
    ``synchronous=NORMAL`` under WAL, PostgreSQL ``synchronous_commit=off``). On SQLite
    the take runs on the standard driver in one worker-thread hop (aiosqlite's hop per
    statement cost ~4 ms a take on a busy machine; this way ~0.6 ms). With
    ``shared=False`` (one process) the process-local buckets alone decide. If the
    database cannot be reached or is locked (past :data:`BUSY_TIMEOUT_S`), the
    process-local bucket decides, with a warning logged once, for
    :data:`RETRY_SHARED_AFTER_S` before the store is tried again: a failing or busy
    store must not take the service down, nor slow it."""

    retry_shared_after = RETRY_SHARED_AFTER_S

    def __init__(self, per_minute: float, burst: int, url: URL, *,
                 shared: bool = True) -> None:
        self.shared = shared
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self.url = url
        self._sqlite = url.get_backend_name() == "sqlite"
        self._sync: sa.Engine | None = None
        self._async: AsyncEngine | None = None
        self._local = RateLimiter(per_minute, burst)
        self._created = False
        self._create_lock = anyio.Lock()
        self._warned = False
        self._shared_after = 0.0  # monotonic time before which the store is not tried
        self._spend, self._read = self._statements()

    def _sync_engine(self) -> sa.Engine:
        if self._sync is None:
            self._sync = sa.create_engine(self.url.set(drivername="sqlite"),
                                          connect_args={"timeout": BUSY_TIMEOUT_S})
            sa.event.listen(self._sync, "connect", _sqlite_fast_commits)
        return self._sync

    def _async_engine(self) -> AsyncEngine:
        if self._async is None:
            self._async = create_async_engine(self.url)
        return self._async

    async def aclose(self) -> None:
        if self._sync is not None:
            self._sync.dispose()
            self._sync = None
        if self._async is not None:
            await self._async.dispose()
            self._async = None

    async def take(self, key: str, *, now: float | None = None) -> float:
        """0 when allowed, else the seconds until a token is available."""
        if not self.shared or time.monotonic() < self._shared_after:
            return self._local.take(key)
        now = time.time() if now is None else now
        try:
            if self._sqlite:
                return await anyio.to_thread.run_sync(self._take_sqlite, key, now)
            return await self._take_async(key, now)
        except (sa.exc.SQLAlchemyError, OSError) as exc:
            self._shared_after = time.monotonic() + self.retry_shared_after
            if not self._warned:
                self._warned = True
                log.warning("rate limit: the shared store failed (%s); using this "
                            "process's buckets, trying the store again every %.0f s",
                            type(exc).__name__, self.retry_shared_after)
            return self._local.take(key)

    def _statements(self) -> tuple[sa.Update, sa.Select[Any]]:
        """The take's two statements, built once (``now`` and ``key`` are bound at each
        execution): spend a token if one is there; read what is there."""
        b = BUCKETS.c
        now = sa.bindparam("now", type_=sa.Float)
        key = sa.bindparam("key", type_=sa.String)
        elapsed = sa.case((b.updated < now, now - b.updated), else_=0.0)
        refilled = b.tokens + elapsed * self.rate
        available = sa.case((refilled > self.burst, self.burst), else_=refilled)
        spend = (BUCKETS.update().where(b.key_id == key, available >= 1.0)
                 .values(tokens=available - 1.0,
                         updated=sa.case((b.updated < now, now), else_=b.updated)))
        return spend, sa.select(available).where(b.key_id == key)

    def _wait(self, tokens: float | None) -> float:
        return max(0.0, (1.0 - (tokens or 0.0)) / self.rate)

    def _take_sqlite(self, key: str, now: float) -> float:
        engine = self._sync_engine()
        if not self._created:
            _META.create_all(engine)
            self._created = True
        params = {"key": key, "now": now}
        with engine.begin() as conn:
            for _ in range(_TRIES):
                if conn.execute(self._spend, params).rowcount == 1:
                    return 0.0
                row = conn.execute(self._read, params).first()
                if row is None:
                    inserted = conn.execute(sa.dialects.sqlite.insert(BUCKETS).values(
                        key_id=key, tokens=self.burst - 1.0, updated=now)
                        .on_conflict_do_nothing()).rowcount
                    if inserted == 1:
                        return 0.0
                elif row[0] < 1.0:
                    return self._wait(row[0])
        return self._contended()

    async def _take_async(self, key: str, now: float) -> float:
        engine = self._async_engine()
        if not self._created:
            await self._create_table(engine)
        async with engine.begin() as conn:
            if engine.dialect.name == "postgresql":
                await conn.exec_driver_sql("SET LOCAL synchronous_commit TO OFF")
                await conn.exec_driver_sql(
                    f"SET LOCAL lock_timeout TO '{int(BUSY_TIMEOUT_S * 1000)}ms'")
            params = {"key": key, "now": now}
            for _ in range(_TRIES):
                if (await conn.execute(self._spend, params)).rowcount == 1:
                    return 0.0
                # the UPDATE saw no spendable row; a read may see one that another
                # worker's first take committed meanwhile: spend again, never assume
                row = (await conn.execute(self._read, params)).first()
                if row is None:
                    try:
                        async with conn.begin_nested():
                            await conn.execute(BUCKETS.insert().values(
                                key_id=key, tokens=self.burst - 1.0, updated=now))
                        return 0.0
                    except sa.exc.IntegrityError:  # another worker's first take came first
                        continue
                if row[0] < 1.0:
                    return self._wait(row[0])
        return self._contended()

    def _contended(self) -> float:
        """A token was seen but never won in :data:`_TRIES` rounds: other workers are
        spending the same key this instant. Refuse this request, briefly."""
        return min(1.0, self._wait(0.0))

    async def _create_table(self, engine: AsyncEngine) -> None:
        """Create the bucket table once. The first takes of this process wait for one
        creation; workers starting together may still race (PostgreSQL then refuses the
        loser's CREATE with a duplicate-type error), and the loser finds the table made."""
        async with self._create_lock:
            if self._created:
                return
            try:
                async with engine.begin() as conn:
                    await conn.run_sync(_META.create_all)
            except sa.exc.DBAPIError:  # another worker created it meanwhile: now a no-op
                async with engine.begin() as conn:
                    await conn.run_sync(_META.create_all)
            self._created = True


class KeyedRateLimiter:
    """The service's limiter: each key's bucket under the default settings
    (``server.rate_limit``), or under its own where the key sets them
    (``api_keys[].rate_limit``). Keys of the same settings share one limiter (and its
    connection to the shared store); every bucket keeps its own row either way."""

    def __init__(self, default: SharedRateLimiter,
                 own: dict[str, SharedRateLimiter] | None = None) -> None:
        self.default = default
        self.own = dict(own or {})

    def for_key(self, key: str) -> SharedRateLimiter:
        return self.own.get(key, self.default)

    async def take(self, key: str, *, now: float | None = None) -> float:
        """0 when ``key`` may go on, else the seconds until its bucket has a token."""
        return await self.for_key(key).take(key, now=now)

    async def aclose(self) -> None:
        for limiter in {id(x): x for x in [self.default, *self.own.values()]}.values():
            await limiter.aclose()


def _sqlite_fast_commits(dbapi_connection: Any, _: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()
