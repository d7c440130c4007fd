"""Chinese text through ingest (issue 26 item 4): paragraphs (blank lines or the
full-width indent "　　"), lines wrapped inside a paragraph joined without a space,
sentences ended by full-width 。！？； and ……, and chunks that end where sentences end."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from agent_search import SearchConfig
from agent_search.kb import KBSettings, ingest_paths
from agent_search.kb._ingest import Document, load_file
from agent_search.kb._ingest._chunking import chunk_document, sentences_of
from agent_search.kb._ingest._loaders import PARAGRAPH_CHARS, blocks_of_lines
from agent_search.kb._store import get_store, scroll_all

SENTENCES = [
    "蜜蜂是群居的昆虫。", "一个蜂群里有一只蜂王、成千上万的工蜂和少量雄蜂！",
    "工蜂负责采集花蜜；", "蜂王负责产卵。", "“蜂蜜是怎么来的？”", "孩子问。",
    "工蜂把花蜜带回蜂巢……", "然后在蜂巢里慢慢酿成蜂蜜。", "蜂巢由六边形的蜂房组成。",
    "这种形状既节省材料又非常坚固！", "冬天蜜蜂会聚在一起取暖。", "春天到了，蜂群开始分蜂？",
]
_CJK = "\u4e00-\u9fff。！？；，、…”“"
_SPACE_IN_CJK = re.compile(f"[{_CJK}][ \t\u3000]+[{_CJK}]")


def chars(texts: Sequence[str]) -> list[int]:
    """One token per character: what a BERT vocabulary gives Chinese text."""
    return [len(t) for t in texts]


def test_paragraphs_wrapped_lines_and_sentences() -> None:
    lines = ["　　蜜蜂是群居的昆虫。一个蜂群里有一只蜂王、", "成千上万的工蜂和少量雄蜂！",
             "　　“蜂蜜是怎么来的？”孩子问。工蜂把花蜜带回蜂巢……然后在蜂巢里慢慢酿成蜂蜜。",
             "", "English lines still get\u0020a space: one", "two."]
    blocks = [b.text for b in blocks_of_lines(lines, markdown=False)]
    assert blocks == [
        "蜜蜂是群居的昆虫。一个蜂群里有一只蜂王、成千上万的工蜂和少量雄蜂！",
        "“蜂蜜是怎么来的？”孩子问。工蜂把花蜜带回蜂巢……然后在蜂巢里慢慢酿成蜂蜜。",
        "English lines still get a space: one two."]
    assert sentences_of(blocks[1]) == ["“蜂蜜是怎么来的？”", "孩子问。",
                                       "工蜂把花蜜带回蜂巢……", "然后在蜂巢里慢慢酿成蜂蜜。"]
    assert sentences_of("It works. Really? Yes! 好的。") == ["It works.", "Really?", "Yes!",
                                                            "好的。"]


def test_chunks_of_chinese_text_end_where_sentences_end() -> None:
    text = "".join(SENTENCES[i % len(SENTENCES)] + ("" if i % 7 else "\n\n")
                   for i in range(60))
    doc = Document("zh", "zh.txt", "蜜蜂",
                   list(blocks_of_lines(text.split("\n"), markdown=False)))
    chunks = chunk_document(doc, chars, max_tokens=48, overlap=8)
    assert len(chunks) > 10
    for chunk in chunks:
        assert len(chunk.text.replace("\n\n", "")) <= 48
        assert not _SPACE_IN_CJK.search(chunk.text), chunk.text
        for sentence in sentences_of(chunk.text.replace("\n\n", "")):
            assert sentence in SENTENCES, (sentence, chunk.text)
    seen = {s for c in chunks for s in sentences_of(c.text.replace("\n\n", ""))}
    assert seen == set(SENTENCES)


def test_a_sentence_longer_than_a_chunk_is_cut_at_its_commas() -> None:
    clauses = ["春天到了，", "花园里的花都开了，", "蜜蜂从早到晚忙个不停，", "它们飞过田野、",
               "穿过果园，", "把一朵朵花里的花蜜带回家。"]
    doc = Document("zh", "zh.txt", None, list(blocks_of_lines(["".join(clauses)],
                                                               markdown=False)))
    chunks = chunk_document(doc, chars, max_tokens=24, overlap=0)
    assert "".join(c.text for c in chunks) == "".join(clauses)
    for chunk in chunks:
        assert chunk.text[-1] in "，、。", chunk.text


@pytest.mark.anyio
async def test_a_chinese_file_through_ingest(config: SearchConfig, tmp_path: Path) -> None:
    path = tmp_path / "蜜蜂.txt"
    body = "".join(SENTENCES * 6)
    path.write_text(f"　　{body[:200]}\n{body[200:]}\n\n　　{body}\n", encoding="utf-8")
    (doc,) = list(load_file(path))
    assert isinstance(doc, Document)
    settings = config.merged({"kb": {"chunk_tokens": 64, "chunk_overlap": 8}})
    report = await ingest_paths(settings, [path], "zh")
    assert report.skipped == [] and report.chunks >= 8
    store = get_store(KBSettings.from_config(settings), config.home)
    for record in scroll_all(store, "zh"):
        content = record.payload["content"].replace("\n\n", "")
        assert not _SPACE_IN_CJK.search(content), content
        assert all(s in SENTENCES for s in sentences_of(content)), content


def test_a_chinese_line_longer_than_a_block_is_cut_where_a_sentence_ends(
        tmp_path: Path) -> None:
    # one line of ~230,000 characters with no space in it: it comes in blocks of one or two
    # pieces of about PARAGRAPH_CHARS, each ending with a sentence, never inside a word
    text = "".join(SENTENCES[i % len(SENTENCES)] for i in range(20_000))
    path = tmp_path / "long.txt"
    path.write_text(text, encoding="utf-8")
    docs = list(load_file(path))
    assert len(docs) == 1 and isinstance(docs[0], Document)
    blocks = [b.text for b in docs[0].blocks]
    assert len(blocks) >= 3
    assert "".join(blocks) == text
    for block in blocks[:-1]:
        assert block[-1] in "。！？", block[-20:]
        assert len(block) <= 2 * PARAGRAPH_CHARS
