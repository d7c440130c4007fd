"""A value read in two fields is a second reading of the question: answered only when
both readings select the same rows (:mod:`agent_search.db._readings`)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agent_search.context import Context
from agent_search.db import DBHandler
from agent_search.db._readings import either
from agent_search.types import QueryWhere, Request, Result
from tests.support.databases import make_handler

pytestmark = pytest.mark.anyio

ROWS = [("Canada", "North America", "North America"), ("USA", "North America", "North America"),
        ("Mexico", "North America", "Central America"), ("Panama", "North America",
                                                         "Central America"),
        ("Australia", "Oceania", "Oceania"), ("France", "Europe", "Western Europe"),
        ("Greenland", "Europe", "North America"), ("Spain", "Europe", "Europe")]
"""Read as a continent or a region, "North America" selects other rows (neither holds the
other's), "Europe" rows one of which holds the other's, "Oceania" the same rows."""


@pytest.fixture
async def world(tmp_path: Path) -> Any:
    path = tmp_path / "world.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE country (Code INTEGER PRIMARY KEY, Name TEXT, "
                     "Continent TEXT, Region TEXT)")
        conn.executemany("INSERT INTO country (Name, Continent, Region) VALUES (?, ?, ?)",
                         ROWS)
    handler = make_handler(f"sqlite:///{path}", tmp_path / "home")
    yield handler
    await handler.aclose()


async def ask(handler: DBHandler, query: str) -> Result:
    r = await handler.search(Context(config=handler.config),
                             Request(type="db", query=query, options={"models": ["country"]},
                                     limit=10))
    assert r.error is None, r.error
    return r


async def test_a_value_of_two_fields_that_select_other_rows_answers_nothing(
        world: DBHandler) -> None:
    r = await ask(world, "countries in North America")
    assert r.items == [] and r.total == 0
    assert any("two fields that select other rows" in w for w in r.warnings), r.warnings


async def test_a_value_of_two_fields_that_select_the_same_rows_is_answered(
        world: DBHandler) -> None:
    r = await ask(world, "countries in Oceania")
    assert [i.data["Name"] for i in r.items if i.data] == ["Australia"]
    assert not any("two fields" in w for w in r.warnings)


async def test_a_reading_holding_the_others_rows_is_answered(world: DBHandler) -> None:
    """The region "Europe" (Spain) is inside the continent: both readings are one answer."""
    r = await ask(world, "countries in Europe")
    assert sorted(i.data["Name"] for i in r.items if i.data) == ["France", "Greenland", "Spain"]


def test_only_one_value_in_several_fields_is_a_second_reading() -> None:
    def where(data: dict[str, Any]) -> QueryWhere:
        return QueryWhere.model_validate(data)
    same = {"or": [{"field": "Continent", "value": "Asia"}, {"field": "Region", "value": "Asia"}]}
    assert either(where(same))
    two_values = {"or": [{"field": "Continent", "value": "Asia"},
                         {"field": "Continent", "value": "Europe"}]}
    other_values = {"or": [{"field": "Continent", "value": "Asia"},
                           {"field": "Region", "value": "Europe"}]}
    ranges = {"or": [{"field": "Continent", "op": ">", "value": "A"},
                     {"field": "Region", "op": ">", "value": "A"}]}
    assert not any(either(where(w)) for w in (two_values, other_values, ranges))


async def test_a_reading_that_selects_nothing_is_no_second_reading(world: DBHandler) -> None:
    """Mexico's region is Central America: under "Mexico", "North America" read as the
    region selects nothing, so the continent is the only reading with rows."""
    r = await ask(world, "countries in North America called Mexico")
    assert [i.data["Name"] for i in r.items if i.data] == ["Mexico"], r.dsl


def test_the_bench_tells_which_gate_silenced_an_answer() -> None:
    """``bench/bench_spider.py`` counts silent answers by gate from their warnings (an
    aggregate figure, printed for the locked part too)."""
    from bench.bench_spider import silenced_by

    assert silenced_by(["x", "'North America' is read in two fields that select other "
                             "rows (…)"]) == "a second reading"
    assert silenced_by(["'in different' asks for a number per group, and no group is "
                        "formed"]) == "shape"
    assert silenced_by(["calibrated confidence 0.41 is under 0.80 (…)"]) == \
        "the calibrated floor"
    assert silenced_by(["could not tell which field 'x' is about"]) is None
