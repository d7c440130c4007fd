"""Issue 21 on PostgreSQL: the project's own tables stay out of search, and the shared
rate limit holds, when the shared database is PostgreSQL rather than SQLite (the other
tests of both run on SQLite; the PostgreSQL statements are different code)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from sqlalchemy.engine import make_url

from agent_search.agent.records import SearchRecord
from agent_search.config import SearchConfig
from agent_search.context import Context
from agent_search.db import create_handler
from agent_search.server._ratelimit import SharedRateLimiter
from agent_search.server._records import SharedRecordStore, records_url
from agent_search.types import Request
from tests.support.postgres import copy_sqlite_to, create_database
from tests.support.tenants import create_tenant_db

pytestmark = pytest.mark.postgres
SECRET = "alice asked about Project Nightingale"


def _database(base: str, name: str) -> str:
    anyio.run(create_database, base, name)
    return f"{base}/{name}"


def test_the_record_table_in_postgres_is_not_a_model(
        tmp_path: Path, postgres_server: str) -> None:
    url = _database(postgres_server, "own_tables")
    anyio.run(copy_sqlite_to, create_tenant_db(tmp_path / "t.db"), url)

    async def scenario() -> list[str]:
        store = SharedRecordStore(records_url(None, url, tmp_path / "home"))
        store.expect("r1", "alice")
        await store.save(SearchRecord(request_id="r1", assistant="a", query=SECRET,
                                      references=[{"content": SECRET}]))
        await store.aclose()
        handler = create_handler(SearchConfig(home=tmp_path / "home", db={"url": url}))
        seen: list[str] = []
        try:
            ctx = Context(config=handler.config, user_id="bob", team_id="t2")
            asks = [Request(type="db", query="x", models=["agent_search_records"],
                            options={"generate": False})]
            asks += [Request(type="db", query=q) for q in ("Nightingale", "records", "alice")]
            for request in asks:
                result = await handler.search(ctx, request)
                seen.append(f"{result.error} {[(i.content, i.data) for i in result.items]}")
            assert "notes" in handler.catalog.ids()  # the user's tables are reflected
            assert not any(m.lower().startswith("agent_search_")
                           for m in handler.catalog.ids())
        finally:
            await handler.aclose()
        return seen

    seen = anyio.run(scenario)
    assert "unknown model" in seen[0]
    assert not any("Nightingale" in s for s in seen)


def test_two_limiters_on_postgres_never_give_more_than_the_burst(
        postgres_server: str) -> None:
    """Two workers' first takes race for the insert of a key's row; then the atomic
    UPDATE decides. Whatever the interleaving, no more than ``burst`` pass at one instant,
    and a token comes back after 1/rate seconds."""
    url = make_url(_database(postgres_server, "rate_limits").replace(
        "postgresql:", "postgresql+asyncpg:"))
    burst = 3
    limiters = [SharedRateLimiter(60.0, burst, url) for _ in range(2)]

    async def scenario() -> tuple[list[float], float, float]:
        waits: list[float] = []

        async def take(i: int) -> None:
            waits.append(await limiters[i % 2].take("k", now=1000.0))

        try:
            async with anyio.create_task_group() as tg:
                for i in range(4 * burst):
                    tg.start_soon(take, i)
            later = await limiters[0].take("k", now=1001.0)  # one token a second
            at_once = await limiters[1].take("k", now=1001.0)
        finally:
            for limiter in limiters:
                await limiter.aclose()
        return waits, later, at_once

    waits, later, at_once = anyio.run(scenario)
    assert sum(w == 0 for w in waits) == burst
    assert all(w == pytest.approx(1.0) for w in waits if w)  # the next token in 1 s
    assert later == 0.0 and at_once == pytest.approx(1.0)
