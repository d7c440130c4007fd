"""The parser's aggregate rules (:mod:`agent_search.query.nl._rules._aggregates`): what is computed,
per what, and the answers the DSL validator accepts or refuses."""

from __future__ import annotations

import pytest

from agent_search.query.dsl import DSLValidationError, validate_dsl
from agent_search.query.nl._parser import parse
from tests.support.query_schemas import NOW, music, shop


def test_functions_on_a_named_numeric_field() -> None:
    out = parse("the average, minimum and maximum price of audio products", shop(), now=NOW)
    assert out["aggregates"] == ["avg(price)", "min(price)", "max(price)"]
    assert out["wheres"] == [{"field": "category", "op": "=", "value": "audio"}]
    validate_dsl(out, shop())


def test_a_superlative_alone_orders_records() -> None:
    out = parse("the product with the highest price", shop(), now=NOW)
    assert "aggregates" not in out and out["orders"] == [{"field": "price", "order": "desc"}]


def test_each_groups_by_a_field_or_a_related_model() -> None:
    out = parse("how many products in each category", shop(), now=NOW)
    assert out["group_by"] == ["category"] and out["aggregates"] == ["count"]
    # a related model: by its key (two genres of one name stay two), shown by its title
    out = parse("the number of tracks for each genre", music(), now=NOW)
    assert out["model"] == "Track" and out["group_by"] == ["GenreId", "genre.Name"]
    validate_dsl(out, music())
    out = parse("the total unit price of tracks per genre", music(), now=NOW)
    assert out["group_by"] == ["GenreId", "genre.Name"]
    assert out["aggregates"] == ["sum(UnitPrice)"]


def test_most_common_and_count_conditions_on_groups() -> None:
    out = parse("the most common category of products", shop(), now=NOW)
    assert out["group_by"] == ["category"] and out["limit"] == 1
    assert out["orders"] == [{"field": "count", "order": "desc"}]
    out = parse("categories with at least two products", shop(), now=NOW)
    assert out["having"] == [{"aggregate": "count", "op": ">=", "value": 2}]
    assert out["group_by"] == ["category"]
    validate_dsl(out, shop())


@pytest.mark.parametrize(("text", "op", "n"), [
    ("categories with 3 or more products", ">=", 3),
    ("the categories for which there are two or more products", ">=", 2),
    ("categories that have 4 or fewer products", "<=", 4),
])
def test_n_or_more_is_a_count_condition_on_groups(text: str, op: str, n: int) -> None:
    out = parse(text, shop(), now=NOW)
    assert out["group_by"] == ["category"], text
    assert out["having"] == [{"aggregate": "count", "op": op, "value": n}], text
    assert out["wheres"] == []  # the number is no condition on a field


def test_leftover_words_never_filter_an_aggregate() -> None:
    out = parse("the average price of shiny products", shop(), now=NOW)
    assert out["aggregates"] == ["avg(price)"] and out["wheres"] == []
    assert any("'shiny'" in w for w in out["warnings"])


@pytest.mark.parametrize(("dsl", "words"), [
    ({"aggregates": ["avg(name)"]}, "numeric"),
    ({"aggregates": ["count"], "group_by": ["nope"]}, "unknown group_by"),
    ({"aggregates": ["count"], "orders": [{"field": "price"}]}, "orders by one of"),
    ({"aggregates": [{"fn": "max"}]}, "needs a field"),
    ({"aggregates": ["count"] * 9}, "at most 8"),
])
def test_the_validator_refuses_a_bad_aggregate(dsl: dict[str, object], words: str) -> None:
    with pytest.raises(DSLValidationError, match=words):
        validate_dsl({"model": "product", **dsl}, shop())


def test_written_and_object_aggregates_are_one() -> None:
    out = validate_dsl({"model": "product", "aggregates": [
        "count(distinct category)", {"fn": "avg", "field": "PRICE"}],
        "orders": [{"field": "avg(price)", "order": "desc"}]}, shop())
    q = out.queries[0]
    assert [a.name for a in q.aggregates] == ["count(distinct category)", "avg(price)"]
    assert q.orders[0].field == "avg(price)"


def test_rows_the_target_has_many_of_are_counted_per_target_row() -> None:
    out = parse("artists and the number of albums", music(), now=NOW)
    # per artist row (by its key: two artists of one name are two rows), with its name
    assert out["model"] == "Album" and out["group_by"] == ["ArtistId", "artist.Name"]
    assert out["aggregates"] == ["count"]
    out = parse("the artist with the most albums", music(), now=NOW)
    assert out["orders"] == [{"field": "count", "order": "desc"}] and out["limit"] == 1
    validate_dsl(out, music())


def test_a_part_of_a_composite_key_is_an_attribute() -> None:
    from agent_search.query.dsl import FieldSchema, ModelSchema
    link = ModelSchema(id="spoken", table="spoken", primary_key=None, fields=[
        FieldSchema(name="CountryCode", primary=True),
        FieldSchema(name="Language", primary=True, values=["English", "Dutch"]),
        FieldSchema(name="Percentage", kind="number")])
    out = parse("how many different languages", [link], now=NOW)
    assert out["aggregates"] == ["count(distinct Language)"]
    out = parse("spoken rows in English", [link], now=NOW)
    assert out["wheres"] == [{"field": "Language", "op": "=", "value": "English"}]


@pytest.mark.parametrize("text", [
    "the category that is most common among products",
    "the most common product category",
    "which category is the most frequent",
])
def test_most_common_said_around_the_field(text: str) -> None:
    out = parse(text, shop(), now=NOW)
    assert out["group_by"] == ["category"], text
    assert out["orders"] == [{"field": "count", "order": "desc"}] and out["limit"] == 1


