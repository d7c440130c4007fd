"""Right or silent (issue 35): a question part that found no place in the plan — a
superlative, a superlative of an aggregate, an aggregate word, a negation — makes the
parser answer nothing and say why, instead of rows that are not the ones asked for."""

from __future__ import annotations

import pytest

from agent_search.query.nl._parser import parse

from .schemas import NOW, music, shop


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
