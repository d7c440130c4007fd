"""Languages as records: what the English and Chinese records say, how a text is
classified, and a third language registered here read by classify, the tokenizer, keyword
extraction, follow-ups, the research planner and the answer check's reference sentences
with no edit anywhere else."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from agent_search.grounding._references import prepare
from agent_search.language import (
    CHINESE,
    ENGLISH,
    Language,
    classify,
    fallback,
    language_named,
    languages,
    register_language,
    sentence_breaks,
    unregister_language,
)
from agent_search.query.followup import points_back, stands_alone
from agent_search.query.keyword import extract_keywords
from agent_search.research import plan_question

# -- the built-in records -----------------------------------------------------------------


def test_english_and_chinese_are_classified_by_script() -> None:
    assert classify("wireless headphones under $100") is ENGLISH
    assert classify("无线耳机推荐") is CHINESE
    assert classify("Qdrant 和 Milvus 的许可证") is CHINESE  # a Han character decides
    assert classify("") is ENGLISH
    assert classify("Ελληνικά") is ENGLISH  # no record claims Greek: the fallback reads it
    assert fallback() is ENGLISH and languages()[-1] is ENGLISH


def test_a_language_is_named_by_its_primary_subtag() -> None:
    assert language_named("zh-CN") is CHINESE
    assert language_named("zh_Hant") is CHINESE
    assert language_named(" EN ") is ENGLISH
    assert language_named("fr") is None


def test_the_records_hold_the_languages_data() -> None:
    assert ENGLISH.stopwords == ENGLISH.function_words | ENGLISH.request_words
    assert {"the", "without"} <= ENGLISH.function_words and "please" in ENGLISH.request_words
    assert "的" in CHINESE.stopwords and not CHINESE.request_words
    assert ENGLISH.tokenize("I don't use e-mail, ok?") == [
        "I", "don't", "use", "e-mail", ",", "ok", "?"]
    assert CHINESE.tokenize("我想找无线耳机。") == ["我", "想", "找", "无线耳机", "。"]
    assert CHINESE.read_numeral is not None and CHINESE.read_numeral("三万五") == 35_000
    assert ENGLISH.read_numeral is None and not ENGLISH.numerals
    assert (ENGLISH.join(["a", "b"]), CHINESE.join(["无线", "耳机"])) == ("a b", "无线耳机")
    assert sentence_breaks().split("One. Two! 三。四？Five") == [
        "One.", "Two!", "三。", "四？", "Five"]


@pytest.mark.parametrize(("language", "replace", "error"), [
    (Language("EN", re.compile("x"), str.split, frozenset()), False, "BCP 47"),
    (Language("xx", None, str.split, frozenset()), False, "no script"),
    (Language("zh", re.compile("x"), str.split, frozenset()), False, "already registered"),
    (Language("en", re.compile("x"), str.split, frozenset()), True, "is the fallback"),
])
def test_a_bad_record_is_refused_with_the_reason(language: Language, replace: bool,
                                                  error: str) -> None:
    with pytest.raises(ValueError, match=error):
        register_language(language, replace=replace)
    assert languages() == (CHINESE, ENGLISH)


def test_only_records_are_registered_and_only_known_names_removed() -> None:
    with pytest.raises(TypeError, match="takes a Language"):
        register_language("zh")  # type: ignore[arg-type]
    with pytest.raises(KeyError, match="no registered language 'fr'"):
        unregister_language("fr")


# -- a third language -----------------------------------------------------------------------

_GREEK = "\u0370-\u03ff"
_RUNES = "\u16a0-\u16f8"
_RUNE_LETTERS = "\u16a0-\u16ea"


def _greek_words(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]", text)


def _rune_words(text: str) -> list[str]:
    """Runic text marks word ends with ᛫ and sentence ends with ᛭, no spaces."""
    return re.findall(f"[{_RUNE_LETTERS}]+|[^{_RUNE_LETTERS}\\s]", text)


TOY_SPACED = Language(name="toy", script=re.compile(f"[{_GREEK}]"), tokenize=_greek_words,
                      function_words=frozenset({"και", "το", "η"}), sentence_ends=".;")
"""A language written with spaces, in Greek letters, whose question mark is ``;``."""
TOY_UNSPACED = Language(name="rune", script=re.compile(f"[{_RUNES}]"), tokenize=_rune_words,
                        function_words=frozenset({"ᚨᚾ"}), spaced=False, sentence_ends="᛭")
"""A language written without spaces, in runes."""


@pytest.fixture()
def toys() -> Iterator[None]:
    register_language(TOY_SPACED)
    register_language(TOY_UNSPACED)
    try:
        yield
    finally:
        unregister_language("toy")
        unregister_language("rune")


@pytest.mark.usefixtures("toys")
def test_registered_languages_are_classified_after_the_ones_before() -> None:
    assert languages() == (CHINESE, TOY_SPACED, TOY_UNSPACED, ENGLISH)
    assert classify("το σπίτι και η αυλή") is TOY_SPACED
    assert classify("ᚠᚢᚦ᛫ᚨᚾ᛫ᚱᚲ") is TOY_UNSPACED
    assert classify("σπίτι 北京") is CHINESE  # Chinese was there first
    assert classify("plain English") is ENGLISH
    assert language_named("toy-GR") is TOY_SPACED


@pytest.mark.usefixtures("toys")
def test_a_registered_language_flows_through_the_readers() -> None:
    # keyword extraction: the generic rules, with the toy's stop words dropped
    assert extract_keywords("το σπίτι και η αυλή") == ["σπίτι", "αυλή"]
    assert extract_keywords("ᚠᚢᚦ᛫ᚨᚾ᛫ᚱᚲ") == ["ᚠᚢᚦ", "ᚱᚲ"]
    # follow-ups: no rules of its own, so it stands alone (nothing carried blindly)
    assert stands_alone("και το;") and not points_back("και το;")
    # research: sentences end at the toy's own mark, runes glued without spaces
    assert [p.text for p in plan_question("ᚠᚢᚦ᛫ᚱᚲ᛭ᚷᚹ")] == ["ᚠᚢᚦ᛫ᚱᚲ᛭", "ᚷᚹ"]
    # the answer check: a reference's sentences end at the toy's mark too (its windows
    # are each sentence and each pair), and English and Chinese ones as before
    assert prepare("1", "", "ᚠᚢᚦ᛭ᚱᚲ").windows == ["ᚠᚢᚦ᛭", "ᚱᚲ", "ᚠᚢᚦ᛭ ᚱᚲ"]
    assert prepare("1", "", "A b. C d").windows == ["A b.", "C d", "A b. C d"]
    assert prepare("1", "", "甲乙。丙丁").windows == ["甲乙。", "丙丁", "甲乙。 丙丁"]


@pytest.mark.usefixtures("toys")
def test_english_and_chinese_read_the_same_with_other_languages_registered() -> None:
    assert extract_keywords("I want to find the best wireless headphones under $100") == [
        "wireless headphones", "under $100", "best"]
    assert extract_keywords("推荐三千元以下的无线耳机") == ["无线耳机", "三千元以下", "推荐"]
    assert not stands_alone("and them?") and stands_alone("无线耳机推荐")


def test_removing_a_language_returns_its_text_to_the_fallback() -> None:
    register_language(TOY_UNSPACED)
    unregister_language("rune")
    assert prepare("1", "", "ᚠᚢᚦ᛭ᚱᚲ").windows == ["ᚠᚢᚦ᛭ᚱᚲ"]
    register_language(TOY_SPACED)
    unregister_language("toy")
    assert classify("το σπίτι") is ENGLISH
    assert sentence_breaks().split("σπίτι; αυλή") == ["σπίτι; αυλή"]
