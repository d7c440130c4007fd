"""agent_search.query.nl._reading._schema: candidate fields, model and field mentions, which field a
number or date is about."""

from __future__ import annotations

import pytest

from agent_search.query.dsl import (
    DSLValidationError,
    FieldSchema,
    ModelSchema,
    RelationSchema,
    validate_dsl,
)
from agent_search.query.nl._parser import parse
from agent_search.query.nl._reading._schema import (
    candidates,
    content_field,
    dimension,
    field_for,
    free_text_fields,
    is_link_table,
    is_plain,
    model_mentions,
    model_phrases,
    relation_field,
    text_field_named,
)
from tests.support.query_schemas import NOW, f, model, music, read, shop


def test_candidates_reach_two_hops_through_has_one_only_for_known_values() -> None:
    schemas = music()
    by_id = {s.id.lower(): s for s in schemas}
    paths = [c.path for c in candidates(model(schemas, "Track"), by_id)]
    assert paths[:8] == ["TrackId", "Name", "AlbumId", "GenreId", "Composer", "Milliseconds",
                         "Bytes", "UnitPrice"]
    assert {"album.Title", "genre.Name", "album.artist.Name"} <= set(paths)
    assert "album.artist.ArtistId" not in paths  # two hops: fields with values only
    assert not any(p.startswith("album.tracks.") for p in paths)  # hasMany: one hop only


def test_a_relation_field_is_what_the_dsl_reads_as_a_field_of_the_related_model() -> None:
    title = relation_field("album", "Title")
    artist = relation_field("album", relation_field("artist", "Name"))
    assert (title, artist) == ("album.Title", "album.artist.Name")
    out = validate_dsl({"model": "Track", "group_by": [title], "aggregates": ["count"],
                        "wheres": [{"field": artist, "op": "=", "value": "Queen"}]}, music())
    assert out.queries[0].group_by == ["album.Title"]
    validate_dsl({"model": "Track", "orders": [{"field": title, "order": "asc"}]}, music())
    with pytest.raises(DSLValidationError, match=r"relation\.field"):  # orders: one hop only
        validate_dsl({"model": "Track", "orders": [{"field": artist, "order": "asc"}]},
                     music())


def test_a_longer_model_name_wins_over_the_shorter_inside_it() -> None:
    schemas = [*music(), model(music(), "Invoice").model_copy(
        update={"id": "InvoiceLine", "table": "InvoiceLine"})]
    found = model_mentions("invoice lines of jazz tracks", schemas)
    assert found == {"InvoiceLine": [(0, 13)], "Track": [(22, 28)]}
    assert {"invoice lines", "invoice line", "invoiceline"} <= model_phrases(schemas[-1])


def test_a_model_of_several_words_is_named_by_its_last_word_when_only_it_ends_so() -> None:
    def table(name: str, *fields: str) -> ModelSchema:
        return ModelSchema(id=name, table=name, primary_key="id",
                           fields=[f("id", "integer", primary=True), *map(f, fields)])

    schemas = [table("card_player", "name"), table("area_state", "code"),
               table("vote", "state"), table("home_team", "city"), table("away_team", "city")]
    assert model_mentions("players with the greatest earnings", schemas) == {
        "card_player": [(0, 7)]}
    assert model_mentions("states of the votes", schemas) == {"vote": [(14, 19)]}  # a field
    assert model_mentions("teams in paris", schemas) == {}  # two tables end in "team"
    assert model_mentions("card players and their player", schemas) == {
        "card_player": [(0, 12)]}  # named in full: the head word alone adds nothing


def test_a_model_of_three_words_is_named_by_its_last_two() -> None:
    def table(name: str, *fields: str) -> ModelSchema:
        return ModelSchema(id=name, table=name, primary_key="id",
                           fields=[f("id", "integer", primary=True), *map(f, fields)])

    schemas = [table("other_available_features", "name"),
               table("other_property_features", "detail"), table("sold_home_prices", "home")]
    assert model_mentions("how many available features are there", schemas) == {
        "other_available_features": [(9, 27)]}
    assert model_mentions("features", schemas) == {}  # two tables end in "features"
    assert list(model_mentions("home prices", schemas)) == ["sold_home_prices"]


def test_field_mentions_are_strong_for_the_full_name_weak_for_its_last_word() -> None:
    q = read("tracks with a unit price over 1 and a low price", "Track")
    found = {(q.quote(m.span), m.candidate.path, m.strong) for m in q.fields}
    assert ("unit price", "UnitPrice", True) in found
    assert ("price", "UnitPrice", False) in found


def test_a_field_is_named_by_who_does_it_and_by_the_event_of_its_date() -> None:
    from agent_search.query.dsl import FieldSchema, ModelSchema
    show = ModelSchema(id="show", table="show", primary_key="id", fields=[
        FieldSchema(name="id", kind="integer", primary=True),
        FieldSchema(name="Directed_by"), FieldSchema(name="produced_by"),
        FieldSchema(name="Original_Air_Date", kind="date")])
    q = read("shows by each director and producer that aired first, by air date", "show",
             [show])
    found = {(q.quote(m.span), m.candidate.path, m.strong) for m in q.fields}
    assert {("director", "Directed_by", True), ("producer", "produced_by", True),
            ("aired", "Original_Air_Date", True),
            ("air date", "Original_Air_Date", False)} <= found


