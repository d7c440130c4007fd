"""Contradictions and paraphrases in natural wording: negations without "not", numbers
that count other things, a reference's negation reworded, numbers that anchor a
rewording. Sentences written for these tests (not from the bench's set)."""

from __future__ import annotations

import pytest

from agent_search.grounding._quantities import counts, miscounted
from tests.support.grounding import verdict

LAKE = "The lake froze over in early January and the ice stayed for nine weeks."


@pytest.mark.parametrize("answer", [
    "Hardly any of the lake froze over in early January #ref:1.",
    "Few parts of the lake froze over in early January #ref:1.",
    "The lake no longer froze over in early January #ref:1.",
])
def test_negative_adverbs_quantifiers_and_no_longer_negate(answer: str) -> None:
    assert verdict(answer, LAKE) == "unsupported"


def test_a_few_is_no_negation() -> None:
    assert verdict("The lake froze over in early January, a few days after "
                   "the cold began #ref:1.",
                   "The lake froze over in early January, a few days after the cold "
                   "began.") == "supported"


@pytest.mark.parametrize(("answer", "reference"), [
    ("The old pier was judged unsafe by the engineers #ref:1.",
     "The old pier was judged safe by the engineers."),
    ("The compound is an antagonist of the dopamine receptor #ref:1.",
     "The compound is an agonist of the dopamine receptor."),
])
def test_a_negating_prefix_on_a_short_or_anti_word_contradicts(answer: str, reference: str
                                                               ) -> None:
    assert verdict(answer, reference) == "unsupported"


def test_a_number_that_counts_another_thing_is_flagged() -> None:
    assert verdict("The ice on the lake stayed for nine months #ref:1.", LAKE) \
        == "unsupported"
    assert verdict("The ice on the lake stayed for nine weeks #ref:1.", LAKE) == "supported"


def test_a_percent_the_reference_gives_to_another_figure_is_flagged() -> None:
    ref = "Members older than 40 used the gym 25% less often."
    assert miscounted("Members used the gym 40% less often.", ref) is not None
    assert miscounted("Members older than 40 used the gym a quarter less often.", ref) is None


def test_counts_pair_each_number_with_what_follows_it() -> None:
    assert counts("9 weeks, 12% of 300 patients, six months") == {
        9.0: {"weeks"}, 12.0: {"%"}, 300.0: {"patie"}, 6.0: {"month"}}


def test_a_rewording_of_a_references_negation_is_not_its_opposite() -> None:
    """The reference negates "exist"; the sentence never states "exist"."""
    reference = "The reservoir did not exist before 1962, when the dam was finished."
    assert verdict("The reservoir is younger than the dam finished in 1962 #ref:1.",
                   reference) == "supported"
    assert verdict("The reservoir existed before 1962 #ref:1.", reference) == "unsupported"


def test_numbers_anchor_a_rewording_with_few_shared_words() -> None:
    reference = "Ridership on the line rose to 48,000 a day in 2023, up from 31,000 in 2019."
    answer = "About 48,000 people a day rode it in 2023, compared with 31,000 in 2019 #ref:1."
    assert verdict(answer, reference) == "supported"
    assert verdict("About 48,000 people a day rode it in 2023, compared with 13,000 "
                   "in 2019 #ref:1.", reference) == "unsupported"


@pytest.mark.parametrize(("answer", "reference"), [
    ("The coastline has eroded and the beach narrowed since 2010 #ref:1.",
     "The coastline has eroded and the beach widened since 2010."),
    ("The old wall was found to be weaker than the new one #ref:1.",
     "The old wall was found to be stronger than the new one."),
    ("The drug thinned the mucus lining of the gut in rats #ref:1.",
     "The drug thickened the mucus lining of the gut in rats."),
])
def test_a_wordnet_antonym_about_the_same_words_contradicts(answer: str, reference: str
                                                           ) -> None:
    assert verdict(answer, reference) == "unsupported"
    assert verdict(answer, answer.replace(" #ref:1", "")) == "supported"


def test_lemmas_follow_wordnet_morphology() -> None:
    from agent_search.grounding._antonyms import antonyms, lemmas

    assert "thin" in lemmas("thinned") and "weak" in lemmas("weaker")
    assert "fall" in lemmas("fell") and "thick" in antonyms(lemmas("thinner"))
    assert lemmas("table") == frozenset()


def test_an_antonym_the_reference_also_states_is_no_contradiction() -> None:
    reference = "Warm and cool summers alternated along the coast over the decade."
    assert verdict("Cool and warm summers alternated along the coast #ref:1.",
                   reference) == "supported"
