"""Claims: numbers in their written forms, names, and what counts as the same number."""

from __future__ import annotations

import pytest

from agent_search.grounding._claims import extract, number_found, reference_numbers


@pytest.mark.parametrize(("sentence", "reference", "found"), [
    ("Sales rose 50 percent.", "Sales rose by 50%.", True),
    ("It cost 2.5 million dollars.", "It cost $2,500,000.", True),
    ("Three trials were run.", "3 trials were run.", True),
    ("The effect was 0.30.", "The effect was 0.3.", True),
    ("About 30% responded.", "29.7% responded.", True),
    ("About 31% responded.", "29.7% responded.", False),
    ("It fell by 4.2%.", "It fell by -4.2%.", True),  # a sign is often dropped in words
    ("人口为2185万。", "人口为2185万。", True),
    ("人口为2185万。", "人口为21850000。", True),
    ("In 2017 it opened.", "In 2019 it opened.", False),
])
def test_numbers_match_across_written_forms(sentence: str, reference: str,
                                            found: bool) -> None:
    claims = extract(sentence)
    assert claims.numbers, sentence
    values = reference_numbers(reference)
    assert all(number_found(n, values) for n in claims.numbers) is found


def test_digits_inside_names_are_names_not_numbers() -> None:
    claims = extract("Patients with BRCA1 and IL-6 levels were studied.")
    assert claims.numbers == []
    assert {"BRCA1", "IL-6"} <= set(claims.entities)


def test_a_capital_at_the_start_of_a_sentence_or_clause_is_not_a_name() -> None:
    claims = extract("However, the trial at Mayo Clinic ended: Results were mixed.")
    assert claims.entities == ["Mayo", "Clinic"]


def test_one_is_not_a_claimed_number() -> None:
    assert extract("One of the trials ended early.").numbers == []
