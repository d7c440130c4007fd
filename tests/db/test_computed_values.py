"""Conditions against a computed value (issue 35, item 2): the DSL's ``{"aggregate":
"avg(price)"}`` where value, validated like every where and computed by the database, and
the parser's reading of "more than the average price" / "cheaper than average" /
"whose price is above average". Expected rows come from the sample shop's own data, on
SQLite and PostgreSQL. (Tenancy of the computed value: tests/security/test_db_computed.py.)
"""

from __future__ import annotations

import statistics
from typing import Any

import pytest

from agent_search.context import Context
from agent_search.db import DBHandler
from agent_search.db.sample import _product_rows
from agent_search.types import Request, Result

pytestmark = pytest.mark.anyio

PRODUCT = "agents.demo.product"
PRODUCTS = _product_rows()
AVERAGE = statistics.fmean(p["price"] for p in PRODUCTS)
ABOVE = {p["id"] for p in PRODUCTS if p["price"] > AVERAGE}
BELOW = {p["id"] for p in PRODUCTS if p["price"] < AVERAGE}
LIMIT = 20
"""db.max_results by default: ``total`` counts every match."""


async def ask(shop: DBHandler, query: str, **kw: Any) -> Result:
    kw.setdefault("models", [PRODUCT])
    kw.setdefault("limit", LIMIT)
    return await shop.search(Context(config=shop.config, user_id="u1", team_id="t1"),
                             Request(type="db", query=query, **kw))


def test_the_shop_has_rows_on_both_sides_of_its_average() -> None:
    assert ABOVE and BELOW and len(ABOVE) + len(BELOW) <= len(PRODUCTS)


@pytest.mark.parametrize(("question", "want"), [
    ("products that cost more than the average price", ABOVE),
    ("Which products are priced above the average price?", ABOVE),
    ("products whose price is above average", ABOVE),
    ("products cheaper than average", BELOW),
    ("products with a price below the mean", BELOW),
])
async def test_a_question_against_the_average_is_answered_by_the_database(
        shop: DBHandler, question: str, want: set[int]) -> None:
    r = await ask(shop, question)
    assert r.error is None, r.error
    got = {i.record_id for i in r.items}
    assert got <= want and len(got) == min(len(want), LIMIT), (question, r.dsl)
    assert r.total == len(want)
    assert r.dsl is not None
    wheres = r.dsl["queries"][0]["wheres"]
    assert {"field": "price", "op": ">" if want == ABOVE else "<",
            "value": {"aggregate": "avg(price)"}} in wheres, wheres
    assert not any(i.metadata.get("kind") == "aggregate" for i in r.items)  # no number


async def test_no_field_to_compare_answers_nothing_and_says_why(shop: DBHandler) -> None:
    r = await ask(shop, "products above the average rating")  # products have no rating
    assert r.error is None and r.items == []
    assert any("could not tell which field" in w for w in r.warnings), r.warnings


async def test_the_average_itself_is_still_a_number_asked_for(shop: DBHandler) -> None:
    r = await ask(shop, "What is the average price of products?")
    answers = [i for i in r.items if i.metadata.get("kind") == "aggregate"]
    assert answers and answers[0].data == {"avg(price)": pytest.approx(AVERAGE)}


@pytest.mark.parametrize("value", [
    {"aggregate": "max(price)"}, {"aggregate": "min(price)"}, {"aggregate": "count"},
    {"aggregate": "sum(stock)"}, {"aggregate": {"fn": "avg", "field": "Price"}}])
async def test_any_aggregate_of_the_same_model_may_be_compared_with(
        shop: DBHandler, value: dict[str, Any]) -> None:
    dsl = {"model": PRODUCT, "wheres": [{"field": "price", "op": ">=", "value": value}]}
    r = await ask(shop, "x", options={"dsl": dsl})
    assert r.error is None, r.error
    written = value["aggregate"]
    fn, field = (written["fn"], written["field"].lower()) if isinstance(written, dict) \
        else (written.partition("(")[0], written.partition("(")[2].rstrip(")"))
    numbers = [p[field] for p in PRODUCTS] if field else []
    computed = {"max": max, "min": min, "sum": sum, "avg": statistics.fmean}[fn](numbers) \
        if field else len(PRODUCTS)
    want = {p["id"] for p in PRODUCTS if p["price"] >= computed}
    assert {i.record_id for i in r.items} <= want and r.total == len(want)
    canonical = r.dsl["queries"][0]["wheres"][0]["value"] if r.dsl else None
    assert canonical == {"aggregate": "avg(price)" if isinstance(written, dict) else written}


@pytest.mark.parametrize(("where", "message"), [
    ({"field": "price", "op": ">", "value": {"aggregate": "avg(price)", "x": 1}},
     'or a computed value {"aggregate": "avg(Field)"} and nothing else'),
    ({"field": "price", "op": ">", "value": {"avg": "price"}}, "values must be strings"),
    ({"field": "price", "op": "like", "value": {"aggregate": "avg(price)"}},
     "can't compare with a computed value"),
    ({"field": "price", "op": ">", "value": {"aggregate": "avg(name)"}}, "numeric field"),
    ({"field": "price", "op": ">", "value": {"aggregate": "avg(no_such)"}},
     "unknown aggregate field"),
    ({"field": "price", "op": ">", "value": {"aggregate": "median(price)"}},
     "not an aggregate"),
    ({"field": "price", "op": ">", "value": {"aggregate": 5}}, "aggregate"),
    ({"field": "orders.total", "op": ">", "value": {"aggregate": "avg(price)"}},
     "only a field of the model itself"),
    ({"field": "price", "op": ">", "value": {"aggregate": "avg(" + "p" * 300 + ")"}},
     "at most 200 characters"),
])
async def test_a_bad_computed_value_is_a_clear_error(shop: DBHandler, where: dict[str, Any],
                                                     message: str) -> None:
    r = await ask(shop, "x", options={"dsl": {"model": PRODUCT, "wheres": [where]}})
    assert r.error is not None and message in r.error, r.error
    assert "\n" not in r.error and "Traceback" not in r.error
    assert r.items == []