def test_keys_are_not_plain_and_dimensions_come_from_unit_or_name() -> None:
    q = read("tracks", "Track")
    by_path = {c.path: c for c in q.candidates}
    assert not is_plain(by_path["TrackId"]) and not is_plain(by_path["AlbumId"])
    assert is_plain(by_path["UnitPrice"])
    assert dimension(by_path["Milliseconds"].field) == "duration"
    assert dimension(by_path["UnitPrice"].field) == "money"
    assert dimension(by_path["Bytes"].field) == "size"
    assert dimension(f("when", "datetime")) == "date"
    assert dimension(f("rating", "integer")) == "number"
    assert dimension(by_path["Name"].field) is None


def test_field_for_prefers_the_field_named_nearest() -> None:
    q = read("tracks with bytes over 5", "Track")
    assert (c := field_for(q.candidates, "number", q.fields, q.low.index("over"))) is not None
    assert c.path == "Bytes"
    plain = read("tracks over 5", "Track")  # several numbers, none named: no guess
    assert field_for(plain.candidates, "number", plain.fields, 7) is None
    money = field_for(plain.candidates, "money", plain.fields, 7)
    assert money is not None and money.path == "UnitPrice"


def test_text_fields() -> None:
    schemas = shop()
    product = model(schemas, "product")
    q = read("products", "product", schemas)
    named = text_field_named("titles", q.candidates, product)
    assert named is not None and named.path == "name"  # "title" means the title field
    assert content_field(product) == "description"
    assert free_text_fields(product) == ["name", "description", "category"]  # valued last


def _rail() -> list[ModelSchema]:
    """train ← train_station → station: a link table of a many-to-many relation."""
    return [
        ModelSchema(id="train", table="train", primary_key="Train_ID",
                    fields=[FieldSchema(name="Train_ID", kind="integer", primary=True),
                            FieldSchema(name="Name")]),
        ModelSchema(id="station", table="station", primary_key="Station_ID",
                    fields=[FieldSchema(name="Station_ID", kind="integer", primary=True),
                            FieldSchema(name="Location")]),
        ModelSchema(id="train_station", table="train_station",
                    fields=[FieldSchema(name="Train_ID", kind="integer"),
                            FieldSchema(name="Station_ID", kind="integer")],
                    relations=[RelationSchema(name="train", type="hasOne", model="train",
                                              key="Train_ID", foreign="Train_ID"),
                               RelationSchema(name="station", type="hasOne", model="station",
                                              key="Station_ID", foreign="Station_ID")]),
    ]


def test_a_link_table_named_as_a_compound_names_its_head_table() -> None:
    """"train stations" are stations: the link table's rows are pairs."""
    found = model_mentions("how many train stations are there", _rail())
    assert list(found) == ["station"]
    assert is_link_table(_rail()[2]) and not is_link_table(_rail()[1])
    assert list(model_mentions("how many trains are there", _rail())) == ["train"]


def test_a_count_column_is_said_as_the_number_of_what_it_counts() -> None:
    """``bedroom_count``, ``num_rooms``: "the average number of bedrooms"."""
    flats = [ModelSchema(id="flat", table="flat", primary_key="id",
                         fields=[FieldSchema(name="id", kind="integer", primary=True),
                                 FieldSchema(name="bedroom_count", kind="integer"),
                                 FieldSchema(name="num_rooms", kind="integer")])]
    out = parse("the average number of bedrooms of all flats", flats, now=NOW)
    assert out["aggregates"] == ["avg(bedroom_count)"]
    out = parse("flats with the largest number of rooms", flats, now=NOW)
    assert out["orders"] == [{"field": "num_rooms", "order": "desc"}]
    assert "aggregates" not in out  # "number of" names the field: no count of values


@pytest.mark.parametrize(("name", "head"), [
    ("useracct", "user"), ("deptmgr", "dept"),
    ("drivers", None), ("custinfo", None), ("employee", None), ("qualifying", None),
])
def test_a_word_and_an_abbreviation_written_together(name: str, head: str | None) -> None:
    from agent_search.query.nl._reading._schema import _abbreviated_tail
    assert _abbreviated_tail(name) == head


def test_a_model_named_by_the_word_before_its_abbreviated_tail() -> None:
    """"How many users are there?" of a table ``useracct`` (users' accounts)."""
    schemas = [ModelSchema(id="useracct", table="useracct", primary_key="u_id",
                           fields=[f("u_id", "integer", primary=True), f("name")]),
               ModelSchema(id="item", table="item", primary_key="i_id",
                           fields=[f("i_id", "integer", primary=True), f("title")])]
    assert model_mentions("how many users are there?", schemas) == {"useracct": [(9, 14)]}
