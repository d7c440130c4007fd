"""``db.match_by_meaning`` through the handler, on Chinook: a leftover word read as the
field it means ("duration" → ``Milliseconds``) with the real offline model; on by
default (issue 31 item 2), and switched off the word stays unread."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_search.config import SearchConfig
from agent_search.context import Context
from agent_search.db import create_handler
from agent_search.types import Request

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_phrase_is_read_by_meaning_unless_switched_off(
        chinook_sqlite_master: Path, tmp_path: Path) -> None:
    orders = {}
    for on in (False, True):
        config = SearchConfig(home=tmp_path / "home",
                              db={"url": f"sqlite:///{chinook_sqlite_master}",
                                  **({} if on else {"match_by_meaning": False})})
        handler = create_handler(config)
        try:
            r = await handler.search(Context(config=config), Request(
                type="db", query="tracks ordered by duration", limit=5))
        finally:
            await handler.aclose()
        assert r.error is None
        assert r.dsl is not None
        orders[on] = r.dsl["queries"][0]["orders"]
        meant = [w for w in r.warnings if "by meaning" in w]
        assert bool(meant) is on, r.warnings
    assert orders[False] == []
    assert orders[True] == [{"field": "Milliseconds", "order": "asc"}]
    lengths = [i.data["Milliseconds"] for i in r.items]
    assert lengths == sorted(lengths) and len(lengths) == 5
