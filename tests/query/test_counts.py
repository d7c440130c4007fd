"""agent_search.query.nl._rules._counts: counts over hasMany relations."""

from __future__ import annotations

from typing import Any

import pytest

from agent_search.query.nl._rules._counts import counts
from tests.support.query_schemas import fresh_plan, read


def run(text: str, target: str) -> Any:
    q = read(text, target)
    plan = fresh_plan(q)
    counts(q, plan)
    return plan


@pytest.mark.parametrize(("text", "where"), [
    ("artists with more than 5 albums", {"field": "count(albums)", "op": ">", "value": 5}),
    ("artists with 2 or more albums", {"field": "count(albums)", "op": ">=", "value": 2}),
    ("artists having at most 3 albums", {"field": "count(albums)", "op": "<=", "value": 3}),
    ("artists with 0 albums", {"field": "count(albums)", "op": "=", "value": 0}),
    ("genres with fewer than 10 tracks", {"field": "count(tracks)", "op": "<", "value": 10}),
    ("artists that have more than one album", {"field": "count(albums)", "op": ">",
                                               "value": 1}),
    ("artists who made at least two albums", {"field": "count(albums)", "op": ">=",
                                              "value": 2}),
    ("artists with no albums", {"field": "count(albums)", "op": "=", "value": 0}),
    ("artists without any albums", {"field": "count(albums)", "op": "=", "value": 0}),
    ("artists who have no albums", {"field": "count(albums)", "op": "=", "value": 0}),
    ("artists that do not have any album", {"field": "count(albums)", "op": "=", "value": 0}),
    ("artists that don't have albums and ...", {"field": "count(albums)", "op": "=",
                                                "value": 0}),
    ("artists who had three or more albums", {"field": "count(albums)", "op": ">=",
                                              "value": 3}),
])
def test_counts(text: str, where: dict[str, Any]) -> None:
    target = "Genre" if text.startswith("genres") else "Artist"
    plan = run(text, target)
    assert plan.wheres == [where] and plan.value_conditions == 1


def test_no_has_many_relation_or_no_relation_named_no_count() -> None:
    assert run("tracks with more than 5 albums", "Track").wheres == []
    assert run("artists with more than 5 fans", "Artist").wheres == []
    assert run("artists who made two albums", "Artist").wheres == []  # no comparator


def test_a_count_of_link_rows_named_by_the_model_they_link_to() -> None:
    """"teachers who teach at least two courses": a teacher's rows of a table linking
    teachers to courses are counted, named by the courses."""
    from agent_search.query.dsl import FieldSchema, ModelSchema, RelationSchema

    def f(name: str, kind: str = "string") -> FieldSchema:
        return FieldSchema(name=name, kind=kind)
    schemas = [
        ModelSchema(id="teacher", table="teacher", primary_key="tid", title_field="name",
                    fields=[f("tid", "integer"), f("name")],
                    relations=[RelationSchema(name="assignments", type="hasMany",
                                              model="assignment", key="tid", foreign="tid")]),
        ModelSchema(id="assignment", table="assignment", primary_key=None,
                    fields=[f("tid", "integer"), f("cid", "integer")],
                    relations=[RelationSchema(name="teacher", type="hasOne", model="teacher",
                                              key="tid", foreign="tid"),
                               RelationSchema(name="course", type="hasOne", model="course",
                                              key="cid", foreign="cid")]),
        ModelSchema(id="course", table="course", primary_key="cid", title_field="title",
                    fields=[f("cid", "integer"), f("title")])]
    q = read("teachers who teach at least two courses", "teacher", schemas)
    plan = fresh_plan(q)
    counts(q, plan)
    assert plan.wheres == [{"field": "count(assignments)", "op": ">=", "value": 2}]
    q = read("teachers who teach at least two rooms", "teacher", schemas)
    plan = fresh_plan(q)
    counts(q, plan)
    assert plan.wheres == []


def test_none_of_some_related_rows_is_not_said_as_none_of_all() -> None:
    """"artists with no albums released in 1999" is none *of those* albums: a count of
    every album = 0 would answer another question, so the condition is marked unsayable
    (the parser then answers nothing) and no count is added."""
    plan = run("artists with no albums released in 1999", "Artist")
    assert plan.wheres == [] and plan.unsayable
    assert "albums" in plan.unsayable[0]


@pytest.mark.parametrize("text", ["artists who did not release any album",
                                  "artists that never released an album"])
def test_none_of_the_related_rows_said_with_another_verb(text: str) -> None:
    from agent_search.query.nl._parser import parse
    from tests.support.query_schemas import NOW, music
    out = parse(text, music(), now=NOW)
    assert out["model"] == "Artist"
    assert out["wheres"] == [{"field": "count(albums)", "op": "=", "value": 0}]
