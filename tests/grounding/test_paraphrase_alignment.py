"""Faithful paraphrases that the polarity and support checks used to flag, and the
contradictions beside them that must stay flagged: direction words aligned through
WordNet's related words and the word they are said of, a valence word turned by the
amount word said of it, a scale adjective that names a kind, a Chinese negation whose
clause counts other numbers, a Latin acronym against a reference that spells it out in
Chinese, two words jieba's dictionary tags as a name. Sentences written for these tests
(not from the bench's set)."""

from __future__ import annotations

import pytest

from tests.support.grounding import verdict

WHEAT = ("Farmers who sow wheat before March raise their yield by about a fifth. "
         "The benefit is smaller for those who sow later but still worthwhile.")
SUGAR = ("Patients who walked daily saw their blood sugar drop by 9 points within a month. "
         "The effect was larger in people with diabetes.")
PRICES = "9月份，全国居民消费价格同比上涨1.6%，其中食品价格上涨3.2%，非食品价格上涨1.1%。"


@pytest.mark.parametrize(("answer", "reference"), [
    # "a bigger effect" is the counterpart of "the effect was larger" (said of the same
    # word), not of "blood sugar drop"; "high blood sugar" names the patients
    ("People with high blood sugar saw a bigger effect #ref:1.", SUGAR),
    # "a smaller benefit" is "the benefit is smaller"
    ("Patients treated in winter get a smaller benefit #ref:1.",
     "The benefit is smaller for patients treated in winter."),
    # "high blood sugar" names the patients, it does not say the sugar rose
    ("Walking every day brought patients' blood sugar down 9 points in a month, most of "
     "all for those with high blood sugar #ref:1.", SUGAR),
    # 非食品 is a class of its own: its clause counts 1.1%, the sentence 3.2%
    ("9月全国物价同比上升1.6%，食品价格涨了3.2%#ref:1。", PRICES),
    # the reference spells CPI out (居民消费价格)
    ("9月全国CPI同比上升1.6%，食品价格涨了3.2%#ref:1。", PRICES),
    # jieba's dictionary lists 同比增加 as a person's name: it is two words
    ("全年棉花产量为560万吨，同比增加2.1%#ref:1。", "全年棉花总产量达到560万吨，比上年增加2.1%。"),
])
def test_a_faithful_paraphrase_is_supported(answer: str, reference: str) -> None:
    assert verdict(answer, reference) == "supported"


TISSUE = ("Protein content was lower in the knockout mice than in the controls. In "
          "addition, lipase content was higher in the knockout mice.")


@pytest.mark.parametrize(("answer", "reference"), [
    # the window says "higher" of another thing: "lower" is the counterpart
    ("Protein content was higher in the knockout mice than in the controls #ref:1.", TISSUE),
    ("Farmers sowing later get a larger benefit #ref:1.", WHEAT),
    ("Patients treated in winter get a larger benefit #ref:1.",
     "The benefit is smaller for patients treated in winter."),
    ("People with diabetes saw a smaller effect #ref:1.", SUGAR),
    ("9月份，全国食品价格同比上涨1.1%#ref:1。", PRICES),
    ("9月份非食品价格没有上涨#ref:1。", PRICES),
    # a name the reference does not state
    ("王小明表示，全年棉花产量为560万吨#ref:1。", "全年棉花总产量达到560万吨，比上年增加2.1%。"),
    # a Latin acronym is looked for where the reference writes Latin capitals itself
    ("上半年全省CPI同比上涨1.8%#ref:1。", "上半年，全省GDP同比上涨1.8%。"),
])
def test_the_contradiction_beside_it_is_flagged(answer: str, reference: str) -> None:
    assert verdict(answer, reference) == "unsupported"
