"""Builtin keyword extraction (English and Chinese)."""

from __future__ import annotations

import pytest

from agent_search.query.keyword import extract_keywords, extract_keywords_async, keyword_query


def test_spec_example() -> None:
    keywords = extract_keywords("I want to find the best wireless headphones under $100")
    assert "wireless headphones" in keywords
    assert "under $100" in keywords
    assert "best" in keywords
    # conversational fillers are gone
    assert not {"I", "want", "find", "the"} & {w for k in keywords for w in k.split()}


@pytest.mark.parametrize(("text", "expected"), [
    ("What is the Semantic Kernel?", ["Semantic Kernel"]),
    ('Can you tell me about "retrieval augmented generation" papers from 2023?',
     ["retrieval augmented generation", "papers", "from 2023"]),
    ("laptops between $500 and $800 with 16GB RAM",
     ["laptops", "16GB RAM", "between $500 and $800"]),
    ("How do I install Python 3.12 on Ubuntu 22.04?", ["install Python 3.12", "Ubuntu 22.04"]),
    ("GPT-4 vs C++ benchmarks", ["GPT-4 vs C++ benchmarks"]),
])
def test_english(text: str, expected: list[str]) -> None:
    assert extract_keywords(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("我想找100元以下最好的无线耳机", ["无线耳机", "100元以下", "最好"]),
    ("不超过500元的蓝牙音箱", ["蓝牙音箱", "不超过500元"]),
    ('我想了解"向量数据库"的原理', ["向量数据库", "原理"]),
    ("请帮我搜索一下最新的Python 3.12教程", ["Python 3.12 教程", "最新"]),
    ("语义内核是什么？", ["语义内核"]),
])
def test_chinese(text: str, expected: list[str]) -> None:
    assert extract_keywords(text) == expected


def test_language_switch_and_max_keywords() -> None:
    text = "best cheap fast light red shoes under $50 in 2024"
    assert len(extract_keywords(text, max_keywords=2)) == 2
    assert extract_keywords(text, max_keywords=2)[0] == "light red shoes"
    # English rules do not segment Chinese; the Chinese rules (jieba) do
    assert extract_keywords("我想找无线耳机", language="en") == ["我想找无线耳机"]
    assert extract_keywords("我想找无线耳机", language="zh-CN") == ["无线耳机"]


def test_quoted_phrases_first_and_duplicates_dropped() -> None:
    assert extract_keywords('Kernel plugins and "semantic kernel" and kernel plugins') == [
        "semantic kernel", "Kernel plugins"]


def test_empty_and_all_stopwords() -> None:
    assert extract_keywords("") == []
    assert extract_keywords("   ") == []
    assert extract_keywords("can you please help me find something") == []
    assert keyword_query("can you please help me") == "can you please help me"
    with pytest.raises(ValueError, match="max_keywords"):
        extract_keywords("x", max_keywords=0)


@pytest.mark.anyio
async def test_async_variant_matches() -> None:
    text = "我想找100元以下最好的无线耳机"
    assert await extract_keywords_async(text) == extract_keywords(text)


@pytest.mark.parametrize(("full_width", "ascii"), [
    ("价格不超过５００元的耳机", "价格不超过500元的耳机"),
    ("２０２３年ＧＤＰ增长", "2023年GDP增长"),
    ("ｂｅｓｔ　ｗｉｒｅｌｅｓｓ　ｈｅａｄｐｈｏｎｅｓ", "best wireless headphones"),
])
def test_full_width_text_reads_as_its_ascii_form(full_width: str, ascii: str) -> None:
    """jieba cut "５００元" digit by digit: the constraint became "不超过５" + "０ ０元"."""
    assert extract_keywords(full_width) == extract_keywords(ascii)
    assert extract_keywords("价格不超过５００元的耳机") == ["价格", "耳机", "不超过500元"]


def test_a_number_in_characters_with_its_unit_is_a_constraint() -> None:
    assert extract_keywords("三千元以下的手机") == ["手机", "三千元以下"]
    assert extract_keywords("三星手机") == ["三星手机"]  # a name, not 3 + 星
