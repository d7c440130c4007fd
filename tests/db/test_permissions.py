"""Permission filters on the sample shop's ``orders`` (``__yao_created_by``,
``__yao_team_id``, ``public``, ``share``), on SQLite and PostgreSQL.

The expected visible sets come from the rows the sample generator writes, filtered here by
the documented rule: public, or owned by the caller, or shared with the caller's team."""

from __future__ import annotations

from typing import Any

import pytest

from agent_search.context import Context
from agent_search.db import DBHandler
from agent_search.types import QueryWhere, Request
from tests.support.shop_orders import ORDER, ORDERS, PRODUCT, visible

pytestmark = pytest.mark.anyio


async def search_ids(handler: DBHandler, user: str | None, team: str | None,
                     **kw: Any) -> set[Any]:
    kw.setdefault("query", "orders")
    kw.setdefault("models", [ORDER])
    kw.setdefault("limit", 100)
    config = handler.config.merged({"db": {"max_results": 100}})
    r = await handler.search(Context(config=config, user_id=user, team_id=team),
                             Request(type="db", **kw))
    assert r.error is None, r.error
    assert r.total == len(r.items)
    return {i.record_id for i in r.items}


@pytest.mark.parametrize(("user", "team"), [("u1", "t1"), ("u2", "t1"), ("u3", "t2"),
                                            ("u1", None), (None, "t2"), (None, None),
                                            ("stranger", "t9")])
async def test_each_caller_sees_exactly_what_the_rule_allows(shop: DBHandler, user: str | None,
                                                             team: str | None) -> None:
    want = visible(user, team)
    assert want  # every caller sees at least the public orders
    assert await search_ids(shop, user, team) == want


async def test_anonymous_caller_sees_only_public_records(shop: DBHandler) -> None:
    got = await search_ids(shop, None, None)
    assert got == {o["id"] for o in ORDERS if o["public"]}


async def test_generated_dsl_cannot_widen_the_filter(shop: DBHandler) -> None:
    """An explicit DSL (as an LLM or a hook could produce) asking for another team's rows
    gets only the rows the caller may see among them; a condition on an owner column holds
    only on rows the caller sees as owner or team member (not on others' public rows)."""
    dsl = {"model": ORDER, "wheres": [{"or": [
        {"field": "__yao_team_id", "op": "=", "value": "t1"},
        {"field": "__yao_created_by", "op": "!=", "value": "nobody"}]}]}
    got = await search_ids(shop, "u3", "t2", options={"dsl": dsl})
    assert got == visible("u3", "t2") - {o["id"] for o in ORDERS
                                         if o["public"] and o["__yao_team_id"] != "t2"}
    t1_private = {o["id"] for o in ORDERS if o["__yao_team_id"] == "t1" and not o["public"]}
    assert not got & t1_private


async def test_hook_wheres_cannot_widen_the_filter(shop: DBHandler) -> None:
    got = await search_ids(shop, "u3", "t2", wheres=[
        QueryWhere.model_validate({"or": [{"field": "public", "value": False},
                                          {"field": "public", "value": True}]})])
    # a where on a permission column (public too: issue 21 item 8) holds only on rows the
    # caller sees as owner or team member, so it cannot widen, and tells nothing of others'
    assert got == visible("u3", "t2") - {o["id"] for o in ORDERS
                                         if o["public"] and o["__yao_team_id"] != "t2"}


async def test_natural_language_search_is_filtered_too(shop: DBHandler) -> None:
    got = await search_ids(shop, "u1", "t1", query="shipped orders")
    want = {o["id"] for o in ORDERS if o["status"] == "shipped"} & visible("u1", "t1")
    assert got == want and want


async def test_relation_subquery_applies_the_related_models_filter(shop: DBHandler) -> None:
    """Products filtered through ``orders`` only see the caller's visible orders, so a
    product search can't reveal who ordered what in another team."""
    customer = "Ada Lovelace"
    dsl = {"model": PRODUCT, "wheres": [{"field": "orders.customer", "op": "=",
                                         "value": customer}]}
    for user, team in [("u1", "t1"), ("u3", "t2"), (None, None)]:
        got = await search_ids(shop, user, team, query="products", models=[PRODUCT],
                               options={"dsl": dsl})
        want = {o["product_id"] for o in ORDERS
                if o["customer"] == customer and o["id"] in visible(user, team)}
        assert got == want


