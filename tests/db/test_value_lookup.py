"""Values of columns too big to index are still found (issue 35, item 2): a text column
with more distinct values than ``db.value_index_max`` is looked up at question time with a
bounded equality query on the phrases of the question, as written. The database is made
here: people with 40 distinct names, indexed at most 10 values per column."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from agent_search.config import SearchConfig
from agent_search.context import Context
from agent_search.db import DBHandler, create_handler
from agent_search.db import _value_index as value_index
from agent_search.types import Request, Result

pytestmark = pytest.mark.anyio

FIRST = ["Ada", "Alan", "Grace", "Edsger", "Barbara", "Donald", "Ken", "Dennis"]
LAST = ["Lovelace", "Turing", "Hopper", "Dijkstra", "Liskov"]
PEOPLE = [{"id": i + 1, "name": f"{f} {last}", "city": "Springfield" if i % 2 else "Shelbyville",
           "motto": f"motto {i}"}
          for i, (f, last) in enumerate((f, last) for f in FIRST for last in LAST)]


def _people_db(path: Path, *, index: bool) -> Path:
    meta = sa.MetaData()
    people = sa.Table("people", meta, sa.Column("id", sa.Integer, primary_key=True),
                      sa.Column("name", sa.String(60), index=index),
                      sa.Column("city", sa.String(60)), sa.Column("motto", sa.String(60)))
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        meta.create_all(conn)
        conn.execute(people.insert(), PEOPLE)
    engine.dispose()
    return path


@pytest.fixture(scope="module")
async def people(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DBHandler]:
    base = tmp_path_factory.mktemp("lookup")
    config = SearchConfig(home=base / "home",
                          db={"url": f"sqlite:///{_people_db(base / 'p.db', index=False)}",
                              "value_index_max": 10, "match_by_meaning": False})
    handler = create_handler(config)
    yield handler
    await handler.aclose()


async def ask(handler: DBHandler, question: str) -> Result:
    r = await handler.search(Context(config=handler.config),
                             Request(type="db", query=question, models=["people"], limit=50))
    assert r.error is None, r.error
    return r


async def test_a_name_in_a_column_too_big_to_index_is_found(people: DBHandler) -> None:
    r = await ask(people, "Where does Grace Hopper live?")
    assert [i.title for i in r.items] == ["Grace Hopper"]
    assert r.dsl is not None
    assert r.dsl["queries"][0]["wheres"] == [{"field": "name", "op": "=",
                                              "value": "Grace Hopper"}]
    assert r.items[0].score >= 0.9  # an exact value, not a loose text match
    entry = people.catalog.find("people")
    assert entry is not None and entry.looked_up == ["name", "motto"]
    assert "name" not in (await people.catalog.values(entry))  # never indexed whole


async def test_a_small_column_is_still_indexed_whole(people: DBHandler) -> None:
    entry = people.catalog.find("people")
    assert entry is not None
    assert (await people.catalog.values(entry))["city"] == ["Shelbyville", "Springfield"]


def test_phrases_are_runs_of_words_as_written_and_bounded() -> None:
    got = value_index.phrases("Where does Grace Hopper live?")
    assert "Grace Hopper" in got and "Grace" in got and "Hopper live" in got
    assert "grace hopper" not in got  # as written only
    assert "Where does" not in got and "does" not in got  # stop words alone say nothing
    long = " ".join(f"Word{i}" for i in range(2000))
    assert len(value_index.phrases(long)) <= value_index.MAX_PHRASES


async def test_a_big_table_is_looked_up_only_where_an_index_serves(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(value_index, "LOOKUP_MAX_ROWS", 5)  # 40 rows are "big" here
    for index, want in ((False, []), (True, ["name"])):
        db = _people_db(tmp_path / f"p{index}.db", index=index)
        handler = create_handler(SearchConfig(
            home=tmp_path / "home", db={"url": f"sqlite:///{db}", "value_index_max": 10,
                                        "match_by_meaning": False}))
        try:
            await handler.warm()
            entry = handler.catalog.find("people")
            assert entry is not None
            await handler.catalog.values(entry)
            assert entry.looked_up == want
        finally:
            await handler.aclose()
