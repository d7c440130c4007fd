"""The sample shop's orders as its generator writes them, and who may see each: the
documented permission rule (public, or owned by the caller, or shared with the caller's
team) applied here, independently of the db handler, so tests compare against it."""

from __future__ import annotations

from agent_search.db.sample import _order_rows, _product_rows

__all__ = ["ORDER", "ORDERS", "PRODUCT", "visible"]

ORDER = "agents.demo.order"
PRODUCT = "agents.demo.product"
ORDERS = _order_rows(_product_rows())


def visible(user: str | None, team: str | None) -> set[int]:
    """The ids of the orders ``user`` of ``team`` may see."""
    return {o["id"] for o in ORDERS
            if o["public"]
            or (user and o["__yao_created_by"] == user)
            or (team and o["__yao_team_id"] == team and o["share"] == "team")}
