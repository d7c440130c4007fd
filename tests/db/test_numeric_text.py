"""Text columns whose every value is a number (databases that keep numbers as text):
compared, ordered and computed on as numbers, on SQLite and PostgreSQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agent_search.context import Context
from agent_search.db import DBHandler
from agent_search.db._values import numeric_kind
from agent_search.types import Request, Result
from tests.support.databases import BACKENDS, make_handler, run_in_thread
from tests.support.postgres import copy_sqlite_to, create_database

pytestmark = pytest.mark.anyio

# as text, "105" < "30" < "9": numbers order the other way
ROWS = [(1, "Ann", "9", "5.5", "007"), (2, "Bob", "105", "4.25", "012"),
        (3, "Cid", "30", "10", "100"), (4, "Dee", " 45", "7", "020")]


@pytest.fixture(scope="module")
def members_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("numeric-text") / "members.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE member (id INTEGER PRIMARY KEY, name TEXT, age TEXT,"
                     " rating TEXT, code TEXT)")
        conn.executemany("INSERT INTO member VALUES (?, ?, ?, ?, ?)", ROWS)
    return path


@pytest.fixture(scope="module", params=BACKENDS)
async def members(request: pytest.FixtureRequest, members_sqlite: Path,
                  tmp_path_factory: pytest.TempPathFactory) -> Any:
    if request.param == "sqlite":
        url = f"sqlite:///{members_sqlite}"
    else:
        base = str(request.getfixturevalue("postgres_server"))

        async def load() -> None:
            await create_database(base, "members")
            await copy_sqlite_to(members_sqlite, f"{base}/members")

        run_in_thread(load)
        url = f"{base}/members"
    handler = make_handler(url, tmp_path_factory.mktemp("members-home"))
    yield handler
    await handler.aclose()


async def ask(handler: DBHandler, query: str, dsl: dict[str, Any] | None = None) -> Result:
    r = await handler.search(Context(config=handler.config),
                             Request(type="db", query=query, models=["member"], limit=10,
                                     options={"dsl": dsl} if dsl else {}))
    assert r.error is None, r.error
    return r


def test_numeric_kind() -> None:
    assert numeric_kind(["9", "105", " 45"]) == "integer"
    assert numeric_kind(["5.5", "10"]) == "number"
    assert numeric_kind(["007", "12"]) is None  # a code keeps its leading zeros
    assert numeric_kind(["12", "12a"]) is None
    assert numeric_kind(["", "12"]) is None
    assert numeric_kind(["12"]) is None  # one value says nothing
    assert numeric_kind(["1234567890123456", "1"]) is None  # an identifier, not a number


async def test_text_numbers_order_and_compare_as_numbers(members: DBHandler) -> None:
    r = await ask(members, "members", {"model": "member",
                                       "orders": [{"field": "age", "order": "asc"}]})
    assert [i.record_id for i in r.items] == [1, 3, 4, 2]
    r = await ask(members, "members", {"model": "member", "wheres": [
        {"field": "age", "op": ">", "value": 30}]})
    assert {i.record_id for i in r.items} == {2, 4}
    r = await ask(members, "members", {"model": "member", "wheres": [
        {"field": "rating", "op": "between", "value": [5, 8]}]})
    assert {i.record_id for i in r.items} == {1, 4}
    r = await ask(members, "members", {"model": "member", "orders": [
        {"field": "code", "order": "asc"}]})  # codes stay text
    assert [i.record_id for i in r.items] == [1, 2, 4, 3]


async def test_text_numbers_are_computed_as_numbers(members: DBHandler) -> None:
    r = await ask(members, "x", {"model": "member",
                                 "aggregates": ["max(age)", "min(age)", "avg(rating)"]})
    (row,) = [i.data for i in r.items if i.metadata.get("kind") == "aggregate"]
    assert row is not None
    assert (float(row["max(age)"]), float(row["min(age)"])) == (105.0, 9.0)
    assert float(row["avg(rating)"]) == pytest.approx((5.5 + 4.25 + 10 + 7) / 4)


async def test_a_superlative_on_text_numbers(members: DBHandler) -> None:
    r = await ask(members, "the youngest member")
    assert [i.record_id for i in r.items] == [1]
    r = await ask(members, "the oldest member")
    assert [i.record_id for i in r.items] == [2]
