"""A sentence that says the opposite of its reference is not supported (issue 37): a
negation, a negating prefix or an opposite direction word on the same words; and a
sentence the check cannot read is ``unchecked``, never ``supported``."""

from __future__ import annotations

import pytest

from agent_search.grounding import ground

REFERENCE = (
    "Obesity is associated with an increased risk of heart failure. "
    "Aspirin did not reduce bleeding in older adults. "
    "Smokers were unaffected by the treatment. "
    "Blood pressure rose after the intervention. "
    "Mice lacking the receptor gained weight, but not fat mass. "
    "Vitamin D levels were positively correlated with bone density."
)
REFS = [{"citation_id": "1", "title": "Cohort findings", "content": REFERENCE}]


def verdict(sentence: str, refs: list[dict[str, str]] = REFS) -> tuple[str, str]:
    (g,) = ground(sentence, refs)
    return g.status, g.reason


@pytest.mark.parametrize("sentence", [
    "Obesity is associated with an increased risk of heart failure #ref:1.",
    "According to the references, obesity is linked with an increased risk of heart "
    "failure #ref:1.",
    "Aspirin did not reduce bleeding in older adults #ref:1.",
    "Aspirin didn't reduce bleeding in older adults #ref:1.",
    "Aspirin failed to reduce bleeding in older adults #ref:1.",
    "Smokers were unaffected by the treatment #ref:1.",
    "Smokers were not affected by the treatment #ref:1.",
    "Blood pressure rose after the intervention #ref:1.",
    "Blood pressure increased after the intervention #ref:1.",
    "Mice lacking the receptor gained weight #ref:1.",
    "Vitamin D levels were positively correlated with bone density #ref:1.",
])
def test_what_the_reference_says_stays_supported(sentence: str) -> None:
    assert verdict(sentence) == ("supported", "")


@pytest.mark.parametrize(("sentence", "quoted"), [
    ("Obesity is not associated with an increased risk of heart failure #ref:1.",
     "“not associated"),
    ("Aspirin reduced bleeding in older adults #ref:1.", "it says “not reduce"),
    ("Smokers were affected by the treatment #ref:1.", "it says “unaffected”"),
    ("Obesity is associated with a decreased risk of heart failure #ref:1.",
     "“decreased”, where it says “increased”"),
    ("Obesity is associated with a lower risk of heart failure #ref:1.", "“lower”"),
    ("Blood pressure fell after the intervention #ref:1.", "“fell”, where it says “rose”"),
    ("Blood pressure rose before the intervention #ref:1.", "“before”"),
    ("Vitamin D levels were negatively correlated with bone density #ref:1.", "negatively"),
    ("Obesity protects against heart failure #ref:1.", "“protects”"),
])
def test_a_sentence_that_says_the_opposite_is_unsupported(sentence: str, quoted: str) -> None:
    status, reason = verdict(sentence)
    assert status == "unsupported"
    assert reason.startswith("the reference says the opposite (#ref:1): ") and quoted in reason


def test_a_negation_elsewhere_in_the_reference_does_not_flag_the_sentence() -> None:
    """"... gained weight, but not fat mass": the "not" negates fat mass only."""
    assert verdict("Mice lacking the receptor gained weight #ref:1.")[0] == "supported"
    assert verdict("Mice lacking the receptor gained fat mass #ref:1.")[0] == "unsupported"


def test_a_lower_risk_is_a_protection() -> None:
    refs = [{"citation_id": "1", "title": "",
             "content": "Regular exercise lowered the risk of dementia in adults."}]
    for same in ("Regular exercise was protective against dementia in adults #ref:1.",
                 "Regular exercise protects against the risk of dementia in adults #ref:1."):
        assert verdict(same, refs) == ("supported", "")
    status, reason = verdict("Regular exercise raised the risk of dementia in adults #ref:1.",
                             refs)
    assert status == "unsupported" and "“raised”" in reason
    assert verdict("Regular exercise reduced the risk of dementia in adults #ref:1.",
                   refs) == ("supported", "")


def test_another_reference_that_says_it_supports_it_with_an_added_citation() -> None:
    refs = [{"citation_id": "1", "title": "", "content": "Coffee intake increased alertness "
             "in night-shift workers."},
            {"citation_id": "2", "title": "", "content": "Coffee intake did not increase "
             "alertness in night-shift workers."}]
    (g,) = ground("Coffee intake did not increase alertness in night-shift workers #ref:1.",
                  refs)
    assert g.status == "supported" and g.support == ["2"] and "added #ref:2" in g.reason


CHINESE = [{"citation_id": "1", "title": "", "content":
            "2022年，北京市常住人口比上年减少了4.3万人。该政策没有提高就业率。会议于发布会之后举行。"}]


