"""Issue 21, item 8: ``public`` and ``share`` are permission columns too.

On a permission-aware table they say who may see a row. They were returned in every
item's ``data`` and could be ordered and filtered by, so a caller learned how other
tenants had shared their public rows. Now, like the ``__yao_`` columns, they are never
selected, returned or ordered by, and a where on them holds only on the caller's own (or
team's) rows. In a table without permission columns a ``public`` column is plain data."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_search.context import Context
from agent_search.db import DBHandler
from agent_search.types import QueryWhere, Request, Result

from ..support.tenants import create_tenant_db, tenant_handler

pytestmark = pytest.mark.anyio
FLAGS = ("public", "share")


@pytest.fixture(scope="module")
async def handler(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DBHandler]:
    base = tmp_path_factory.mktemp("flags")
    h = tenant_handler(create_tenant_db(base / "tenants.db"), base / "home")
    yield h
    await h.aclose()


async def _search(handler: DBHandler, user: str | None, team: str | None,
                  **request: Any) -> Result:
    request.setdefault("query", "notes")
    ctx = Context(config=handler.config, user_id=user, team_id=team)
    return await handler.search(ctx, Request(type="db", models=["notes"], limit=50,
                                             **request))


@pytest.mark.parametrize(("user", "team"), [("u1", "t1"), ("u3", "t2"), (None, None)])
async def test_flags_are_never_in_row_data(handler: DBHandler, user: str | None,
                                           team: str | None) -> None:
    for request in ({"options": {"generate": False}},
                    {"select": ["title", "public", "share"], "options": {"generate": False}},
                    {"query": "public notes shared with the team"}):
        result = await _search(handler, user, team, **request)
        for item in result.items:
            assert not {k.lower() for k in item.data or {}} & set(FLAGS), item.data
    dsl = {"model": "notes", "select": ["title", "share"]}
    refused = await _search(handler, user, team, options={"dsl": dsl})
    assert any("'share' is a permission column" in w for w in refused.warnings)
    assert all("share" not in (i.data or {}) for i in refused.items)


@pytest.mark.parametrize("flag", FLAGS)
async def test_flags_cannot_be_ordered_by(handler: DBHandler, flag: str) -> None:
    dsl = {"model": "notes", "orders": [{"field": flag, "order": "desc"}]}
    result = await _search(handler, "u1", "t1", options={"dsl": dsl})
    assert result.error is not None and flag in result.error


async def test_a_where_on_a_flag_is_no_oracle_on_other_tenants_rows(
        handler: DBHandler) -> None:
    """Row 5 is u3's public note (share 'private'): u1 sees it, but must not learn its
    share setting by filtering on it."""
    seen = await _search(handler, "u1", "t1", options={"generate": False})
    assert 5 in {i.record_id for i in seen.items}
    probe = await _search(handler, "u1", "t1", options={"generate": False},
                          wheres=[QueryWhere(field="share", value="private")])
    assert 5 not in {i.record_id for i in probe.items}
    own = {i.record_id for i in probe.items}
    assert own == {1}  # u1's own private note: filtering one's own rows still works
    public = await _search(handler, None, None, options={"generate": False},
                           wheres=[QueryWhere(field="public", value=True)])
    assert public.error is None and public.items == []


async def test_a_public_column_without_permission_columns_is_data(tmp_path: Path) -> None:
    db = tmp_path / "repos.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE repos (id INTEGER PRIMARY KEY, name TEXT, public BOOLEAN)")
        conn.execute("INSERT INTO repos VALUES (1, 'agent-search', 1), (2, 'secret', 0)")
    h = tenant_handler(db, tmp_path / "home")
    try:
        ctx = Context(config=h.config)
        result = await h.search(ctx, Request(type="db", query="repos", models=["repos"],
                                             orders=[{"field": "public", "order": "desc"}],
                                             options={"generate": False}))
        assert result.error is None
        assert [i.data["public"] for i in result.items] == [1, 0]
    finally:
        await h.aclose()
