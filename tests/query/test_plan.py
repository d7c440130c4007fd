"""agent_search.query.nl._plan: the explicit state extractors share."""

from __future__ import annotations

from agent_search.query.nl._plan import MAX_CONDITIONS
from tests.support.query_schemas import fresh_plan, read


def test_the_question_is_read_once_against_its_target() -> None:
    q = read("Jazz tracks by AC/DC", "Track")
    assert q.low == "jazz tracks by ac/dc" and q.quote((0, 4)) == "Jazz"
    assert q.target_spans == [(5, 11)]
    assert q.candidates[0].path == "TrackId"


def test_conditions_use_up_their_words_and_are_capped_with_one_warning() -> None:
    plan = fresh_plan(read("tracks", "Track"))
    assert plan.used == [(0, 6)]  # the model's name is no value
    plan.add("UnitPrice", "<", 1, (10, 15), "UnitPrice < 1")
    assert plan.wheres == [{"field": "UnitPrice", "op": "<", "value": 1}]
    assert not plan.free((12, 20)) and plan.free((15, 20))
    assert plan.evidence == 1.0
    for i in range(MAX_CONDITIONS + 3):
        plan.add("Bytes", ">", i, (100 + i, 101 + i), "")
    assert len(plan.wheres) == MAX_CONDITIONS
    assert plan.warnings == [f"more than {MAX_CONDITIONS} conditions; the rest were ignored"]
    assert not plan.free((118, 119))  # ignored words are still used up


def test_the_first_order_on_a_field_wins_and_periods_are_half_open() -> None:
    plan = fresh_plan(read("tracks", "Track"))
    plan.order("UnitPrice", "desc", (0, 1), "x")
    plan.order("UnitPrice", "asc", (2, 3), "y")
    assert plan.orders == [{"field": "UnitPrice", "order": "desc"}]
    plan.add_period("d", "2024-01-01", "2025-01-01", (5, 9), "2024")
    assert plan.wheres[-1] == {"and": [{"field": "d", "op": ">=", "value": "2024-01-01"},
                                       {"field": "d", "op": "<", "value": "2025-01-01"}]}
    assert plan.notes[-1] == 'd in [2024-01-01, 2025-01-01) ("2024")'
