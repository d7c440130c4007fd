"""agent_search.query.nl._rules._numbers: comparisons, ranges and stock on the field meant."""

from __future__ import annotations

import re
from typing import Any

import pytest

from agent_search.query.nl._rules._numbers import NUMBER, amount, between, comparisons, stock
from tests.support.query_schemas import fresh_plan, read, shop


def run(extract: Any, text: str, target: str = "Track", schemas: Any = None) -> Any:
    q = read(text, target, schemas)
    plan = fresh_plan(q)
    extract(q, plan)
    return plan


@pytest.mark.parametrize(("text", "want"), [
    ("$1.5k", (1500.0, None, True)), ("1,5", (1.5, None, False)),
    ("1,000.5", (1000.5, None, False)), ("20 euros", (20.0, "euros", True)),
    ("5 minutes", (5.0, "minutes", False)), ("2 million", (2e6, None, False)),
])
def test_amounts(text: str, want: tuple[float, str | None, bool]) -> None:
    m = re.compile(NUMBER, re.I).search(text)
    assert m is not None and amount(m) == want


@pytest.mark.parametrize(("text", "where"), [
    ("tracks under $1", {"field": "UnitPrice", "op": "<", "value": 1}),
    ("tracks longer than 5 minutes", {"field": "Milliseconds", "op": ">", "value": 300000}),
    ("tracks shorter than 1.5 seconds", {"field": "Milliseconds", "op": "<", "value": 1500}),
    ("tracks with bytes of at least 1000", {"field": "Bytes", "op": ">=", "value": 1000}),
    ("tracks costing 0.99", {"field": "UnitPrice", "op": "=", "value": 0.99}),
    ("tracks of 2 dollars or more", {"field": "UnitPrice", "op": ">=", "value": 2}),
])
def test_comparisons(text: str, where: dict[str, Any]) -> None:
    assert run(comparisons, text).wheres == [where]


def test_an_amount_no_field_fits_is_unplaced() -> None:
    plan = run(comparisons, "tracks over 5")  # three numeric fields, none named
    assert plan.wheres == []
    assert plan.warnings == ["could not tell which field 'over 5' is about"]
    assert plan.unplaced == ["over 5"]  # the parser then answers nothing (test_unsure)


def test_years_are_left_to_dates() -> None:
    assert run(comparisons, "invoices after 2010", "Invoice").wheres == []
    assert run(between, "invoices between 2010 and 2012", "Invoice").wheres == []


def test_between_sorts_and_converts_its_ends() -> None:
    plan = run(between, "tracks between 3 and 2 minutes")
    assert plan.wheres == [{"field": "Milliseconds", "op": "between", "value": [120000, 180000]}]
    plan = run(between, "products between $10 and $20.5", "product", shop())
    assert plan.wheres == [{"field": "price", "op": "between", "value": [10, 20.5]}]


def test_stock() -> None:
    assert run(stock, "products in stock", "product", shop()).wheres == [
        {"field": "stock", "op": ">", "value": 0}]
    assert run(stock, "products out of stock", "product", shop()).wheres == [
        {"field": "stock", "op": "<=", "value": 0}]
    plan = run(stock, "tracks in stock")
    assert plan.wheres == [] and plan.warnings == ["'in stock': no stock field to check; ignored"]


def test_a_thousands_separator_is_not_a_decimal_comma() -> None:
    """"over $1,000" was read as "over 1.0"; "1,5" stays one and a half."""
    plan = run(comparisons, "invoices over $1,000", "Invoice")
    assert plan.wheres == [{"field": "Total", "op": ">", "value": 1000}]
    plan = run(comparisons, "invoices over 1,5", "Invoice")
    assert plan.wheres == [{"field": "Total", "op": ">", "value": 1.5}]
