"""agent_search.query.nl._parser: choosing the model, the extractors' order, leftovers,
fallback; and the generator around it."""

from __future__ import annotations

import datetime as dt

import pytest

from agent_search.query.dsl import DSLGenerationError, validate_dsl
from agent_search.query.nl import BuiltinDSLGenerator
from agent_search.query.nl import _parser as parser
from agent_search.query.nl._parser import (
    EXTRACTORS,
    modifies_a_name,
    parse,
    understood_factor,
)
from tests.support.query_schemas import NOW, music, shop, staff


def test_extractors_run_in_a_fixed_order() -> None:
    names = [e.__name__ for e in EXTRACTORS]
    # periods before orders ("last year" is no "latest"), numbers before years, text
    # before values, the limit last
    assert names.index("relative_dates") < names.index("superlatives")
    assert names.index("comparisons") < names.index("dates")
    assert names.index("text_conditions") < names.index("values")
    assert names[-1] == "top_n"
    out = parse("invoices last year", music(), now=NOW)
    assert out["orders"] == [] and len(out["wheres"]) == 1


def test_the_model_named_first_is_the_one_asked_about() -> None:
    out = parse("albums with tracks by Queen", music(), now=NOW)
    assert out["model"] == "Album"


def test_without_a_model_named_the_one_the_query_says_most_about() -> None:
    out = parse("Jazz", music(), now=NOW)
    assert out["model"] == "Genre" and out["wheres"] == [
        {"field": "Name", "op": "=", "value": "Jazz"}]


def test_leftover_words_become_a_text_match_when_no_value_was_recognised() -> None:
    out = parse("wireless headphones under $100", shop(), now=NOW)
    assert out["terms"] == ["wireless", "headphone"]
    assert {"field": "price", "op": "<", "value": 100} in out["wheres"]
    assert out["confidence"] == 0.5
    assert any("matched as text" in w for w in out["warnings"])
    # beside a condition understood, words found in no row are dropped (with a warning)
    # rather than narrowing the answer to nothing; a word written as a name is not
    assert out["relax"] is True
    # dropped, the words count as not understood: the confidence left is understood²
    assert 0.0 < out["relax_confidence"] < out["confidence"] * 2 <= 1.0
    assert "relax" not in parse("headphones by Zorro under $100", shop(), now=NOW)


def test_leftover_words_beside_a_value_are_ignored_with_a_warning() -> None:
    out = parse("Jazz tracks by zorro", music(), now=NOW)
    assert out["wheres"] == [{"field": "genre.Name", "op": "=", "value": "Jazz"}]
    assert "not understood, ignored: 'zorro'" in out["warnings"]
    assert out["confidence"] == pytest.approx(understood_factor(1, 3), abs=1e-4)  # of 3 words


@pytest.mark.parametrize("text", ["Jazz tracks by Zorro", "which Jazz tracks does Marrotte like",
                                  "Jazz tracks for KIRK"])
def test_a_stated_name_left_out_of_the_reading_answers_nothing(text: str) -> None:
    """A name (capitalised mid-sentence, or a number) the reading ignores: the rows would
    meet the other conditions and not this one, so nothing is searched."""
    out = parse(text, music(), now=NOW)
    assert out["queries"] == [] and out["confidence"] == parser.NOTHING_CONFIDENCE
    assert any("found no place for it" in w for w in out["warnings"])


def test_a_capitalised_first_word_is_no_stated_name() -> None:
    out = parse("Jazz tracks. Show them", music(), now=NOW)
    assert out["wheres"] == [{"field": "genre.Name", "op": "=", "value": "Jazz"}]


def test_a_word_modifying_the_models_name_may_be_relaxed() -> None:
    out = parse("music genres", music(), now=NOW)
    assert out["model"] == "Genre" and out["relax"] is True
    assert modifies_a_name("music genres", ["music"], [(6, 12)])
    assert not modifies_a_name("music of genres", ["music"], [(9, 15)])


def test_nothing_understood_falls_back_to_every_model_or_to_nothing() -> None:
    out = parse("zzyzx", music(), now=NOW)
    assert out["fallback"] is True and {q["model"] for q in out["queries"]} == {
        "Artist", "Album", "Genre", "Track"}
    validate_dsl(out, music())
    out = parse("the", music(), now=NOW)
    assert out["queries"] == [] and out["confidence"] == parser.NOTHING_CONFIDENCE
    with pytest.raises(DSLGenerationError, match=r"query\.strict"):
        parse("zzyzx", music(), now=NOW, strict=True)


def test_an_aggregate_is_computed_or_warned_and_a_count_explained() -> None:
    out = parse("average unit price of tracks", music(), now=NOW)
    assert out["aggregates"] == ["avg(UnitPrice)"] and out["group_by"] == []
    validate_dsl(out, music())
    out = parse("average of tracks", music(), now=NOW)
    assert any("'average' is not computed" in w for w in out["warnings"])
    out = parse("how many tracks", music(), now=NOW)
    assert "Result.total" in out["explanation"]


def test_no_queryable_model_is_an_error() -> None:
    schemas = [s.model_copy(update={"queryable": False}) for s in music()]
    with pytest.raises(DSLGenerationError, match="no model to query"):
        parse("tracks", schemas, now=NOW)


