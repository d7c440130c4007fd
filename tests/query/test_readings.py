"""agent_search.query.nl._answer._readings: two relations to one model that the question does not
tell apart answer nothing; one it names, or a plain one, answers."""

from __future__ import annotations

import pytest

from agent_search.query.dsl import ModelSchema, RelationSchema
from agent_search.query.nl._answer._readings import _abbreviates
from agent_search.query.nl._parser import parse
from tests.support.query_schemas import NOW, f


def flights() -> list[ModelSchema]:
    """routes point twice at airports (source and destination), once at airlines."""
    return [
        ModelSchema(id="airports", table="airports", primary_key="apid", title_field="name",
                    fields=[f("apid", "integer", primary=True), f("name"),
                            f("country", values=["Canada", "Peru", "Chad"])],
                    relations=[
                        RelationSchema(name="routes", type="hasMany", model="routes",
                                       key="dst_apid", foreign="apid"),
                        RelationSchema(name="routes2", type="hasMany", model="routes",
                                       key="src_apid", foreign="apid")]),
        ModelSchema(id="routes", table="routes", primary_key="rid",
                    fields=[f("rid", "integer", primary=True), f("dst_apid", "integer"),
                            f("src_apid", "integer"), f("codeshare")],
                    relations=[
                        RelationSchema(name="dst_ap", type="hasOne", model="airports",
                                       key="apid", foreign="dst_apid"),
                        RelationSchema(name="src_ap", type="hasOne", model="airports",
                                       key="apid", foreign="src_apid")]),
    ]


def test_a_relation_the_question_does_not_pick_answers_nothing() -> None:
    out = parse("routes in Canada", flights(), now=NOW)
    assert out.get("queries") == [], out
    assert any("which of 2 relations" in w for w in out["warnings"])


@pytest.mark.parametrize(("text", "field"), [
    ("routes whose destination is in Canada", "dst_ap.country"),
    ("routes with a source airport in Canada", "src_ap.country")])
def test_the_relation_a_word_its_column_abbreviates_names_is_the_one_read(
        text: str, field: str) -> None:
    out = parse(text, flights(), now=NOW)
    assert out.get("model") == "routes", out
    assert [w["field"] for w in out["wheres"]] == [field]


def test_counts_per_group_follow_the_named_relation() -> None:
    out = parse("airports that the most routes start from (source)", flights(), now=NOW)
    assert out["group_by"][0] == "src_apid" and out["limit"] == 1
    assert parse("airports with the most routes", flights(), now=NOW)["queries"] == []


def test_abbreviations_keep_the_first_letter_and_the_order() -> None:
    assert _abbreviates("dst", "destination") and _abbreviates("src", "source")
    assert not _abbreviates("dst", "start") and not _abbreviates("src", "cars")
    assert not _abbreviates("destination", "dst")


def test_a_field_only_a_related_table_holds_asked_and_not_used_answers_nothing() -> None:
    """"the composers of albums": the albums shown hold no composer (their tracks do)."""
    from tests.support.query_schemas import music
    out = parse("the composers of albums", music(), now=NOW)
    assert out.get("queries") == [], out
    assert any("'composers' names Track.Composer" in w for w in out["warnings"])


def test_a_related_field_beside_one_of_the_rows_own_is_theirs_to_point_at() -> None:
    """"titles of albums and names of their artists": each album points at its artist."""
    from tests.support.query_schemas import music
    out = parse("the titles of albums and the names of their artists", music(), now=NOW)
    assert out["model"] == "Album", out


def test_a_related_field_the_reading_uses_is_accounted_for() -> None:
    from tests.support.query_schemas import music
    out = parse("the unit price of tracks on the album Big Ones", music(), now=NOW)
    assert out["model"] == "Track"
    assert out["wheres"] == [{"field": "album.Title", "op": "=", "value": "Big Ones"}]
