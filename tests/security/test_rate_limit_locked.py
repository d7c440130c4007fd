"""A locked record database does not stall requests (issue 32 item 8).

With ``rate_limit.shared`` the buckets live in the record database. A writer holding that
database (a long import, a backup, another tool) made every ``/v1/`` request wait
SQLite's 10 s busy timeout inside a worker thread before the process-local buckets
decided. Now the limiter gives up on a locked store within milliseconds, decides on the
local buckets, and goes back to the shared ones once the lock is gone."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import anyio
import pytest
from fastapi.testclient import TestClient

from agent_search.server import Service, ServiceOptions, create_app
from agent_search.server._ratelimit import SharedRateLimiter
from agent_search.server._records import SharedRecordStore, records_url

from ..support.http_service import KEYS, sha256, write_project

ALICE = {"Authorization": f"Bearer {KEYS['alice']}"}
PROMPT_S = 2.0
"""Generous for a loaded machine, far below the 10 s busy timeout it used to wait."""


def _hold_write_lock(path: Path) -> sqlite3.Connection:
    """Another process's writer: a transaction holding the database's write lock."""
    conn = sqlite3.connect(path, timeout=0, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    return conn


def test_requests_are_answered_promptly_while_the_records_are_locked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("AGENT_SEARCH_HOME", str(home))
    cdir, adir = write_project(tmp_path, server={
        "api_keys": [{"sha256": sha256(KEYS["alice"]), "user_id": "alice"}],
        "rate_limit": {"per_minute": 600, "burst": 100, "shared": True}})
    service = Service.load(ServiceOptions(config_dir=cdir, assistants_dir=adir,
                                          builtin_handlers=False))
    with TestClient(create_app(service)) as client:
        assert client.get("/v1/models", headers=ALICE).status_code == 200  # table made
        lock = _hold_write_lock(home / "records.sqlite")
        try:
            for _ in range(4):
                started = time.monotonic()
                response = client.get("/v1/models", headers=ALICE)
                assert response.status_code == 200
                assert time.monotonic() - started < PROMPT_S
        finally:
            lock.rollback()
            lock.close()


def test_the_limit_still_holds_while_locked_and_shared_buckets_come_back(
        tmp_path: Path) -> None:
    """Locked: the local bucket decides (the limit still holds, promptly). Unlocked: the
    shared bucket decides again, with what it had."""
    store = SharedRecordStore(records_url(None, None, tmp_path))
    limiter = SharedRateLimiter(0.01, 2, store.url)  # no refill within the test

    async def take() -> tuple[float, float]:
        started = time.monotonic()
        wait = await limiter.take("k")
        return wait, time.monotonic() - started

    async def go() -> None:
        assert (await take())[0] == 0  # shared: one of two tokens spent
        lock = _hold_write_lock(tmp_path / "records.sqlite")
        try:
            locked = [await take() for _ in range(3)]
        finally:
            lock.rollback()
            lock.close()
        assert [wait == 0 for wait, _ in locked] == [True, True, False]  # local burst 2
        assert all(took < PROMPT_S for _, took in locked)
        await anyio.sleep(limiter.retry_shared_after + 0.05)
        assert (await take())[0] == 0  # shared again: its second token
        assert (await take())[0] > 0   # and its bucket is empty
        await limiter.aclose()
        await store.aclose()

    anyio.run(go)


@pytest.mark.postgres
def test_a_locked_postgres_table_does_not_hold_the_take(
        postgres_server: str) -> None:
    """PostgreSQL: a transaction holding the bucket table locked made the take wait with
    no bound at all (no lock timeout); now ``lock_timeout`` ends the wait and the local
    bucket decides."""
    import sqlalchemy as sa
    from sqlalchemy.engine import make_url
    from sqlalchemy.ext.asyncio import create_async_engine

    from tests.support.postgres import create_database

    anyio.run(create_database, postgres_server, "rate_limit_locked")
    url = make_url(f"{postgres_server}/rate_limit_locked".replace(
        "postgresql:", "postgresql+asyncpg:"))
    limiter = SharedRateLimiter(60.0, 3, url)

    async def go() -> list[float]:
        assert await limiter.take("k") == 0  # creates the table
        holder = create_async_engine(url)
        took = []
        try:
            async with holder.begin() as conn:
                await conn.execute(sa.text(
                    "LOCK TABLE agent_search_rate_limits IN ACCESS EXCLUSIVE MODE"))
                for _ in range(3):
                    started = time.monotonic()
                    with anyio.fail_after(5 * PROMPT_S):
                        await limiter.take("k")
                    took.append(time.monotonic() - started)
        finally:
            await holder.dispose()
            await limiter.aclose()
        return took

    assert all(t < PROMPT_S for t in anyio.run(go))
