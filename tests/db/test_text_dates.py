"""Dates stored as text are read as dates (issue 35, item 2): decided from the column's
values (one fixed-width form for all of them), then compared and ordered as dates — "after
2005", "in March 2010", "the latest" — on SQLite and PostgreSQL. The database is made
here: ISO dates, ISO datetimes, day-first dates (some days past 12) and a column of
day/month-or-month/day values that fit both (not read as dates: right or silent)."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

from agent_search.config import SearchConfig
from agent_search.context import Context
from agent_search.db import DBHandler, create_handler
from agent_search.db._text_dates import text_date
from agent_search.types import Request, Result

pytestmark = pytest.mark.anyio

DAYS = [dt.date(2003, 1, 15), dt.date(2005, 12, 31), dt.date(2006, 1, 1),
        dt.date(2010, 3, 1), dt.date(2010, 3, 18), dt.date(2010, 3, 31),
        dt.date(2010, 4, 1), dt.date(2012, 7, 25), dt.date(2019, 11, 2)]
EVENTS = [{"id": i + 1, "title": f"event {i + 1}", "happened": d.isoformat(),
           "logged": f"{d.isoformat()} 0{i % 10}:30:00",
           "code": f"0{1 + i % 9}/0{1 + (i * 2) % 9}/2001"} for i, d in enumerate(DAYS)]
CONCERTS = [{"id": i + 1, "name": f"concert {i + 1}", "concert_date": d.strftime("%d/%m/%Y")}
            for i, d in enumerate(DAYS)]


def _tables(meta: sa.MetaData) -> tuple[sa.Table, sa.Table]:
    events = sa.Table("events", meta, sa.Column("id", sa.Integer, primary_key=True),
                      sa.Column("title", sa.String(40)), sa.Column("happened", sa.String(10)),
                      sa.Column("logged", sa.String(19)), sa.Column("code", sa.String(10)))
    concerts = sa.Table("concerts", meta, sa.Column("id", sa.Integer, primary_key=True),
                        sa.Column("name", sa.String(40)), sa.Column("concert_date", sa.Text))
    return events, concerts


async def _fill(url: str) -> None:
    meta = sa.MetaData()
    events, concerts = _tables(meta)
    engine = create_async_engine(url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(meta.create_all)
            await conn.execute(events.insert(), EVENTS)
            await conn.execute(concerts.insert(), CONCERTS)
    finally:
        await engine.dispose()


async def _postgres_url(base: str) -> str:
    name = f"text_dates_{uuid.uuid4().hex[:8]}"
    admin = create_async_engine(base.replace("postgresql:", "postgresql+asyncpg:") +
                                "/postgres", isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as conn:
            await conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    finally:
        await admin.dispose()
    return f"{base}/{name}"


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql",
                                                               marks=pytest.mark.postgres)])
async def dates(request: pytest.FixtureRequest,
                tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DBHandler]:
    base = tmp_path_factory.mktemp("text-dates")
    if request.param == "sqlite":
        url = f"sqlite:///{base / 'dates.db'}"
        await _fill(f"sqlite+aiosqlite:///{base / 'dates.db'}")
    else:
        url = await _postgres_url(request.getfixturevalue("postgres_server"))
        await _fill(url.replace("postgresql:", "postgresql+asyncpg:"))
    handler = create_handler(SearchConfig(home=Path(base) / "home",
                                          db={"url": url, "match_by_meaning": False}))
    yield handler
    await handler.aclose()


async def ask(handler: DBHandler, query: str, model: str, **kw: Any) -> Result:
    r = await handler.search(Context(config=handler.config),
                             Request(type="db", query=query, models=[model], limit=20, **kw))
    assert r.error is None, r.error
    return r


async def test_the_kind_of_a_text_column_comes_from_its_values(dates: DBHandler) -> None:
    await dates.warm()
    kinds = {}
    for model in ("events", "concerts"):
        entry = dates.catalog.find(model)
        assert entry is not None
        schema = await dates.catalog.schema_with_values(entry, queryable=True)
        kinds.update({f.name: f.kind for f in schema.fields})
    assert kinds["happened"] == "date" and kinds["concert_date"] == "date"
    assert kinds["logged"] == "datetime"
    assert kinds["code"] == "string"  # every value fits day-first and month-first
    assert kinds["title"] == "string"


@pytest.mark.parametrize(("field", "op", "value", "want"), [
    ("happened", ">", "2005-12-31", lambda d: d > dt.date(2005, 12, 31)),
    ("happened", "<=", "2010-03-18", lambda d: d <= dt.date(2010, 3, 18)),
    ("logged", ">=", "2010-03-18", lambda d: d >= dt.date(2010, 3, 18)),
    ("concert_date", ">", "2005-12-31", lambda d: d > dt.date(2005, 12, 31)),
    ("concert_date", "between", ["2010-03-01", "2010-03-31"],
     lambda d: dt.date(2010, 3, 1) <= d <= dt.date(2010, 3, 31)),
    ("concert_date", "=", 2006, lambda d: d == dt.date(2006, 1, 1)),
])
async def test_a_text_date_compares_as_a_date(dates: DBHandler, field: str, op: str,
                                              value: Any, want: Any) -> None:
    model = "concerts" if field == "concert_date" else "events"
    dsl = {"model": model, "wheres": [{"field": field, "op": op, "value": value}]}
    r = await ask(dates, "x", model, options={"dsl": dsl})
    assert {i.record_id for i in r.items} == {i + 1 for i, d in enumerate(DAYS) if want(d)}


@pytest.mark.parametrize(("question", "want"), [
    ("concerts after 2005", lambda d: d.year > 2005),
    ("concerts before 2010", lambda d: d.year < 2010),
    ("concerts in March 2010", lambda d: (d.year, d.month) == (2010, 3)),
    ("concerts in 2010", lambda d: d.year == 2010),
])
async def test_a_question_about_dates_works_on_text_dates(dates: DBHandler, question: str,
                                                          want: Any) -> None:
    r = await ask(dates, question, "concerts")
    assert {i.record_id for i in r.items} == {i + 1 for i, d in enumerate(DAYS) if want(d)}, \
        r.dsl


async def test_text_dates_order_as_dates(dates: DBHandler) -> None:
    """Day-first text sorts by day as text; as dates, 2019 is the latest."""
    dsl = {"model": "concerts", "orders": [{"field": "concert_date", "order": "desc"}]}
    r = await ask(dates, "x", "concerts", options={"dsl": dsl})
    assert [i.record_id for i in r.items] == list(range(len(DAYS), 0, -1))
    r = await ask(dates, "the latest concert", "concerts")
    assert r.items and r.items[0].record_id == len(DAYS), r.dsl


@pytest.mark.parametrize(("values", "form"), [
    (["2001-02-03", "1999-12-31"], "%Y-%m-%d"),
    (["2001-02-03 10:00:00", "1999-12-31 23:59:59"], "%Y-%m-%d %H:%M:%S"),
    (["13/02/2003", "01/12/1999"], "%d/%m/%Y"),
    (["02/13/2003", "12/01/1999"], "%m/%d/%Y"),
    (["02/03/2003", "12/01/1999"], None),      # both forms fit: not read as dates
    (["2001-02-03", "soon"], None),             # one value is no date
    (["2001-02-30", "1999-12-31"], None),       # no such day
    (["2001-2-3", "1999-12-31"], None),         # not fixed-width
    (["2001-02-03"], None),                     # one value says nothing
    ([20010203, 19991231], None),               # numbers are numbers
])
def test_one_form_for_every_value_or_none(values: list[Any], form: str | None) -> None:
    found = text_date(values)
    assert (found.strptime if found else None) == form
