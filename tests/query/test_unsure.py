"""Right or silent (issue 35): a question part that found no place in the plan — a
superlative, a superlative of an aggregate, an aggregate word, a negation — makes the
parser answer nothing and say why, instead of rows that are not the ones asked for."""

from __future__ import annotations

import pytest

from agent_search.query.nl._parser import parse
from tests.support.query_schemas import NOW, music, shop


def _silent(out: dict[str, object]) -> str:
    assert out.get("queries") == [] and "model" not in out, out
    warnings = out.get("warnings")
    assert isinstance(warnings, list) and warnings
    return str(warnings[-1])


@pytest.mark.parametrize(("question", "words"), [
    ("the category with the highest average price", "'highest average' ranks groups"),
    ("artists with no albums released in 1999", "a count of only some of the related rows"),
    ("tracks that are not longer than 5 minutes", "'not' was not understood"),
    ("artists who have not released any album", "'not' was not understood"),
    ("products except Sonora ones", "'except' was not understood"),
    ("tracks over 5", "would not meet 'over 5', which is about no field"),
    ("the artist Queen's albums", "\"Queen's albums\" asks for Album records"),
    ("How expensive is the average product for each category?",
     "'average' asks for avg(), which is not computed"),
])
def test_an_unplaced_part_makes_the_answer_silent(question: str, words: str) -> None:
    schemas = shop() if "product" in question or "category" in question else music()
    reason = _silent(parse(question, schemas, now=NOW))
    assert words in reason and "no " in reason


@pytest.mark.parametrize(("question", "want"), [
    ("tracks not in the Jazz genre", {"field": "genre.Name", "op": "!=", "value": "Jazz"}),
    ("products that are not in stock", {"field": "stock", "op": "<=", "value": 0}),
    ("products with price no more than 100", {"field": "price", "op": "<=", "value": 100}),
])
def test_a_negation_read_as_a_condition_is_answered(question: str,
                                                    want: dict[str, object]) -> None:
    schemas = shop() if "product" in question else music()
    out = parse(question, schemas, now=NOW)
    assert want in out["wheres"], out


def test_a_possessive_whose_model_is_answered_is_answered() -> None:
    out = parse("Queen's tracks", music(), now=NOW)
    assert out["model"] == "Track", out


def test_superlatives_with_a_place_are_answered() -> None:
    out = parse("products with the highest price", shop(), now=NOW)
    assert out["orders"] == [{"field": "price", "order": "desc"}]
    out = parse("what is the average price of products", shop(), now=NOW)
    assert out["aggregates"] == ["avg(price)"]
    out = parse("products with a price of at most 100", shop(), now=NOW)
    assert "queries" not in out and out["wheres"], out  # "at most" is no superlative


@pytest.mark.parametrize(("question", "words"), [
    # a value of the rows the target has many of under a negated verb: none of them has
    # it, which a condition through the relation (met by any one row) does not say
    ("artists that do not make Big Ones", "'none of them' can't be said"),
    ("artists who don't have Greatest Hits", "'none of them' can't be said"),
    # "both" of a field one row holds once
    ("genres that are both Jazz and Rock", "so 'both' is not said of these rows"),
    # "both … and …" with fewer than two conditions understood
    ("artists who both sing and dance", "'both … and …' asks for two conditions"),
])
def test_none_of_and_both_that_the_dsl_cannot_say_are_silent(question: str,
                                                             words: str) -> None:
    reason = _silent(parse(question, music(), now=NOW))
    assert words in reason, reason


@pytest.mark.parametrize(("question", "wheres"), [
    # "other than": some related row has another value — what != through it says
    ("artists with albums other than Big Ones",
     [{"field": "albums.Title", "op": "!=", "value": "Big Ones"}]),
    # "both" over the rows the target has many of: each value required
    ("artists with both Big Ones and Greatest Hits",
     [{"field": "albums.Title", "op": "=", "value": "Big Ones"},
      {"field": "albums.Title", "op": "=", "value": "Greatest Hits"}]),
])
def test_values_of_many_rows_that_the_dsl_can_say_are_said(question: str,
                                                           wheres: list[object]) -> None:
    out = parse(question, music(), now=NOW)
    assert out.get("model") == "Artist" and out["wheres"] == wheres, out


def test_conditions_on_two_fields_of_many_rows_are_not_said_of_one_row() -> None:
    """Each condition through a hasMany relation is met by any one related row; on two
    fields ("English and French as official languages": Language and IsOfficial) they
    would not be met by the same row, as asked: silent. Values of one field ("both Big
    Ones and Greatest Hits") are each required of some row: said."""
    from agent_search.query.nl._answer._unsure import one_row_not_said
    from tests.support.query_schemas import fresh_plan, read
    q = read("genres with long cheap tracks", "Genre")
    plan = fresh_plan(q)
    plan.wheres = [{"field": "tracks.Milliseconds", "op": ">", "value": 300000},
                   {"field": "tracks.UnitPrice", "op": "<", "value": 1}]
    reason = one_row_not_said(q, plan, False)
    assert reason is not None and "not by the same one" in reason
    plan.wheres = [{"field": "tracks.Name", "op": "=", "value": "A"},
                   {"field": "tracks.Name", "op": "=", "value": "B"}]
    assert one_row_not_said(q, plan, False) is None