@pytest.mark.parametrize(("sentence", "status"), [
    ("2022年，北京市常住人口比上年减少了4.3万人 #ref:1。", "supported"),
    ("2022年，北京市常住人口比上年增加了4.3万人 #ref:1。", "unsupported"),
    ("该政策没有提高就业率 #ref:1。", "supported"),
    ("该政策提高了就业率 #ref:1。", "unsupported"),
    ("该政策未能提高就业率 #ref:1。", "supported"),
    ("会议于发布会之前举行 #ref:1。", "unsupported"),
])
def test_chinese_polarity_and_direction(sentence: str, status: str) -> None:
    got, reason = verdict(sentence, CHINESE)
    assert got == status, reason
    if status == "unsupported":
        assert reason.startswith("the reference says the opposite")


@pytest.mark.parametrize("sentence", [
    "Der Blutdruck stieg nach der Intervention an, und die Werte waren höher #ref:1.",
    "Кровяное давление выросло после вмешательства #ref:1.",
    "血圧は介入後に上昇しました #ref:1。",
])
def test_a_language_it_does_not_read_is_never_supported(sentence: str) -> None:
    refs = [{"citation_id": "1", "title": "", "content": sentence.replace(" #ref:1", "")}]
    status, reason = verdict(sentence, refs)
    assert status == "unchecked" and "a language the check does not read" in reason


def test_english_in_few_words_and_a_row_of_fields_are_read() -> None:
    refs = [{"citation_id": "1", "title": "", "content": "Aspirin cut strokes by 30% "
             "in 1,200 patients. Stock: 85, brand: Keyforge, price: 9.99."}]
    assert verdict("Aspirin: strokes cut by 30%, 1,200 patients #ref:1.", refs)[0] == \
        "supported"
    assert verdict("Stock: 85, brand: Keyforge, price: 9.99 #ref:1.", refs)[0] == "supported"


def test_a_sentence_too_long_to_read_is_unchecked() -> None:
    clause = "the treatment lowered blood pressure in the older adults of the cohort"
    long = ", and ".join([clause] * 8)
    refs = [{"citation_id": "1", "title": "", "content": long[0].upper() + long[1:] + "."}]
    status, reason = verdict(long[0].upper() + long[1:] + " #ref:1.", refs)
    assert status == "unchecked" and "too long" in reason


def test_greek_letters_and_a_name_dot_are_read() -> None:
    refs = [{"citation_id": "1", "title": "",
             "content": "The γ-tubulin ring was not required for spindle assembly."}]
    assert verdict("The γ-tubulin ring was not required for spindle assembly #ref:1.",
                   refs) == ("supported", "")
    assert verdict("The γ-tubulin ring was required for spindle assembly #ref:1.",
                   refs)[0] == "unsupported"
    zh = [{"citation_id": "1", "title": "", "content": "安东尼・阿尔巴内塞成为澳大利亚总理。"}]
    assert verdict("安东尼・阿尔巴内塞成为澳大利亚总理 #ref:1。", zh) == ("supported", "")


@pytest.mark.parametrize(("reference", "same", "opposite", "quoted"), [
    ("The new drug halved the mortality of patients with sepsis.",
     "The new drug reduced the mortality of patients with sepsis #ref:1.",
     "The new drug doubled the mortality of patients with sepsis #ref:1.", "“doubled”"),
    ("Screening doubled the detection of early tumours in women.",
     "Screening increased the detection of early tumours in women #ref:1.",
     "Screening halved the detection of early tumours in women #ref:1.", "“halved”"),
    ("Vaccination prevented infection of the children in the trial.",
     "Vaccination reduced infection of the children in the trial #ref:1.",
     "Vaccination increased infection of the children in the trial #ref:1.", "“increased”"),
    ("The statin increased the incidence of myopathy among older patients.",
     "The statin raised the incidence of myopathy among older patients #ref:1.",
     "The statin prevented the incidence of myopathy among older patients #ref:1.",
     "“prevented”"),
])
def test_halved_doubled_and_prevented_are_directions(reference: str, same: str, opposite: str,
                                                     quoted: str) -> None:
    """"halved" and "prevented" lower an amount, "doubled" raises it (misses of the
    last report: each passed as supported against a reference saying the opposite)."""
    refs = [{"citation_id": "1", "title": "", "content": reference}]
    assert verdict(same, refs) == ("supported", "")
    status, reason = verdict(opposite, refs)
    assert status == "unsupported" and quoted in reason, reason


def test_double_blind_is_no_direction() -> None:
    """"double-blind" describes a trial; it does not say an amount went up."""
    refs = [{"citation_id": "1", "title": "",
             "content": "A double-blind trial reduced the pain of patients with arthritis."}]
    assert verdict("A randomised trial reduced the pain of patients with arthritis #ref:1.",
                   refs) == ("supported", "")


def test_chinese_halved_and_doubled_are_directions() -> None:
    refs = [{"citation_id": "1", "title": "", "content": "新药使患者的死亡率减半。"}]
    assert verdict("新药使患者的死亡率降低 #ref:1。", refs)[0] == "supported"
    status, reason = verdict("新药使患者的死亡率翻倍 #ref:1。", refs)
    assert status == "unsupported" and "翻倍" in reason, reason