async def test_permission_columns_are_not_in_item_data(shop: DBHandler) -> None:
    r = await shop.search(Context(config=shop.config, user_id="u1", team_id="t1"),
                          Request(type="db", query="orders", models=[ORDER], limit=3))
    assert r.error is None and r.items
    for item in r.items:
        assert item.data is not None
        assert not any(k.startswith("__yao_") for k in item.data)
        assert item.metadata["related"]["product"]  # product name via the relation
    assert r.dsl is not None and r.dsl["queries"][0]["permission"] == "public or owner or team"


async def test_value_index_of_permission_aware_tables_holds_public_rows_only(
        shop: DBHandler) -> None:
    """Declared option values, and the customer names of *public* orders only: what every
    caller may see anyway, never another tenant's private data."""
    await shop.catalog.load()
    entry = shop.catalog.find(ORDER)
    assert entry is not None
    values = await shop.catalog.values(entry)
    assert values["status"] == ["pending", "paid", "shipped", "cancelled"]
    assert set(values["customer"]) == {o["customer"] for o in ORDERS if o["public"]}


async def test_counts_over_a_relation_count_only_visible_rows(shop: DBHandler) -> None:
    """"products with at least 2 orders" counts the orders the caller may see, so a count
    can't reveal how many private orders another team placed."""
    dsl = {"model": PRODUCT, "wheres": [{"field": "count(orders)", "op": ">=", "value": 2}]}
    for user, team in [("u1", "t1"), ("u3", "t2"), (None, None)]:
        got = await search_ids(shop, user, team, query="products", models=[PRODUCT],
                               options={"dsl": dsl})
        seen: dict[int, int] = {}
        for o in ORDERS:
            if o["id"] in visible(user, team):
                seen[o["product_id"]] = seen.get(o["product_id"], 0) + 1
        assert got == {pid for pid, n in seen.items() if n >= 2}


async def test_an_order_on_a_related_field_sees_only_visible_related_rows(
        shop: DBHandler) -> None:
    """Products ordered by their orders' quantity (largest first) rank by the orders the
    caller may see: the order of the answer can't reveal another team's private orders;
    products without a visible order come last, ties by id."""
    dsl = {"model": PRODUCT, "orders": [{"field": "orders.quantity", "order": "desc"}]}
    for user, team in [("u1", "t1"), ("u3", "t2"), (None, None)]:
        config = shop.config.merged({"db": {"max_results": 100}})
        r = await shop.search(Context(config=config, user_id=user, team_id=team),
                              Request(type="db", query="products", models=[PRODUCT],
                                      limit=100, options={"dsl": dsl}))
        assert r.error is None, r.error
        best: dict[int, int] = {}
        for o in ORDERS:
            if o["id"] in visible(user, team):
                best[o["product_id"]] = max(best.get(o["product_id"], 0), o["quantity"])
        got = [i.record_id for i in r.items]
        want = sorted(got, key=lambda pid: (pid not in best, -best.get(pid, 0), -pid))
        assert got == want and got[:len(best)] == sorted(
            best, key=lambda pid: (-best[pid], -pid))


async def test_rows_of_a_filtered_table_say_they_count_what_the_caller_may_see(
        shop: DBHandler) -> None:
    """An order (permission columns) is marked: its search counted the rows the caller
    may see, which the answer says ("6 ... are visible to you"); a product is not."""
    ctx = Context(config=shop.config, user_id="u1", team_id="t1")
    orders = await shop.search(ctx, Request(type="db", query="orders", models=[ORDER]))
    products = await shop.search(ctx, Request(type="db", query="products",
                                              models=[PRODUCT]))
    assert orders.items and products.items
    assert all(i.metadata.get("permission_filtered") is True for i in orders.items)
    assert not any("permission_filtered" in i.metadata for i in products.items)
