"""agent_search.query.nl._rules._ordering: orders and top-N."""

from __future__ import annotations

from typing import Any

import pytest

from agent_search.query.nl._parser import parse
from agent_search.query.nl._rules._ordering import (
    alphabetical,
    field_superlative,
    sort_by,
    superlatives,
    top_n,
)
from tests.support.query_schemas import NOW, fresh_plan, music, people, read, shop


def run(extractors: list[Any], text: str, target: str = "Track", schemas: Any = None) -> Any:
    q = read(text, target, schemas)
    plan = fresh_plan(q)
    for extract in extractors:
        extract(q, plan)
    return plan


@pytest.mark.parametrize(("extract", "text", "order"), [
    (sort_by, "tracks sorted by bytes desc", {"field": "Bytes", "order": "desc"}),
    (sort_by, "tracks ordered by unit price", {"field": "UnitPrice", "order": "asc"}),
    # the direction said after a word (it was read as ascending: a wrong order)
    (sort_by, "tracks sorted by bytes in descending order", {"field": "Bytes", "order": "desc"}),
    (sort_by, "tracks sorted by bytes in decreasing order, please",
     {"field": "Bytes", "order": "desc"}),
    (sort_by, "tracks ordered by bytes in ascending order", {"field": "Bytes", "order": "asc"}),
    (alphabetical, "tracks in alphabetical order", {"field": "Name", "order": "asc"}),
    (alphabetical, "tracks z-a", {"field": "Name", "order": "desc"}),
    (field_superlative, "tracks with the fewest milliseconds",
     {"field": "Milliseconds", "order": "asc"}),
    (superlatives, "the most expensive tracks", {"field": "UnitPrice", "order": "desc"}),
    (superlatives, "the longest tracks", {"field": "Milliseconds", "order": "desc"}),
    (superlatives, "the largest tracks", {"field": "Bytes", "order": "desc"}),
])
def test_orders(extract: Any, text: str, order: dict[str, str]) -> None:
    assert run([extract], text).orders == [order]


def test_a_superlative_without_a_field_is_a_warning_unless_it_is_a_common_word() -> None:
    assert run([superlatives], "the newest tracks").warnings == ["no field to order 'newest' by"]
    assert run([superlatives], "the last tracks").warnings == []


def test_a_superlative_of_another_measure_orders_the_number_field_named_after_it() -> None:
    plan = run([superlatives], "the product with the shortest stock", "product", shop())
    assert plan.orders == [{"field": "stock", "order": "asc"}] and plan.warnings == []
    plan = run([superlatives], "the shortest product in stock", "product", shop())
    assert plan.orders == [] and plan.warnings == ["no field to order 'shortest' by"]


def test_a_field_name_is_not_a_superlative() -> None:
    schemas = [people()[0].model_copy(update={"fields": [
        *people()[0].fields, people()[0].fields[0].model_copy(
            update={"name": "HireDate", "kind": "date", "primary": False})]})]
    plan = run([superlatives], "employees by last name", "Employee", schemas)
    assert plan.orders == []
    plan = run([superlatives], "the latest employees", "Employee", schemas)
    assert plan.orders == [{"field": "HireDate", "order": "desc"}]


def test_top_n_and_one_asked_for() -> None:
    plan = run([superlatives, top_n], "the 5 most expensive tracks")
    assert plan.limit == 5
    plan = run([superlatives, top_n], "the cheapest track")
    assert plan.limit == 1 and plan.notes[-1] == "limit 1 (one asked for)"
    assert run([superlatives, top_n], "the cheapest tracks").limit is None


def test_most_recently_orders_by_the_date_latest_first() -> None:
    """The adverb is the superlative too: "the invoice issued most recently"."""
    out = parse("the invoice issued most recently", music(), now=NOW)
    assert out["orders"] == [{"field": "InvoiceDate", "order": "desc"}] and out["limit"] == 1
