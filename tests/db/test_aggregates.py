"""Aggregates computed by the database (issue 23): explicit DSL and natural language, on
SQLite and PostgreSQL, with the permission filter applied before anything is counted."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from agent_search.context import Context
from agent_search.db import DBHandler
from agent_search.db.sample import _order_rows, _product_rows
from agent_search.types import Request, Result
from tests.support.shop_orders import ORDER, visible

pytestmark = pytest.mark.anyio

ORDERS = _order_rows(_product_rows())


async def ask(handler: DBHandler, query: str, models: list[str], *, user: str | None = "u1",
              team: str | None = "t1", dsl: dict[str, Any] | None = None) -> Result:
    config = handler.config.merged({"db": {"max_results": 100}})
    r = await handler.search(Context(config=config, user_id=user, team_id=team),
                             Request(type="db", query=query, models=models, limit=50,
                                     options={"dsl": dsl} if dsl else {}))
    assert r.error is None, r.error
    return r


def answers(r: Result) -> list[dict[str, Any]]:
    return [i.data or {} for i in r.items if i.metadata.get("kind") == "aggregate"]


@pytest.mark.parametrize(("user", "team"), [("u1", "t1"), ("u3", "t2"), (None, None)])
async def test_counts_per_group_count_only_visible_rows(shop: DBHandler, user: str | None,
                                                        team: str | None) -> None:
    seen = visible(user, team)
    want = Counter(o["status"] for o in ORDERS if o["id"] in seen)
    r = await ask(shop, "orders", [ORDER], user=user, team=team, dsl={
        "model": ORDER, "group_by": ["status"], "aggregates": ["count", "sum(quantity)"],
        "orders": [{"field": "count", "order": "desc"}]})
    got = answers(r)
    assert {a["status"]: a["count"] for a in got} == dict(want)
    assert [a["count"] for a in got] == sorted(want.values(), reverse=True)
    assert {a["status"]: a["sum(quantity)"] for a in got} == {
        s: sum(o["quantity"] for o in ORDERS if o["id"] in seen and o["status"] == s)
        for s in want}
    assert r.total == len(seen)  # the records behind the answer
    assert {i.record_id for i in r.items if i.metadata.get("kind") != "aggregate"} <= seen
    assert r.dsl is not None and r.dsl["queries"][0]["aggregates"] == ["count",
                                                                       "sum(quantity)"]


async def test_having_and_a_related_group(shop: DBHandler) -> None:
    seen = visible("u1", "t1")
    per_product = Counter(o["product_id"] for o in ORDERS if o["id"] in seen)
    r = await ask(shop, "orders", [ORDER], dsl={
        "model": ORDER, "group_by": ["product_id"], "aggregates": ["count"],
        "having": [{"aggregate": "count", "op": ">=", "value": 2}]})
    assert {a["product_id"]: a["count"] for a in answers(r)} == {
        p: n for p, n in per_product.items() if n >= 2}


async def test_groups_none_of_which_meets_the_having_show_no_records(shop: DBHandler) -> None:
    """"products ordered at least 1000 times" when none is: no answer rows, and no
    record stands in for them (they would not meet the condition)."""
    r = await ask(shop, "orders", [ORDER], dsl={
        "model": ORDER, "group_by": ["product_id"], "aggregates": ["count"],
        "having": [{"aggregate": "count", "op": ">=", "value": 1000}]})
    assert r.error is None
    assert r.items == [] and r.total == 0
    assert r.dsl is not None and r.dsl["queries"][0]["having"]


async def test_a_bad_aggregate_is_a_clear_error(shop: DBHandler) -> None:
    for dsl, words in (
            ({"model": ORDER, "aggregates": ["avg(customer)"]}, "numeric"),
            ({"model": ORDER, "aggregates": ["median(total)"]}, "not an aggregate"),
            ({"model": ORDER, "aggregates": ["count"], "orders": [{"field": "total"}]},
             "orders by one of its aggregates"),
            ({"model": ORDER, "aggregates": ["max(__yao_created_by)"]}, "permission"),
            ({"model": ORDER, "having": [{"aggregate": "count", "op": ">", "value": 1}]},
             "'having' needs")):
        r = await shop.search(Context(config=shop.config, user_id="u1", team_id="t1"),
                              Request(type="db", query="x", models=[ORDER],
                                      options={"dsl": dsl}))
        assert r.error is not None and words in r.error, (dsl, r.error)


async def test_natural_language_aggregates_on_chinook(chinook: DBHandler) -> None:
    r = await ask(chinook, "the average, minimum and maximum unit price of tracks",
                  ["Track", "Album", "Genre"], user=None, team=None)
    assert answers(r) == [{"avg(UnitPrice)": pytest.approx(1.050805, abs=1e-6),
                           "min(UnitPrice)": pytest.approx(0.99),
                           "max(UnitPrice)": pytest.approx(1.99)}]
    # the text a person reads rounds the average (1.050805 → 1.05); data keeps it
    assert r.items[0].title == "avg(UnitPrice): 1.05; min(UnitPrice): 0.99; " \
        "max(UnitPrice): 1.99"
    r = await ask(chinook, "how many customers are there in each country?", ["Customer"],
                  user=None, team=None)
    got = {a["Country"]: a["count"] for a in answers(r)}
    assert got["USA"] == 13 and got["Brazil"] == 5 and sum(got.values()) == 59
    r = await ask(chinook, "the most common country of customers", ["Customer"],
                  user=None, team=None)
    assert answers(r) == [{"Country": "USA", "count": 13}]


async def test_more_answer_rows_than_the_limit_are_warned(chinook: DBHandler) -> None:
    r = await chinook.search(Context(config=chinook.config), Request(
        type="db", query="how many customers are there in each city?", models=["Customer"],
        limit=5))
    assert len(answers(r)) == 5
    assert any("more than 5 answer rows" in w for w in r.warnings)
