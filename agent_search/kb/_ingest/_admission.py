"""Whose write runs when: the turn of an ingest (or a removal) of one collection, taken
in the event loop *before* any worker thread is used.

Writes to one collection run one at a time (the collection's lock). They used to wait
for that lock inside a worker thread, so a few uploads to one collection held every
thread of anyio's default pool (40) and other tenants' searches, which need one, waited
behind them (issue 32 item 1: 10.8 s for a 0.02 s search). Here a write waits for its
turn on an async lock of the collection, holding no thread, and then runs on the kb's
own :class:`anyio.CapacityLimiter` (``kb.ingest_threads``), never on the default one that
searches use.

Bounded when the write comes from outside (the HTTP service): at most
``kb.ingest_queue`` writes running or waiting per collection (one more is refused,
:class:`IngestBusy` with status 503) and at most ``kb.ingest_per_tenant`` per tenant over
all collections (429); both carry a ``Retry-After``. A local caller (the CLI, a Python
program) waits its turn without a bound.

The state belongs to one event loop (an ``anyio.Lock`` is bound to the loop it is used
in); two loops in one process still exclude each other through the thread lock the
write takes in its thread (:func:`agent_search.kb._manage.collection_lock`).
"""

from __future__ import annotations

import contextlib
import weakref
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel

from agent_search.errors import RunError
from agent_search.kb._store import Access
from agent_search.kb.settings import KBSettings

RETRY_AFTER_SECONDS = 5
"""What a refused write is told to wait (``Retry-After``): about one small ingest."""


class IngestBusy(RunError):
    """A write refused because its collection's queue or its tenant's share is full:
    ``status`` 503 (the collection) or 429 (the tenant), ``retry_after`` seconds."""

    def __init__(self, message: str, *, status: int,
                 retry_after: int = RETRY_AFTER_SECONDS) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


@dataclass
class _Gate:
    """One event loop's turns: a lock and a count per collection, a count per tenant."""

    locks: dict[tuple[str, str], anyio.Lock] = field(default_factory=dict)
    queued: Counter[tuple[str, str]] = field(default_factory=Counter)
    tenants: Counter[str] = field(default_factory=Counter)
    limiter: anyio.CapacityLimiter = field(default_factory=lambda: anyio.CapacityLimiter(2))


_GATES: weakref.WeakKeyDictionary[Any, _Gate] = weakref.WeakKeyDictionary()


def _gate() -> _Gate:
    loop = anyio.lowlevel.current_token().native_token
    gate = _GATES.get(loop)
    if gate is None:
        gate = _GATES[loop] = _Gate()
    return gate


def tenant_of(access: Access) -> str:
    """The tenant a write counts against: its owner and team (anonymous callers are one)."""
    return f"{access.owner or ''}\x00{access.team or ''}"


def store_key(settings: KBSettings, home: Path) -> str:
    """Which store a collection lives in: the Qdrant server's URL or the data home."""
    return settings.url or str(home.expanduser().resolve())


class WriteTicket:
    """A write's place among its collection's and its tenant's writes, counted from
    :func:`reserve_write` until :meth:`release` (idempotent); :meth:`turn` waits for the
    collection's lock without a thread."""

    def __init__(self, gate: _Gate, key: tuple[str, str], tenant: str) -> None:
        self._gate = gate
        self._key = key
        self._tenant = tenant
        self._held = True
        gate.queued[key] += 1
        gate.tenants[tenant] += 1
        self._lock = gate.locks.setdefault(key, anyio.Lock())

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[anyio.CapacityLimiter]:
        """Hold the collection's turn; yields the limiter the write's thread runs on."""
        async with self._lock:
            yield self._gate.limiter

    def __del__(self) -> None:
        # a ticket dropped unreleased (a stream whose client left before it started)
        # must not keep its place for good
        self.release()

    def release(self) -> None:
        if not getattr(self, "_held", False):
            return
        self._held = False
        gate, key, tenant = self._gate, self._key, self._tenant
        gate.queued[key] -= 1
        gate.tenants[tenant] -= 1
        if gate.queued[key] <= 0:
            del gate.queued[key]
            gate.locks.pop(key, None)
        if gate.tenants[tenant] <= 0:
            del gate.tenants[tenant]


def reserve_write(settings: KBSettings, home: Path, collection: str, access: Access, *,
                  bounded: bool) -> WriteTicket:
    """A place for a write of ``collection`` (call it in the event loop). With ``bounded``
    (a request from outside), a full queue of the collection raises :class:`IngestBusy`
    (503) and a tenant over its share raises it with 429, before anything waits."""
    gate = _gate()
    gate.limiter.total_tokens = settings.ingest_threads
    key = (store_key(settings, home), collection)
    tenant = tenant_of(access)
    if bounded:
        if gate.queued[key] >= settings.ingest_queue:
            raise IngestBusy(
                f"collection {collection!r} has {gate.queued[key]} writes running or "
                f"waiting (kb.ingest_queue = {settings.ingest_queue}); try again later",
                status=503)
        if gate.tenants[tenant] >= settings.ingest_per_tenant:
            raise IngestBusy(
                f"you have {gate.tenants[tenant]} kb writes running or waiting "
                f"(kb.ingest_per_tenant = {settings.ingest_per_tenant}); try again later",
                status=429)
    return WriteTicket(gate, key, tenant)


@contextlib.asynccontextmanager
async def write_turn(settings: KBSettings, home: Path, collection: str, access: Access, *,
                     bounded: bool) -> AsyncIterator[anyio.CapacityLimiter]:
    """:func:`reserve_write`, then wait for the turn (without a thread); yields the
    limiter the write's worker thread runs on."""
    ticket = reserve_write(settings, home, collection, access, bounded=bounded)
    try:
        async with ticket.turn() as limiter:
            yield limiter
    finally:
        ticket.release()
