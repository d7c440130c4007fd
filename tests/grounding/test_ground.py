"""Grounding of answers against references: what is supported, what is flagged and why."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_search.grounding import GroundedSentence, ground, summary

TRIAL = {"citation_id": "1", "title": "Aspirin and stroke",
         "content": "In 2019, a trial of 1,200 patients at the Mayo Clinic found that aspirin "
                    "reduced the risk of stroke by 29.7%. Side effects were rare."}
DIET = {"citation_id": "2", "title": "Diet",
        "content": "A Mediterranean diet lowered blood pressure in older adults over two "
                   "years."}
REFS = [TRIAL, DIET]


def one(answer: str, refs: list[dict[str, str]] | None = None) -> GroundedSentence:
    out = ground(answer, REFS if refs is None else refs)
    assert len(out) == 1, out
    return out[0]


def test_a_sentence_its_cited_reference_states_is_supported_by_it() -> None:
    g = one("Aspirin reduced the risk of stroke by 29.7% in a trial of 1,200 patients #ref:1.")
    assert (g.status, g.cited, g.support, g.reason) == ("supported", ["1"], ["1"], "")


def test_a_rounded_number_is_the_same_number() -> None:
    assert one("Aspirin reduced stroke risk by about 30% #ref:1.").status == "supported"


def test_a_changed_number_is_unsupported_and_the_reason_names_it() -> None:
    g = one("Aspirin reduced the risk of stroke by 50% #ref:1.")
    assert g.status == "unsupported" and g.support == []
    assert "50%" in g.reason and "no reference" in g.reason


def test_a_changed_year_and_a_changed_name_are_unsupported() -> None:
    year = one("In 2017, a trial of 1,200 patients found aspirin reduced stroke risk #ref:1.")
    name = one("A trial at the Cleveland Clinic found aspirin reduced stroke risk #ref:1.")
    assert year.status == name.status == "unsupported"
    assert "2017" in year.reason and "Cleveland" in name.reason


def test_a_number_from_another_reference_than_the_cited_one_is_named() -> None:
    g = one("Aspirin reduced stroke risk over two years #ref:1.")
    # "two" is in reference 2 only; reference 2 does not say the rest
    assert g.status == "unsupported" and "#ref:1" in g.reason


def test_an_unmarked_supported_sentence_gets_the_citation_it_should_have_had() -> None:
    g = one("A Mediterranean diet lowered blood pressure in older adults.")
    assert (g.status, g.cited, g.support) == ("supported", [], ["2"])
    assert "added #ref:2" in g.reason


def test_a_wrong_citation_is_corrected_by_the_reference_that_says_it() -> None:
    g = one("A Mediterranean diet lowered blood pressure in older adults #ref:1.")
    assert (g.status, g.cited, g.support) == ("supported", ["1"], ["2"])


def test_a_sentence_no_reference_says_is_unsupported() -> None:
    g = one("Regular exercise improves memory in children #ref:1.")
    assert g.status == "unsupported" and "no reference says this" in g.reason


def test_without_references_a_claim_cannot_be_supported() -> None:
    g = one("Aspirin reduced the risk of stroke by 29.7%.", [])
    assert g.status == "unsupported" and "no reference" in g.reason


def test_greetings_questions_code_and_remarks_about_the_answer_have_no_claim() -> None:
    answer = ("Hello!\n\nWhat did the trial find?\n\n```python\nprint(42)\n```\n\n"
              "I could not find anything else in the references.\n\n## Findings")
    out = ground(answer, REFS)
    assert [g.status for g in out] == ["no_claim"] * 5
    assert out[2].text.startswith("```") and out[2].reason == "code"


def test_offsets_point_into_the_answer_and_markers_stay_with_their_sentence() -> None:
    answer = ("Side effects were rare. #ref:1 A Mediterranean diet lowered blood pressure "
              "#ref:2.\n- Aspirin reduced the risk of stroke #ref:1\n- Side effects were rare")
    out = ground(answer, REFS)
    assert [answer[g.start:g.end] for g in out] == [g.text for g in out]
    assert [g.text for g in out] == [
        "Side effects were rare. #ref:1",
        "A Mediterranean diet lowered blood pressure #ref:2.",
        "Aspirin reduced the risk of stroke #ref:1",
        "Side effects were rare"]
    assert [g.cited for g in out] == [["1"], ["2"], ["1"], []]
    assert summary(out) == {"supported": 4, "unsupported": 0, "no_claim": 0, "unchecked": 0}


def test_chinese_sentences_are_split_and_checked() -> None:
    ref = {"citation_id": "7", "title": "新闻",
           "content": "2023年，北京市的人口为2185万。上海市的人口为2487万。"}
    out = ground("北京市的人口为2185万 #ref:7。上海市的人口为3000万 #ref:7。", [ref])
    assert [g.status for g in out] == ["supported", "unsupported"]
    assert "3000万" in out[1].reason


def test_another_citation_format_is_read() -> None:
    out = ground("Side effects were rare [1].", REFS, citation_format="[{id}]")
    assert (out[0].status, out[0].cited) == ("supported", ["1"])


def test_the_wire_form_has_the_documented_fields() -> None:
    g = one("Side effects were rare #ref:1.")
    assert list(g.to_dict()) == ["text", "start", "end", "status", "cited", "support",
                                 "reason"]


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab 1.%\n#-*|`:!?。，北京Aé\u2028")), max_size=80))
def test_any_answer_gives_sentences_whose_offsets_are_their_text(answer: str) -> None:
    out = ground(answer, REFS)
    last = 0
    for g in out:
        assert answer[g.start:g.end] == g.text and g.start >= last and g.text.strip()
        assert g.status in ("supported", "unsupported", "no_claim", "unchecked")
        last = g.end


def test_a_long_answer_is_checked_up_to_a_bound_and_the_rest_is_one_entry() -> None:
    """What is past the bounds is ``unchecked`` (it may hold claims), not ``no_claim``."""
    from agent_search.grounding._ground import MAX_ANSWER_CHARS

    line = "Side effects were rare #ref:1.\n"
    answer = line * (MAX_ANSWER_CHARS // len(line) + 50)
    out = ground(answer, REFS)
    assert out[-1].status == "unchecked" and out[-1].reason == "not checked: a long answer"
    assert answer[out[-1].start:out[-1].end] == out[-1].text
    assert out[-1].start <= MAX_ANSWER_CHARS and out[-1].end == len(answer.rstrip())
    assert all(g.status == "supported" for g in out[:200])
    assert {(g.status, g.reason) for g in out[200:-1]} == {
        ("unchecked", "not checked: a long answer")}


def test_a_database_row_supports_what_its_fields_hold() -> None:
    """A db reference's facts are in ``data`` (the row), not only in its content: the row's
    numbers support the sentence that quotes them, and a changed price is still caught;
    internal fields (``__*``) never count."""
    row = {"id": 1, "name": "Charging Cable 2m", "stock": 85, "brand": "Keyforge",
           "price": 9.99, "__yao_team": "t1"}
    refs = [{"citation_id": "6", "title": "Charging Cable 2m",
             "content": "Braided USB-C cable.", "data": row}]
    quoted, changed, internal = ground(
        "(stock: 85, brand: Keyforge, price: 9.99) #ref:6\n\n"
        "It costs 12.50 dollars #ref:6.\n\nIt belongs to team t1 #ref:6.", refs)
    assert quoted.status == "supported", quoted
    assert changed.status == "unsupported" and "12.50" in changed.reason
    assert internal.status != "supported"
