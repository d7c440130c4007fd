"""agent_search.query.nl._rules._values: equality on the known values a question names."""

from __future__ import annotations

from typing import Any

import pytest

from agent_search.query.dsl import ModelSchema, RelationSchema
from agent_search.query.nl._reading._value_index import value_index
from agent_search.query.nl._rules._values import (
    VARIANT_CONFIDENCE,
    exact_matches,
    fuzzy_matches,
    values,
)
from tests.support.query_schemas import f, fresh_plan, music, people, read


def run(text: str, target: str, schemas: Any = None) -> Any:
    q = read(text, target, schemas)
    plan = fresh_plan(q)
    values(q, plan)
    return plan


@pytest.mark.parametrize(("text", "target", "where"), [
    ("Jazz tracks", "Track", {"field": "genre.Name", "op": "=", "value": "Jazz"}),
    ("tracks in the jazz genre", "Track", {"field": "genre.Name", "op": "=", "value": "Jazz"}),
    ("albums by ac/dc", "Album", {"field": "artist.Name", "op": "=", "value": "AC/DC"}),
    ("tracks by AC/DC", "Track", {"field": "album.artist.Name", "op": "=", "value": "AC/DC"}),
    ("tracks in the Latin or Pop genre", "Track",
     {"field": "genre.Name", "op": "in", "value": ["Latin", "Pop"]}),
    ("tracks not in the Rock genre", "Track",
     {"field": "genre.Name", "op": "!=", "value": "Rock"}),
    ("albums that do not feature Queen", "Album",
     {"field": "artist.Name", "op": "!=", "value": "Queen"}),
    ("tracks that don't play Jazz", "Track",
     {"field": "genre.Name", "op": "!=", "value": "Jazz"}),
    ("employees not living, in Calgary", "Employee",
     {"field": "City", "op": "=", "value": "Calgary"}),  # the negation is cut off
    ("employees in Calgary", "Employee", {"field": "City", "op": "=", "value": "Calgary"}),
])
def test_equalities(text: str, target: str, where: dict[str, Any]) -> None:
    schemas = people() if target == "Employee" else None
    plan = run(text, target, schemas)
    assert plan.wheres == [where] and plan.confidence == 1.0


def test_short_values_match_case_and_all() -> None:
    assert run("albums by U2", "Album").wheres == [
        {"field": "artist.Name", "op": "=", "value": "U2"}]
    assert run("albums by u2", "Album").wheres == []


def test_another_number_and_a_misspelling_lower_the_confidence() -> None:
    q = read("metals", "Genre")
    found = exact_matches(q, value_index(q.candidates, q.serials))
    assert [(m.value, m.confidence) for m in found] == [("Metal", VARIANT_CONFIDENCE)]
    plan = run("albums by metalica", "Album")
    assert plan.wheres == [{"field": "artist.Name", "op": "=", "value": "Metallica"}]
    assert 0.5 < plan.confidence < 1.0
    assert "≈ 'Metallica'" in plan.notes[0]


def test_fuzzy_matching_skips_short_and_used_words() -> None:
    q = read("albums by metalica", "Album")
    index = value_index(q.candidates, q.serials)
    assert [m.value for m in fuzzy_matches(q, index, [])] == ["Metallica"]
    assert fuzzy_matches(q, index, [(10, 18)]) == []  # already understood
    short = read("albums by quen", "Album")  # under MIN_FUZZY_CHARS
    assert fuzzy_matches(short, value_index(short.candidates, short.serials), []) == []


def test_a_value_of_two_fields_keeps_both_readings() -> None:
    plan = run("Iron Maiden albums", "Album")
    assert plan.wheres == [{"or": [{"field": "Title", "op": "=", "value": "Iron Maiden"},
                                   {"field": "artist.Name", "op": "=",
                                    "value": "Iron Maiden"}]}]
    assert plan.confidence == 0.9 and "could be any of these" in plan.notes[0]


