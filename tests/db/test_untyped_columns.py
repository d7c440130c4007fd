"""SQLite columns declared with no type (``CREATE TABLE plant(Name, Country, Capacity)``,
as in public datasets): what they hold is read from their values — text values are
categories, numbers are numbers."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agent_search.context import Context
from agent_search.db import DBHandler
from agent_search.types import Request, Result
from tests.support.databases import make_handler

pytestmark = pytest.mark.anyio

ROWS = [("Alpha-1", "France", 900), ("Alpha-2", "France", 1300), ("Beta-1", "Japan", 500),
        ("Gamma-1", "Peru", 700), ("Beta-2", "Japan", 1100), ("Alpha-3", "France", 600)]


@pytest.fixture
async def plants(tmp_path: Path) -> Any:
    path = tmp_path / "plants.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE plant (Id INTEGER PRIMARY KEY, Name, Country, Capacity)")
        conn.executemany("INSERT INTO plant (Name, Country, Capacity) VALUES (?, ?, ?)", ROWS)
    handler = make_handler(f"sqlite:///{path}", tmp_path / "home")
    yield handler
    await handler.aclose()


async def ask(handler: DBHandler, query: str) -> Result:
    r = await handler.search(Context(config=handler.config),
                             Request(type="db", query=query, models=["plant"], limit=10))
    assert r.error is None, r.error
    return r


async def test_an_untyped_text_column_holds_categories(plants: DBHandler) -> None:
    r = await ask(plants, "plants in Japan")
    assert sorted(i.data["Name"] for i in r.items if i.data) == ["Beta-1", "Beta-2"]
    r = await ask(plants, "how many plants in each country")
    rows = {i.data["Country"]: i.data["count"] for i in r.items
            if i.data and i.metadata.get("kind") == "aggregate"}
    assert rows == {"France": 3, "Japan": 2, "Peru": 1}


async def test_an_untyped_numeric_column_is_compared_as_a_number(plants: DBHandler) -> None:
    r = await ask(plants, "plants with a capacity over 1000")
    assert sorted(i.data["Name"] for i in r.items if i.data) == ["Alpha-2", "Beta-2"]
