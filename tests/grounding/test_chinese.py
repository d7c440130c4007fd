"""Grounding of Chinese answers (issue 26 item 4): numbers however Chinese writes them
(三十五, 四万三千, 二〇二二, 百分之三十, 三成, full-width ３５), words that merely hold
numeral characters (统一, 十分, 千万), Latin names inside Chinese text, and "我国"."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_search.grounding import ground
from agent_search.grounding._claims import content_words, extract, number_found, reference_numbers
from agent_search.grounding._numbers_zh import chinese_numbers, half_width

REFERENCE = {"citation_id": "1", "title": "",
             "content": "2022年，北京市常住人口为2184.3万人，比上年减少4.3万人。全市共有"
                        "三十五所大学，其中百分之三十为理工科院校。东航MU5735航班于3月21日坠毁。"}


@pytest.mark.parametrize(("written", "value"), [
    ("三十五", 35), ("十二", 12), ("一百零五", 105), ("两千", 2000), ("三千五百", 3500),
    ("四万三千", 43000), ("三万五", 35000), ("一千二", 1200), ("十万八千", 108000),
    ("一亿二千万", 120_000_000), ("二〇二二", 2022), ("一九九八", 1998),
    ("百分之三十", 30), ("三成", 30), ("零点五", 0.5), ("三点一四", 3.14),
])
def test_numerals_in_characters_are_read(written: str, value: float) -> None:
    assert [v for _, v, _ in chinese_numbers(written)] == [pytest.approx(value)]


@pytest.mark.parametrize("sentence", [
    "各方统一了意见。", "这件事十分重要。", "千万不要迟到。", "万一下雨就改期。",
    "他们一直在一起工作。", "三番五次地提醒。", "来了三四个人。", "来了十几个人。",
])
def test_words_that_hold_numeral_characters_claim_no_number(sentence: str) -> None:
    assert extract(sentence).numbers == []


def test_full_width_digits_and_letters_are_read_as_ascii() -> None:
    assert half_width("ＧＤＰ增长了５．２％") == "GDP增长了5.2%"
    claims = extract("ＧＤＰ增长了５．２％。")
    assert [n.values for n in claims.numbers] == [(5.2,)]
    assert claims.entities == ["GDP"]


@pytest.mark.parametrize(("sentence", "reference", "found"), [
    ("北京有三十五所大学。", "北京有35所大学。", True),
    ("北京有35所大学。", "北京有三十五所大学。", True),
    ("人口减少了四万三千人。", "人口减少4.3万人。", True),
    ("人口减少了4.3万人。", "人口减少四万三千人。", True),
    ("二〇二二年开幕。", "2022年开幕。", True),
    ("２０２２年开幕。", "2022年开幕。", True),
    ("三成是理工科。", "30%是理工科。", True),
    ("北京有四十所大学。", "北京有三十五所大学。", False),
    ("二〇二三年开幕。", "2022年开幕。", False),
])
def test_a_number_matches_across_its_chinese_forms(sentence: str, reference: str,
                                                   found: bool) -> None:
    claims = extract(sentence)
    assert claims.numbers, sentence
    values = reference_numbers(reference)
    assert all(number_found(n, values) for n in claims.numbers) is found


def test_numbers_are_not_words_of_the_overlap() -> None:
    """However a number is written, the words around it are the same words."""
    words = content_words("二〇二二年北京市常住人口为２１８４．３万人。")
    assert words == content_words("2022年，北京市常住人口为2184.3万人。")
    assert words == content_words("二〇二二年，北京市常住人口为二千一百八十四点三万人。")
    assert not any(w[0] in "0123456789二〇" for w in words)


@pytest.mark.parametrize(("answer", "status"), [
    ("北京市常住人口为二千一百八十四点三万人 #ref:1。", "supported"),
    ("2022年，北京市常住人口比上年减少了四万三千人 #ref:1。", "supported"),
    ("北京共有３５所大学 #ref:1。", "supported"),
    ("北京共有四十所大学 #ref:1。", "unsupported"),
    ("二〇二三年，北京市常住人口为2184.3万人 #ref:1。", "unsupported"),
    ("东航MU5735航班于3月21日坠毁 #ref:1。", "supported"),
    ("东航MU5736航班于3月21日坠毁 #ref:1。", "unsupported"),
])
def test_chinese_answers_against_a_chinese_reference(answer: str, status: str) -> None:
    [sentence] = ground(answer, [REFERENCE])
    assert sentence.status == status, sentence.reason


def test_the_reason_names_the_number_as_written() -> None:
    [sentence] = ground("北京共有四十所大学 #ref:1。", [REFERENCE])
    assert "四十" in sentence.reason


def test_our_country_is_a_claim_and_i_did_not_find_is_not() -> None:
    out = ground("我国北京市常住人口比上年减少。我没有在资料中找到答案。", [REFERENCE])
    assert [s.status for s in out] == ["supported", "no_claim"]
    assert out[0].support == ["1"]  # the citation it should have had is added


@pytest.mark.parametrize("answer", [
    "根据资料，东航MU5736航班于3月21日坠毁。",  # a name: checked before too
    "根据参考资料，北京的大学都位于郊区。",
    "According to the references, every university in Beijing lies outside the city.",
    "资料显示，北京的大学都位于郊区。",
    "The references show that every university in Beijing lies outside the city.",
])
def test_a_lead_in_naming_the_references_does_not_hide_the_claim(answer: str) -> None:
    """"根据资料，…" / "According to the references, …" made a sentence without a number
    or a name `no_claim` ("about the references"), so a model that opened every sentence
    so had them all pass unchecked."""
    [sentence] = ground(answer, [REFERENCE])
    assert sentence.status == "unsupported", sentence.reason


def test_a_lead_in_naming_the_references_keeps_a_supported_claim_supported() -> None:
    [sentence] = ground("根据参考资料，北京市常住人口比上年减少了四万三千人。", [REFERENCE])
    assert (sentence.status, sentence.support) == ("supported", ["1"])
    assert [s.status for s in ground("我没有在参考资料中找到答案。", [REFERENCE])] == ["no_claim"]


def test_chinese_list_marks_are_not_claimed_numbers() -> None:
    answer = ("1、北京共有三十五所大学 #ref:1。\n（2）北京共有三十五所大学 #ref:1。\n"
              "三、北京共有三十五所大学 #ref:1。\n① 北京共有三十五所大学 #ref:1。\n"
              "4.北京共有三十五所大学 #ref:1。\n5.2%的人口减少了。")
    out = ground(answer, [REFERENCE])
    assert [s.text[:5] for s in out[:5]] == ["北京共有三"] * 5
    assert [s.status for s in out[:5]] == ["supported"] * 5
    assert out[5].text.startswith("5.2%") and out[5].status == "unsupported"  # not a list mark


_DIGITS = "零一二三四五六七八九"


def _written(value: int) -> str:
    """The oracle: an integer below 10^8 as Chinese writes it in full (四万零三百零五)."""
    def section(n: int) -> str:
        out, zero = "", False
        for unit, name in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
            d, n = divmod(n, unit)
            if d:
                out += ("零" if zero and out else "") + _DIGITS[d] + name
                zero = False
            else:
                zero = True
        return out

    high, low = divmod(value, 10_000)
    text = (section(high) + "万" + ("零" if 0 < low < 1000 else "") if high else "") + \
        (section(low) if low else "")
    return text[1:] if text.startswith("一十") else text


@given(st.integers(min_value=1, max_value=99_999_999))
def test_every_integer_written_in_characters_is_read_back(value: int) -> None:
    assert [v for _, v, _ in chinese_numbers(_written(value))] == [value]


def test_an_english_sentence_inside_a_chinese_answer_is_split_by_english_rules() -> None:
    """pySBD's Chinese rules cut at every "." ("Mr." and "U.S." ended sentences)."""
    answer = ("拜登于2021年1月20日就职 #ref:1。Mr. Biden is the 46th U.S. president #ref:1. "
              "他出生于1942年。It works. 好的！")
    texts = [s.text for s in ground(answer, [REFERENCE])]
    assert texts == ["拜登于2021年1月20日就职 #ref:1。",
                     "Mr. Biden is the 46th U.S. president #ref:1.", "他出生于1942年。",
                     "It works.", "好的！"]
    assert all(answer[s.start:s.end] == s.text for s in ground(answer, [REFERENCE]))