def test_a_value_of_one_model_linked_twice_is_read_on_the_first_link() -> None:
    person = ModelSchema(id="Person", table="Person", primary_key="Id", title_field="Name",
                         fields=[f("Id", "integer", primary=True),
                                 f("Name", values=["Kyle", "Jessica"])])

    def link(name: str, columns: tuple[str, str]) -> ModelSchema:
        return ModelSchema(id=name, table=name, primary_key=columns[0],
                           fields=[f(c, "integer") for c in columns],
                           relations=[RelationSchema(name=c.removesuffix("_id"), type="hasOne",
                                                     model="Person", key="Id", foreign=c)
                                      for c in reversed(columns)])

    schemas = [person, link("Follow", ("follower_id", "followed_id")),
               link("Block", ("blocked_id", "blocker_id"))]
    assert run("people Kyle follows", "Follow", schemas).wheres == [
        {"field": "follower.Name", "op": "=", "value": "Kyle"}]
    assert run("people Kyle blocked", "Block", schemas).wheres == [
        {"field": "blocked.Name", "op": "=", "value": "Kyle"}]  # the column order decides


def test_used_words_are_no_values() -> None:
    q = read("Jazz tracks", "Track")
    plan = fresh_plan(q)
    plan.used.append((0, 4))
    values(q, plan)
    assert plan.wheres == []


def test_stop_word_values_are_never_matched() -> None:
    schemas = music()
    genre = next(s for s in schemas if s.id == "Genre")
    genre.fields[1].values.append("The")
    assert run("the tracks", "Track", schemas).wheres == []


def test_a_possessive_names_the_value() -> None:
    plan = run("What is Queen's artist id?", "Artist")
    assert plan.wheres == [{"field": "Name", "op": "=", "value": "Queen"}]


def test_a_word_of_a_field_name_is_no_value_of_it() -> None:
    """"the package option of channels named Sky": "Option" is a value of the field
    Package_Option, but here it is part of the field's name."""
    channel = ModelSchema(id="channel", table="channel", primary_key="id", fields=[
        f("id", "integer", primary=True), f("Package_Option", values=["Option", "Sky"]),
        f("series_name", values=["Sky Radio"])])
    plan = run("the package option of the channel with series name Sky Radio", "channel",
               [channel])
    assert plan.wheres == [{"field": "series_name", "op": "=", "value": "Sky Radio"}]


def test_values_joined_by_and_on_rows_the_target_has_many_of_are_each_required() -> None:
    plan = run("artists with the albums Big Ones and Greatest Hits", "Artist")
    assert plan.wheres == [{"field": "albums.Title", "op": "=", "value": "Big Ones"},
                           {"field": "albums.Title", "op": "=", "value": "Greatest Hits"}]
    plan = run("artists with the albums Big Ones or Greatest Hits", "Artist")
    assert plan.wheres == [{"field": "albums.Title", "op": "in",
                            "value": ["Big Ones", "Greatest Hits"]}]
    plan = run("tracks in the Latin and Pop genres", "Track")  # one genre each: either
    assert plan.wheres == [{"field": "genre.Name", "op": "in", "value": ["Latin", "Pop"]}]


def airlines() -> list[ModelSchema]:
    """routes point at airlines, whose names hold the table's own name."""
    return [
        ModelSchema(id="airlines", table="airlines", primary_key="alid", title_field="name",
                    fields=[f("alid", "integer", primary=True),
                            f("name", values=["American Airlines", "Air China"]),
                            f("country", values=["United States", "China"])]),
        ModelSchema(id="routes", table="routes", primary_key="rid",
                    fields=[f("rid", "integer", primary=True), f("alid", "integer")],
                    relations=[RelationSchema(name="al", type="hasOne", model="airlines",
                                              key="alid", foreign="alid")]),
    ]


def test_a_value_holding_a_table_name_is_read_whole() -> None:
    """"American Airlines" is an airline's name: not "American" (United States) beside
    the table airlines."""
    from agent_search.query.nl._parser import parse
    from tests.support.query_schemas import NOW
    out = parse("How many routes does American Airlines operate?", airlines(), now=NOW)
    assert out["model"] == "routes", out
    assert out["wheres"] == [{"field": "al.name", "op": "=", "value": "American Airlines"}]
