"""Column names written in abbreviations, said in full in the question: read from the
letters of the name and the question's words, not from a list of abbreviations."""

from __future__ import annotations

from agent_search.query.dsl import ModelSchema, validate_dsl
from agent_search.query.nl._lexicon import word_spans
from agent_search.query.nl._parser import parse
from agent_search.query.nl._reading._abbreviations import (
    abbreviated_spans,
    abbreviates,
    initials_spans,
)
from agent_search.query.nl._reading._schema import comment_name
from tests.support.query_schemas import NOW, f


def _bank() -> list[ModelSchema]:
    return [ModelSchema(id="customer", table="customer", primary_key="cust_id",
                        title_field="cust_name",
                        fields=[f("cust_id", "integer", primary=True), f("cust_name"),
                                f("acc_type", values=["saving", "checking"]),
                                f("acc_bal", "integer"), f("credit_score", "integer"),
                                f("state", values=["Utah", "Texas"])])]


def _spans(question: str, name: str) -> list[str]:
    low = question.lower()
    return [low[a:b] for a, b in abbreviated_spans(word_spans(low), name)]


def test_a_start_or_the_consonants_of_a_word_abbreviate_it() -> None:
    assert abbreviates("acc", "account")
    assert abbreviates("cust", "customer")
    assert abbreviates("dst", "destination")
    assert abbreviates("apt", "apartment")
    # a plural or a past tense is the word itself, not an abbreviation
    assert not abbreviates("type", "typed")
    # a longer start is a word of its own, and vowels after the first letter are not
    # an abbreviation's consonants
    assert not abbreviates("count", "country")
    assert not abbreviates("age", "agreement")
    assert not abbreviates("x", "xylophone")


def test_a_name_is_found_only_as_a_whole_with_a_word_written_out() -> None:
    assert _spans("What is the account balance of Mary?", "acc bal") == ["account balance"]
    assert _spans("the destination airport of a route", "dst ap") == ["destination airport"]
    assert _spans("apartment type codes", "apt type code") == ["apartment type codes"]
    assert _spans("the account of Mary", "acc bal") == []  # not the whole name
    assert _spans("the account balance", "acc") == []  # one word guesses too much
    assert _spans("the bedroom country", "bedroom count") == []
    assert _spans("bedroom count", "bedroom count") == []  # said as it is: found already


def test_an_abbreviated_field_said_in_full_is_compared_ordered_and_computed() -> None:
    out = parse("Which customers have an account balance above 1500?", _bank(), now=NOW)
    validate_dsl(out, _bank())
    assert out["wheres"] == [{"field": "acc_bal", "op": ">", "value": 1500}]
    out = parse("What is the name of the customer with the highest account balance?",
                _bank(), now=NOW)
    assert out["orders"] == [{"field": "acc_bal", "order": "desc"}]
    assert out["limit"] == 1
    out = parse("What is the average account balance of customers in Texas?", _bank(),
                now=NOW)
    assert out["aggregates"] == ["avg(acc_bal)"]
    assert out["wheres"] == [{"field": "state", "op": "=", "value": "Texas"}]


def _loans() -> list[ModelSchema]:
    """Names no letters expand ("bname", "amt" of one word), written out by the schema's
    own comments."""
    return [ModelSchema(id="loan", table="loan", primary_key="loan_id",
                        fields=[f("loan_id", "integer", primary=True),
                                f("bname", values=["morningside", "downtown"],
                                  description="Bank name"),
                                f("amt", "integer", description="Loan amount"),
                                f("note", description="Written by the clerk at signing.")])]


def test_a_comment_that_is_a_name_names_the_field() -> None:
    assert comment_name("Loan amount") == "loan amount"
    assert comment_name("Written by the clerk at signing.") is None  # a sentence
    assert comment_name("the amount of the loan in dollars") is None  # too long a name
    out = parse("Which loans have a loan amount above 1000?", _loans(), now=NOW)
    validate_dsl(out, _loans())
    assert out["wheres"] == [{"field": "amt", "op": ">", "value": 1000}]
    out = parse("What is the total loan amount of the bank named downtown?", _loans(),
                now=NOW)
    assert out["aggregates"] == ["sum(amt)"]
    assert out["wheres"] == [{"field": "bname", "op": "=", "value": "downtown"}]


def _initials(question: str, name: str) -> list[str]:
    low = question.lower()
    return [low[a:b] for a, b in initials_spans(word_spans(low), name)]


def test_a_name_of_initials_is_found_written_out() -> None:
    assert _initials("What is the date of birth of Lewis?", "dob") == ["date of birth"]
    assert _initials("cities by gross domestic product", "gdp") == ["gross domestic product"]
    assert _initials("the online mendelian inheritance in man value", "omim") == [
        "online mendelian inheritance in man"]
    assert _initials("the dob of Lewis", "dob") == []  # said as it is: found already
    assert _initials("the gross product", "gp") == []  # two letters match too much
    assert _initials("date of the birth", "dob") == []


def test_a_field_named_by_its_initials_is_computed() -> None:
    enzymes = [ModelSchema(id="enzyme", table="enzyme", primary_key="id", title_field="name",
                           fields=[f("id", "integer", primary=True), f("name"),
                                   f("OMIM", "integer"), f("Chromosome")])]
    out = parse("What is the maximum online Mendelian inheritance in man value of the "
                "enzymes?", enzymes, now=NOW)
    validate_dsl(out, enzymes)
    assert out["aggregates"] == ["max(OMIM)"]
