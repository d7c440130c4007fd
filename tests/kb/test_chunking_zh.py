"""Chunk sizes and text for Chinese and mixed Chinese/English documents (issue 26 item 4):
without a tokenizer a Han character counts as a token, full-width digits and letters are
stored as ASCII, and sentences of mixed text end where either language ends them."""

from __future__ import annotations

from collections.abc import Sequence

from agent_search.kb._ingest import Document, approx_tokens
from agent_search.kb._ingest._chunking import chunk_document, sentences_of
from agent_search.kb._ingest._loaders import blocks_of_lines

ZH = ["蜜蜂是群居的昆虫。", "一个蜂群里有一只蜂王和成千上万的工蜂！", "工蜂负责采集花蜜；",
      "蜂王负责产卵。", "蜂巢由六边形的蜂房组成。", "冬天蜜蜂会聚在一起取暖。"]


def _doc(lines: Sequence[str]) -> Document:
    return Document("d", "d.txt", None, list(blocks_of_lines(list(lines), markdown=False)))


def test_without_a_tokenizer_a_han_character_is_a_token() -> None:
    text = "".join(ZH) * 10
    han = sum("\u4e00" <= c <= "\u9fff" for c in text)
    [n] = approx_tokens([text])
    assert han <= n <= 1.3 * len(text)  # a mark of punctuation counts as a word
    assert approx_tokens(["three plain words"]) == [int(3 * 1.3) + 1]  # English unchanged
    [mixed] = approx_tokens(["RCEP covers 15 countries 覆盖十五个国家"])
    assert mixed == 7 + int(4 * 1.3) + 1


def test_chinese_chunks_without_a_tokenizer_are_sized_like_english_ones() -> None:
    """Before, a Chinese paragraph counted as one or two "words" and a chunk ran to the
    character cap (12 characters a token): ten times what the model reads."""
    body = "".join(ZH[i % len(ZH)] for i in range(200))
    chunks = chunk_document(_doc([body]), approx_tokens, max_tokens=64, overlap=0)
    assert len(chunks) > 10
    for chunk in chunks:
        assert len(chunk.text) <= 64
        assert chunk.text[-1] in "。！；", chunk.text  # cut where sentences end
    assert "".join(c.text for c in chunks) == body


def test_full_width_digits_and_letters_are_stored_as_ascii() -> None:
    [chunk] = chunk_document(_doc(["２０２３年ＧＤＰ增长５．２％，ｉＰｈｏｎｅ销量下降。"]),
                             approx_tokens)
    assert chunk.text == "2023年GDP增长5．2%，iPhone销量下降。"


def test_sentences_of_mixed_chinese_and_english() -> None:
    text = "RCEP于2022年1月1日生效。It covers 15 countries. 这是全球最大的自贸区！真的吗?是的。"
    assert sentences_of(text) == ["RCEP于2022年1月1日生效。", "It covers 15 countries.",
                                  "这是全球最大的自贸区！", "真的吗?", "是的。"]
    assert sentences_of("版本3.11发布了。Python 3.12 is out.") == ["版本3.11发布了。",
                                                              "Python 3.12 is out."]


def test_a_full_width_space_inside_a_line_is_a_space_and_the_indent_a_paragraph() -> None:
    [chunk] = chunk_document(_doc(["　　北京　上海２０２３年。", "　　第二段。"]), approx_tokens)
    assert chunk.text == "北京 上海2023年。\n\n第二段。"