def test_a_comparison_on_an_aggregate_of_groups_is_a_having() -> None:
    out = parse("the total stock for each category whose average price is over 50", shop(),
                now=NOW)
    assert out["group_by"] == ["category"] and "avg(price)" in out["aggregates"]
    assert out["having"] == [{"aggregate": "avg(price)", "op": ">", "value": 50}]
    assert out["wheres"] == []
    validate_dsl(out, shop())
    # said of the rows, the same comparison filters them before grouping
    out = parse("the average price for each category of products with price over 50",
                shop(), now=NOW)
    assert out["wheres"] == [{"field": "price", "op": ">", "value": 50}]
    assert "having" not in out


def test_each_of_the_listed_groups() -> None:
    out = parse("the number of products in each of the listed categories", shop(), now=NOW)
    assert out["group_by"] == ["category"] and out["aggregates"] == ["count"]


@pytest.mark.parametrize("text", [
    "albums and the total milliseconds of their tracks",
    "for each album title, the total milliseconds of its tracks",
])
def test_a_function_of_the_rows_the_target_has_many_of(text: str) -> None:
    out = parse(text, music(), now=NOW)
    assert out["model"] == "Track", text
    assert out["group_by"] == ["AlbumId", "album.Title"], text
    assert out["aggregates"] == ["sum(Milliseconds)"], text
    validate_dsl(out, music())


def test_the_most_of_the_rows_per_group() -> None:
    out = parse("which category has the most of the products", shop(), now=NOW)
    assert out["group_by"] == ["category"] and out["limit"] == 1
    assert out["orders"] == [{"field": "count", "order": "desc"}]


def test_how_many_of_a_field_of_the_rows_the_target_has_many_of() -> None:
    """"how many composers are on the album Big Ones": the album's tracks are counted
    (their composers), under the condition said of the album."""
    out = parse("how many composers are on the album Big Ones", music(), now=NOW)
    assert out["model"] == "Track"
    assert out["wheres"] == [{"field": "album.Title", "op": "=", "value": "Big Ones"}]
    out = parse("how many different composers are on the album Big Ones", music(), now=NOW)
    assert out["model"] == "Track" and out["aggregates"] == ["count(distinct Composer)"]
    validate_dsl(out, music())


def test_each_names_a_key_or_the_relation_of_a_link() -> None:
    """Rows of a table pointing at two models, grouped "for each <relation name>" (by its
    key, shown with the title) or "for each <key named in full>"."""
    for text in ("how many tracks does each album have",
                 "count the number of tracks for each album id"):
        out = parse(text, music(), now=NOW)
        assert out["model"] == "Track", text
        assert out["group_by"][0] == "AlbumId" and out["aggregates"] == ["count"], text
        validate_dsl(out, music())


def test_distinct_counts_of_several_fields() -> None:
    out = parse("the number of different names and composers in the track table", music(),
                now=NOW)
    assert out["model"] == "Track"
    assert out["aggregates"] == ["count(distinct Name)", "count(distinct Composer)"]
    assert not out["warnings"]  # "table" after a model's name is understood


def test_each_alone_stands_for_the_field_named_before_it() -> None:
    out = parse("the different categories and the total stock of each", shop(), now=NOW)
    assert out["group_by"] == ["category"] and out["aggregates"] == ["sum(stock)"]
    out = parse("albums and the numbers of tracks for each", music(), now=NOW)
    assert out["model"] == "Track" and out["aggregates"] == ["count"]


def test_a_field_of_the_rows_the_target_has_many_of_grouped_by_the_most_targets() -> None:
    """"the composer on the most albums": an album's tracks grouped by composer, each
    track one album row, the largest group first."""
    out = parse("the composer found on the most albums", music(), now=NOW)
    assert out["model"] == "Track" and out["group_by"] == ["Composer"]
    assert out["aggregates"] == ["count(distinct AlbumId)"]
    assert out["orders"] == [{"field": "count(distinct AlbumId)", "order": "desc"}]
    assert out["limit"] == 1
    validate_dsl(out, music())


def test_the_most_values_of_the_rows_the_target_has_many_of() -> None:
    """"the album with the most composers": distinct composers of its tracks, per album."""
    out = parse("the album with the most composers", music(), now=NOW)
    assert out["model"] == "Track" and out["group_by"] == ["AlbumId", "album.Title"]
    assert out["aggregates"] == ["count(distinct Composer)"]
    assert out["orders"] == [{"field": "count(distinct Composer)", "order": "desc"}]
    validate_dsl(out, music())


def test_the_number_of_a_numeric_field_is_no_count_of_its_values() -> None:
    """"how many prices": an amount, not how many different amounts (unless said)."""
    assert parse("how many different prices are there", shop(), now=NOW)["aggregates"] == [
        "count(distinct price)"]
    assert "count(distinct price)" not in str(
        parse("how many prices are there", shop(), now=NOW))


def test_numbers_computed_beside_a_numeric_field_asked_and_unused_answer_nothing() -> None:
    """"the total number of stock for each category" counted per category is not it."""
    out = parse("the total number of stock for each category", shop(), now=NOW)
    assert out.get("queries") == [], out
    assert "'stock' names the field stock, and the numbers computed are not of it" in \
        out["warnings"][-1]
    assert parse("the total stock for each category", shop(), now=NOW)["aggregates"] == [
        "sum(stock)"]
