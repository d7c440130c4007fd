"""Derived forms of values (:mod:`agent_search.query.nl._reading._demonyms`)."""

from __future__ import annotations

from agent_search.query.dsl import FieldSchema, ModelSchema
from agent_search.query.nl._parser import parse
from agent_search.query.nl._reading._demonyms import derived_values
from tests.support.query_schemas import NOW


def test_demonyms_and_derived_forms() -> None:
    assert "france" in derived_values("French")
    assert "asia" in derived_values("Asian")
    assert "europe" in derived_values("European")
    assert derived_values("cat") == ()


def singers() -> list[ModelSchema]:
    return [ModelSchema(id="singer", table="singer", primary_key="id", title_field="name",
                        fields=[FieldSchema(name="id", kind="integer", primary=True),
                                FieldSchema(name="name"),
                                FieldSchema(name="citizenship",
                                            values=["France", "Germany", "United States"])])]


def test_a_demonym_matches_a_value_the_database_holds() -> None:
    out = parse("singers who are not French", singers(), now=NOW)
    assert out["wheres"] == [{"field": "citizenship", "op": "!=", "value": "France"}]
    out = parse("Martian singers", singers(), now=NOW)  # no such value: nothing invented
    assert all("Mar" not in str(w) for w in out["wheres"] if "op" in w and w["op"] == "=")
