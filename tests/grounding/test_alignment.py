"""A paraphrase judged by aligning its words to the reference's (WordNet's related words,
inflections, common words weighing less, Chinese words cut differently), and a
contradiction anchored on an aligned pair. Sentences written for these tests (not from
the bench's set)."""

from __future__ import annotations

from agent_search.grounding import ground
from agent_search.grounding._claims import extract
from agent_search.grounding._related import related_stems


def verdict(answer: str, *references: str) -> tuple[str, str]:
    grounded = ground(answer, [{"citation_id": str(i + 1), "title": "", "content": text}
                               for i, text in enumerate(references)])
    assert len(grounded) == 1
    return grounded[0].status, grounded[0].reason


def test_wordnet_relates_synonyms_inflections_and_derivations() -> None:
    stems, _ = related_stems("stays")        # inflected: the lemma "stay"
    assert {"stay", "remai"} <= stems
    assert "rainf" in related_stems("rain")[0]
    assert "appro" in related_stems("roughly")[0]      # approximately
    assert related_stems("zzzzqx") == (frozenset(), 1.0)


def test_a_common_word_weighs_less_than_a_rare_one() -> None:
    claims = extract("The hurricane brought flooding.")
    assert claims.weights["broug"] < 0.5 < claims.weights["hurri"]


def test_a_rewording_in_related_words_is_supported() -> None:
    status, _ = verdict("The ferry stays in operation while its engine is mended, officials "
                        "said #ref:1.",
                        "Officials said the ferry will remain in service during the repairs "
                        "to its engine.")
    assert status == "supported"


def test_related_words_do_not_hide_a_changed_number_or_a_negation() -> None:
    ref = "Officials said the ferry will remain in service during the repairs to its engine."
    assert verdict("The ferry stays in operation for 3 weeks while its engine is mended "
                   "#ref:1.", ref)[0] == "unsupported"
    assert verdict("Officials said the ferry will not remain in service during the repairs "
                   "to its engine #ref:1.", ref)[0] == "unsupported"


def test_chinese_words_cut_differently_still_align() -> None:
    status, _ = verdict("全省粮食产量保持稳定，增速超过全国平均#ref:1。",
                        "全省粮食总产量稳定增长，增速高于全国平均水平。")
    assert status == "supported"


HEART = ("Patients who walked daily saw their resting heart rate drop by 6 beats a minute "
         "within a month. The effect was larger in people with tachycardia.")


def test_a_direction_word_in_another_sense_beside_its_agreeing_counterpart_passes() -> None:
    """"lowered" is the counterpart of the reference's "drop"; "high" qualifies other
    people's heart rate and has no counterpart to contradict."""
    status, reason = verdict("Walking daily lowered resting heart rate by 6 beats a minute "
                             "within a month, more so in people with a high heart rate #ref:1.",
                             HEART)
    assert status == "supported", reason


def test_the_direction_word_of_the_aligned_pair_still_contradicts() -> None:
    status, reason = verdict("Walking daily raised resting heart rate by 6 beats a minute "
                             "within a month #ref:1.", HEART)
    assert status == "unsupported"
    assert "raised" in reason


def test_a_neighbour_holding_the_words_only_through_related_words_does_not_override() -> None:
    """The cited reference holds the sentence's own words and says the opposite; another
    reference that rewords the same scene is not its source."""
    status, reason = verdict(
        "The mountain road was closed during the cleanup of the flooded valley #ref:1.",
        "The mountain road was not closed during the cleanup of the flooded valley.",
        "The road up the mountain stayed shut while crews cleaned the valley after the flood.")
    assert status == "unsupported"
    assert "opposite" in reason
