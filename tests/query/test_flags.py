"""agent_search.query.nl._rules._flags: yes/no fields named as what they say."""

from __future__ import annotations

from agent_search.query.dsl import FieldSchema, ModelSchema, RelationSchema, validate_dsl
from agent_search.query.nl._parser import parse
from agent_search.query.nl._rules._flags import flag_values
from tests.support.query_schemas import NOW


def schemas() -> list[ModelSchema]:
    def f(name: str, kind: str = "string", **kw: object) -> FieldSchema:
        return FieldSchema.model_validate({"name": name, "kind": kind, **kw})
    return [
        ModelSchema(id="land", table="land", primary_key="code", title_field="name",
                    fields=[f("code", primary=True), f("name", values=["Aruba", "Peru"])],
                    relations=[RelationSchema(name="tongues", type="hasMany", model="tongue",
                                              key="land_code", foreign="code")]),
        ModelSchema(id="tongue", table="tongue", primary_key=None,
                    fields=[f("land_code"), f("tongue_name", values=["Dutch", "Quechua"]),
                            f("IsOfficial", values=["F", "T"]),
                            f("spoken_at_home", "boolean")],
                    relations=[RelationSchema(name="land", type="hasOne", model="land",
                                              key="code", foreign="land_code")])]


def test_flag_values() -> None:
    assert flag_values("string", ["F", "T"]) == ("T", "F")
    assert flag_values("string", ["no", "Yes"]) == ("Yes", "no")
    assert flag_values("boolean", []) == (True, False)
    assert flag_values("string", ["T", "F", "X"]) is None
    assert flag_values("string", ["T", "Y"]) is None


def test_a_flag_named_asks_for_the_rows_where_it_holds() -> None:
    out = parse("the official tongues", schemas(), now=NOW)
    assert out["model"] == "tongue"
    assert out["wheres"] == [{"field": "IsOfficial", "op": "=", "value": "T"}]
    out = parse("tongues that are not official", schemas(), now=NOW)
    assert out["wheres"] == [{"field": "IsOfficial", "op": "=", "value": "F"}]
    out = parse("tongues spoken at home", schemas(), now=NOW)
    assert out["wheres"] == [{"field": "spoken_at_home", "op": "=", "value": True}]


def test_how_many_of_the_rows_a_target_has_many_of_with_a_flag() -> None:
    out = parse("how many official tongues does Aruba have", schemas(), now=NOW)
    assert out["model"] == "tongue"
    assert {"field": "IsOfficial", "op": "=", "value": "T"} in out["wheres"]
    assert {"field": "land.name", "op": "=", "value": "Aruba"} in out["wheres"]
    validate_dsl(out, schemas())
