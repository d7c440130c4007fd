"""agent_search.query.nl._rules._dates: relative periods and stated dates, on the date field."""

from __future__ import annotations

from typing import Any

import pytest

from agent_search.query.nl._rules._dates import dates, relative_dates, stated_dates
from tests.support.query_schemas import NOW, fresh_plan, read


def run(extract: Any, text: str) -> Any:
    q = read(text, "Invoice")
    plan = fresh_plan(q)
    extract(q, plan)
    return plan


def period(start: str, end: str) -> dict[str, Any]:
    return {"and": [{"field": "InvoiceDate", "op": ">=", "value": start},
                    {"field": "InvoiceDate", "op": "<", "value": end}]}


@pytest.mark.parametrize(("text", "where"), [
    ("invoices in the last 30 days",
     {"field": "InvoiceDate", "op": ">=", "value": "2025-05-16T15:30:00"}),
    ("invoices this month", {"field": "InvoiceDate", "op": ">=", "value": "2025-06-01T00:00:00"}),
    ("invoices last year", period("2024-01-01T00:00:00", "2025-01-01T00:00:00")),
    ("invoices yesterday", period("2025-06-14T00:00:00", "2025-06-15T00:00:00")),
])
def test_relative_periods(text: str, where: dict[str, Any]) -> None:
    assert run(relative_dates, text).wheres == [where]


def test_a_period_before_the_year_one_is_a_warning() -> None:
    plan = run(relative_dates, "invoices in the last 9999 years")
    assert plan.wheres == [] and "reaches beyond the year 1" in plan.warnings[0]
    assert not plan.free((12, 20))


@pytest.mark.parametrize(("text", "where"), [
    ("invoices in 2010", period("2010-01-01T00:00:00", "2011-01-01T00:00:00")),
    ("invoices from 2021 to 2022", period("2021-01-01T00:00:00", "2023-01-01T00:00:00")),
    ("invoices in March 2025", period("2025-03-01T00:00:00", "2025-04-01T00:00:00")),
    ("invoices during May", period("2025-05-01T00:00:00", "2025-06-01T00:00:00")),
    ("invoices during July", period("2024-07-01T00:00:00", "2024-08-01T00:00:00")),
    ("invoices after 2024", {"field": "InvoiceDate", "op": ">=", "value": "2025-01-01T00:00:00"}),
    ("invoices since 2024-03-01",
     {"field": "InvoiceDate", "op": ">=", "value": "2024-03-01T00:00:00"}),
    ("invoices from 2024-03-01",
     {"field": "InvoiceDate", "op": ">=", "value": "2024-03-01T00:00:00"}),
    ("invoices before 2022", {"field": "InvoiceDate", "op": "<", "value": "2022-01-01T00:00:00"}),
    ("invoices until 2022", {"field": "InvoiceDate", "op": "<", "value": "2023-01-01T00:00:00"}),
])
def test_stated_dates(text: str, where: dict[str, Any]) -> None:
    assert run(dates, text).wheres == [where]


def test_a_month_name_alone_is_a_word_and_a_bad_date_a_warning() -> None:
    assert run(dates, "invoices you may like").wheres == []
    plan = run(dates, "invoices after 2024-02-30")
    assert plan.wheres == []
    assert plan.warnings == ["'after 2024-02-30' is not a valid date; ignored"]


def test_stated_dates_take_the_longest_reading_first() -> None:
    plan = fresh_plan(read("x", "Invoice"))
    found = stated_dates("between january 2023 and march 2023", NOW, plan)
    assert [(d.word, d.start, d.end) for d in found] == [
        ("range", "2023-01-01T00:00:00", "2023-04-01T00:00:00")]


def test_no_date_field_no_condition() -> None:
    q = read("tracks in 2010", "Track")
    plan = fresh_plan(q)
    dates(q, plan)
    assert plan.wheres == []
