"""Issue 21, item 1: the project's own tables are never searchable.

With ``db.url`` set, the service's search records default to that database. Before the
fix the record table was reflected like any other table, so any key holder read every
other tenant's records (questions, plans, the text of private chunks and rows) with a
plain db search naming ``agent_search_records``, or with no model named at all."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent_search.agent.records import RecordStore, SearchRecord
from agent_search.context import Context
from agent_search.db import DBHandler
from agent_search.server._records import SharedRecordStore, records_url
from agent_search.types import Request

from ..support.tenants import create_tenant_db, tenant_handler, write_model

pytestmark = pytest.mark.anyio
SECRET = "alice asked about Project Nightingale"


async def _db_with_records(tmp_path: Path) -> Path:
    db = create_tenant_db(tmp_path / "shared.db")
    store = SharedRecordStore(records_url(None, f"sqlite:///{db}", tmp_path / "home"))
    store.expect("r1", "alice")
    await store.save(SearchRecord(request_id="r1", assistant="a", query=SECRET,
                                  references=[{"content": SECRET}]))
    await store.aclose()
    local = RecordStore(db)  # the assistant's own record table, in the same file
    await local.save(SearchRecord(request_id="r2", assistant="a", query=SECRET))
    return db


async def _search(handler: DBHandler, user: str, **request: object) -> str:
    ctx = Context(config=handler.config, user_id=user, team_id="t2")
    request.setdefault("query", "x")
    result = await handler.search(ctx, Request(type="db", **request))  # type: ignore[arg-type]
    return f"{result.error} {[(i.title, i.content, i.data) for i in result.items]}"


@pytest.mark.parametrize("model", ["agent_search_records", "AGENT_SEARCH_RECORDS",
                                   "search_records"])
async def test_naming_a_record_table_finds_no_model(tmp_path: Path, model: str) -> None:
    db = await _db_with_records(tmp_path)
    handler = tenant_handler(db, tmp_path / "home")
    try:
        seen = await _search(handler, "bob", models=[model], options={"generate": False})
        assert "Nightingale" not in seen
        assert "unknown model" in seen
        for query in ("Nightingale", "records", "alice"):
            seen = await _search(handler, "bob", options={"generate": False})
            seen += await _search(handler, "bob", query=query)
            assert "Nightingale" not in seen
        assert not {m.lower() for m in handler.catalog.ids()} & {
            "agent_search_records", "search_records"}
    finally:
        await handler.aclose()


async def test_a_definition_cannot_name_a_record_table(tmp_path: Path) -> None:
    db = await _db_with_records(tmp_path)
    cfg = tmp_path / "config"
    write_model(cfg, "rec.mod.yao", {"name": "Rec", "table": {"name": "agent_search_records"},
                                     "columns": [{"name": "request_id", "type": "string"},
                                                 {"name": "record", "type": "text"}]})
    handler = tenant_handler(db, tmp_path / "home", cfg)
    try:
        seen = await _search(handler, "bob", models=["rec"], options={"generate": False})
        assert "Nightingale" not in seen and "agent-search's own" in seen
    finally:
        await handler.aclose()


async def test_a_users_own_search_records_table_stays_searchable(tmp_path: Path) -> None:
    """Only the project's table of that name is hidden (by its exact columns)."""
    db = tmp_path / "user.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE search_records (id INTEGER PRIMARY KEY, title TEXT)")
        conn.execute("INSERT INTO search_records VALUES (1, 'my saved search')")
    handler = tenant_handler(db, tmp_path / "home")
    try:
        seen = await _search(handler, "bob", models=["search_records"],
                             options={"generate": False})
        assert "my saved search" in seen
    finally:
        await handler.aclose()


def test_reserved_names() -> None:
    from agent_search.db._reserved import is_internal_table

    assert is_internal_table("agent_search_records")
    assert is_internal_table(" Agent_Search_Rate_Limits ")
    assert is_internal_table("search_records", ["request_id", "assistant", "created_at",
                                                "record"])
    assert not is_internal_table("search_records", ["id", "title"])
    assert not is_internal_table("records")
