"""Numeric fields named by what they measure (:mod:`agent_search.query.nl._rules._measures`)."""

from __future__ import annotations

from agent_search.query.dsl import FieldSchema, ModelSchema, validate_dsl
from agent_search.query.nl._parser import parse
from tests.support.query_schemas import NOW


def people() -> list[ModelSchema]:
    def f(name: str, kind: str = "string", **kw: object) -> FieldSchema:
        return FieldSchema.model_validate({"name": name, "kind": kind, **kw})
    return [ModelSchema(id="person", table="person", primary_key="person_id",
                        title_field="name",
                        fields=[f("person_id", "integer", primary=True), f("name"),
                                f("Age", "integer"), f("Height_cm", "number"),
                                f("Net_Worth", "number"), f("Grade", "integer"),
                                f("Home_Town", values=["Oslo", "Lima"])])]


def born() -> list[ModelSchema]:
    schema = people()[0]
    fields = [f for f in schema.fields if f.name != "Age"]
    fields.append(FieldSchema(name="Birth_Date", kind="date"))
    return [schema.model_copy(update={"fields": fields})]


def test_adjectives_order_by_the_field_they_measure() -> None:
    out = parse("the hometown of the youngest person", people(), now=NOW)
    assert out["orders"] == [{"field": "Age", "order": "asc"}] and out["limit"] == 1
    assert parse("the tallest people", people(), now=NOW)["orders"] == [
        {"field": "Height_cm", "order": "desc"}]
    assert parse("the richest person", people(), now=NOW)["orders"] == [
        {"field": "Net_Worth", "order": "desc"}]
    # without an age, a birth date in the other direction
    assert parse("the youngest person", born(), now=NOW)["orders"] == [
        {"field": "Birth_Date", "order": "desc"}]


def test_order_words_take_the_field_named_beside_them() -> None:
    out = parse("names of people in descending order of age", people(), now=NOW)
    assert out["orders"] == [{"field": "Age", "order": "desc"}]
    out = parse("people ordered by their net worth", people(), now=NOW)
    assert out["orders"] == [{"field": "Net_Worth", "order": "asc"}]
    # "ordered by" names the field after it, even with another named right before
    out = parse("list the names and ages ordered by their net worth", people(),
                now=NOW)
    assert out["orders"] == [{"field": "Net_Worth", "order": "asc"}]


def test_numbers_after_a_numeric_field_are_equalities() -> None:
    out = parse("people in grade 10", people(), now=NOW)
    assert out["wheres"] == [{"field": "Grade", "op": "=", "value": 10}]
    out = parse("people whose age is either 30 or 31", people(), now=NOW)
    assert out["wheres"] == [{"field": "Age", "op": "in", "value": [30, 31]}]
    out = parse("people with an age over 30", people(), now=NOW)
    assert out["wheres"] == [{"field": "Age", "op": ">", "value": 30}]


def players() -> list[ModelSchema]:
    def f(name: str, kind: str = "string", **kw: object) -> FieldSchema:
        return FieldSchema.model_validate({"name": name, "kind": kind, **kw})
    from agent_search.query.dsl import RelationSchema
    return [
        ModelSchema(id="people", table="people", primary_key="People_ID", title_field="Name",
                    fields=[f("People_ID", "integer", primary=True), f("Name"),
                            f("Birth_Date"), f("Height", "number")],
                    relations=[RelationSchema(name="players", type="hasMany",
                                              model="player", key="People_ID",
                                              foreign="People_ID")]),
        ModelSchema(id="player", table="player", primary_key="Player_ID",
                    fields=[f("Player_ID", "integer", primary=True),
                            f("People_ID", "integer"), f("Earnings", "number")],
                    relations=[RelationSchema(name="people", type="hasOne", model="people",
                                              key="People_ID", foreign="People_ID")])]


def test_a_field_of_the_model_pointed_at_asks_for_its_records() -> None:
    out = parse("the names of players with earnings over 300000", players(), now=NOW)
    assert out["model"] == "people" and out["wheres"] == [
        {"field": "players.Earnings", "op": ">", "value": 300000}]
    out = parse("the names of all players", players(), now=NOW)
    assert out["model"] == "people" and out["wheres"] == [
        {"field": "count(players)", "op": ">", "value": 0}]
    # an order on the subject's own field goes through the relation back: the people
    # who are players, by their players' earnings
    out = parse("the birth date of the player with the lowest earnings", players(), now=NOW)
    assert out["model"] == "people" and out["limit"] == 1
    assert out["orders"] == [{"field": "players.Earnings", "order": "asc"}]
    assert out["wheres"] == [{"field": "count(players)", "op": ">", "value": 0}]
    validate_dsl(out, players())


def test_a_superlative_measured_on_the_model_pointed_at() -> None:
    """"the tallest player": the player has no height, the person it points at has."""
    for text in ("the earnings of the tallest player",
                 "the earnings of the player with the greatest height"):
        out = parse(text, players(), now=NOW)
        assert out["model"] == "player", text
        assert out["orders"] == [{"field": "people.Height", "order": "desc"}], text
        assert out["limit"] == 1
        validate_dsl(out, players())


def test_a_comparative_compares_the_field_it_measures() -> None:
    out = parse("people older than 30", people(), now=NOW)
    assert out["wheres"] == [{"field": "Age", "op": ">", "value": 30}]
    out = parse("the earnings of players taller than 200", players(), now=NOW)
    assert {"field": "people.Height", "op": ">", "value": 200} in out["wheres"]
    out = parse("the average earnings of players who are taller than 200", players(),
                now=NOW)
    assert out["wheres"] == [{"field": "people.Height", "op": ">", "value": 200}]
    assert out["aggregates"] == ["avg(Earnings)"]


def test_a_field_of_the_rows_the_target_has_many_of_asks_for_those_rows() -> None:
    """"the composers on the album Big Ones": the album's tracks hold the composers."""
    from tests.support.query_schemas import music
    out = parse("the composers on the album Big Ones", music(), now=NOW)
    assert out["model"] == "Track"
    assert out["wheres"] == [{"field": "album.Title", "op": "=", "value": "Big Ones"}]
    validate_dsl(out, music())
    # with nothing said of the album, the albums would not hold the composers: nothing
    out = parse("the composers of albums", music(), now=NOW)
    assert out.get("queries") == [], out
    assert any("Track.Composer" in w for w in out["warnings"])