@pytest.mark.anyio
async def test_the_generator_bounds_its_work() -> None:
    gen = BuiltinDSLGenerator(now=lambda: dt.datetime(2025, 1, 1))
    long = "Jazz tracks " + "and more words " * 60
    out = await gen.generate(long, music())  # over 200 characters: in a worker thread
    assert out["wheres"][0] == {"field": "genre.Name", "op": "=", "value": "Jazz"}
    assert out["warnings"][-1] == "only the first 500 characters of the query were analysed"
    validate_dsl(out, music())


def test_a_share_understood_leaves_its_square_as_confidence() -> None:
    assert understood_factor(0, 4) == 1.0
    assert understood_factor(2, 4) == pytest.approx(0.25)
    assert understood_factor(1, 3) == pytest.approx(4 / 9)
    assert understood_factor(5, 4) == 0.0 and understood_factor(0, 0) == 1.0


def test_a_number_nothing_understood_answers_nothing() -> None:
    """A number is a condition said; one no rule read would be lost from the answer
    (right or silent): nothing is shown and the warning names it."""
    out = parse("Jazz tracks 4711", music(), now=NOW)
    assert out["queries"] == []
    assert "the number '4711' was not understood" in out["warnings"][-1]
    # a number read (a limit, a comparison) is no such loss
    assert parse("the 3 longest Jazz tracks", music(), now=NOW)["limit"] == 3
    assert {"field": "Bytes", "op": ">", "value": 4711} in parse(
        "Jazz tracks over 4711 bytes", music(), now=NOW)["wheres"]


@pytest.mark.parametrize(("text", "field"), [
    ("staff hired after 2003", "HireDate"),
    ("staff born before 1960", "BirthDate"),
])
def test_a_date_field_is_named_by_its_event_as_a_verb(text: str, field: str) -> None:
    out = parse(text, staff(), now=NOW)
    assert out["model"] == "Staff" and [w["field"] for w in out["wheres"]] == [field]
    assert out["confidence"] == 1.0 and out["warnings"] == []


def test_leftover_words_beside_a_value_say_what_is_sought_when_no_model_is_named() -> None:
    # "laptops by Apex": no model named, the leftover word may be the kind of thing sought
    out = parse("Jazz saxophone", music(), now=NOW)
    assert out["wheres"] == [{"field": "Name", "op": "=", "value": "Jazz"},
                             {"field": "Name", "op": "like", "value": "%saxophone%"}]
    assert out["relax"] is True and out["confidence"] == 0.5  # dropped again if no row has it
    assert "not understood as a condition, matched as text: 'saxophone'" in out["warnings"]
    # a model named: the leftover is ignored (and warned about), not matched
    out = parse("Jazz tracks by zorro", music(), now=NOW)
    assert "relax" not in out and len(out["wheres"]) == 1


def test_a_superlative_with_nothing_to_order_by_shows_no_records() -> None:
    out = parse("the staff with the greatest patience", staff(), now=NOW)
    assert out["queries"] == [] and out["confidence"] == parser.NOTHING_CONFIDENCE
    assert any("'greatest' is measured by" in w for w in out["warnings"])
    ordered = parse("the staff with the greatest birth date", staff(), now=NOW)
    assert ordered["orders"] == [{"field": "BirthDate", "order": "desc"}]  # one it can


def test_a_verb_linking_to_something_understood_is_no_leftover() -> None:
    """"albums released by Queen": the verb links the albums to the value understood
    after it; "in the world" says all of them. A verb before words not understood stays
    a leftover ("artists who play the banjo")."""
    out = parse("albums released by Queen", music(), now=NOW)
    assert out["wheres"] == [{"field": "artist.Name", "op": "=", "value": "Queen"}]
    assert out["confidence"] == 1.0 and not out["warnings"]
    out = parse("how many artists are there in the world", music(), now=NOW)
    assert not any("world" in w for w in out["warnings"])
    out = parse("artists who play with the banjo", music(), now=NOW)
    assert any("banjo" in w for w in out["warnings"])
    assert any("play" in w for w in out["warnings"])


@pytest.mark.parametrize(("text", "word"), [("Jazz tracks with greater length", "greater"),
                                            ("invoices larger than the Queen ones", "larger"),
                                            ("tracks by Queen with five stars", "five")])
def test_a_comparison_or_number_left_unplaced_answers_nothing(text: str, word: str) -> None:
    """A word stating a comparison, an aggregate or a number that no extractor placed:
    the rows shown would not meet it."""
    out = parse(text, music(), now=NOW)
    assert out["queries"] == [] and out["confidence"] == parser.NOTHING_CONFIDENCE
    assert any(f"{word!r} states a comparison" in w for w in out["warnings"])


def test_one_as_a_pronoun_is_no_number() -> None:
    out = parse("the one artist called Queen", music(), now=NOW)
    assert out["model"] == "Artist" and out["wheres"]


def test_only_before_a_count_is_exactly() -> None:
    out = parse("artists with only one album", music(), now=NOW)
    assert out["wheres"] == [{"field": "count(albums)", "op": "=", "value": 1}]
