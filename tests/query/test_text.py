"""agent_search.query.nl._rules._text: contains matches for stated text."""

from __future__ import annotations

from typing import Any

import pytest

from agent_search.query.nl._rules._text import stated_texts, text_conditions
from tests.support.query_schemas import fresh_plan, people, read, staff


def run(text: str, target: str, schemas: Any = None) -> Any:
    q = read(text, target, schemas)
    plan = fresh_plan(q)
    text_conditions(q, plan)
    return plan


@pytest.mark.parametrize(("text", "target", "where"), [
    ("artists called Santana", "Artist", {"field": "Name", "op": "like", "value": "%Santana%"}),
    ("albums with greatest hits in the title", "Album",
     {"field": "Title", "op": "like", "value": "%greatest hits%"}),
    ('tracks that contain the word "love"', "Track",
     {"field": "Name", "op": "like", "value": "%love%"}),
    ("tracks with composer containing Hendrix", "Track",
     {"field": "Composer", "op": "like", "value": "%Hendrix%"}),
    ('tracks "Walk 100%"', "Track", {"field": "Name", "op": "like", "value": "%Walk 100_%"}),
])
def test_contains_matches(text: str, target: str, where: dict[str, Any]) -> None:
    plan = run(text, target)
    assert plan.wheres == [where] and plan.value_conditions == 1


def test_a_known_value_is_left_to_the_value_extractor() -> None:
    assert run('albums "Big Ones"', "Album").wheres == []
    assert run("employees named Jane", "Employee", people()).wheres == []  # FirstName = ...


def test_an_unknown_person_name_is_matched_on_first_and_last_name() -> None:
    plan = run("employees named Luis", "Employee", people())
    assert plan.wheres == [{"or": [
        {"field": "FirstName", "op": "like", "value": "%Luis%"},
        {"field": "LastName", "op": "like", "value": "%Luis%"}]}]


def test_the_full_stop_ending_a_question_is_not_part_of_a_name() -> None:
    for text in ("the employees named Luis.", "Show the employees named Luis!"):
        plan = run(text, "Employee", people())
        assert plan.wheres == [{"or": [
            {"field": "FirstName", "op": "like", "value": "%Luis%"},
            {"field": "LastName", "op": "like", "value": "%Luis%"}]}], text
    plan = run("employees named St. Luis", "Employee", people())  # inside a name it stays
    assert "%St. Luis%" in str(plan.wheres)


@pytest.mark.parametrize("text", ["artists whose names contain the substring 'Que'",
                                  "artists which have the substring 'Que'"])
def test_a_substring_is_a_contains_match_and_the_word_is_understood(text: str) -> None:
    from agent_search.query.nl._parser import leftover_words, understand
    q = read(text, "Artist")
    plan = understand(q)
    assert plan.wheres == [{"field": "Name", "op": "like", "value": "%Que%"}], text
    assert leftover_words(q, plan) == []


def test_in_field_texts_come_first() -> None:
    texts = stated_texts(read('"x" with love in the title', "Album"))
    assert [t.how for t in texts] == ["in-field", "quoted"]
    assert texts[0].field is not None and texts[0].field.path == "Title"


@pytest.mark.parametrize(("text", "value"), [
    ("customers who work at Apple", "%Apple%"),
    ("customers working for Google in Calgary", "%Google%"),  # the place is not the firm
    ("customers employed by the Riotur agency", "%Riotur agency%"),
])
def test_a_workplace_is_a_contains_match_on_the_company_field(text: str, value: str) -> None:
    plan = run(text, "Customer", staff())
    assert plan.wheres == [{"field": "Company", "op": "like", "value": value}]


def test_a_workplace_without_a_company_field_is_no_condition() -> None:
    assert run("employees who work at Apple", "Employee", people()).wheres == []


def test_done_by_is_a_contains_match_on_the_field_naming_the_doer() -> None:
    plan = run("tracks composed by Jimi Hendrix", "Track")
    assert plan.wheres == [{"field": "Composer", "op": "like", "value": "%Jimi Hendrix%"}]
    # no Writer field: "written by" states nothing here
    assert run("tracks written by Bono", "Track").wheres == []
