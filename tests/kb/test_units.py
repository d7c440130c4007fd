"""Pure functions: chunking, BM25 analysis, filter translation, settings."""

from __future__ import annotations

import itertools

import pytest
from qdrant_client import models

from agent_search import SearchConfig
from agent_search.errors import ConfigError
from agent_search.kb._ingest import Block, Document, approx_tokens
from agent_search.kb._ingest._chunking import chunk_document
from agent_search.kb._ingest._loaders import markdown_blocks
from agent_search.kb._store import (
    BM25,
    Group,
    IsNull,
    Match,
    MatchAny,
    Range,
    analyze,
    indexed_fields,
    to_filter,
)
from agent_search.kb._store._filters import FilterError
from agent_search.kb.settings import KBSettings
from agent_search.types import QueryWhere


def _words(n: int, start: int = 0) -> str:
    return " ".join(f"w{i}" for i in range(start, start + n)) + "."


def test_chunks_respect_sections_and_size() -> None:
    doc = Document("d", "s", "T", [
        Block(_words(10), ("A",)), Block(_words(10, 10), ("A",)),
        Block(_words(10, 20), ("A", "B")),
    ])
    chunks = chunk_document(doc, approx_tokens, max_tokens=64, overlap=0)
    assert [c.headings for c in chunks] == [("A",), ("A", "B")]
    assert chunks[0].text == _words(10) + "\n\n" + _words(10, 10)
    assert [c.index for c in chunks] == [0, 1]


def test_long_paragraph_is_cut_at_sentences_with_overlap() -> None:
    sentences = [_words(8, i * 8) for i in range(12)]
    doc = Document("d", "s", None, [Block(" ".join(sentences))])
    chunks = chunk_document(doc, approx_tokens, max_tokens=40, overlap=12)
    assert len(chunks) > 3
    assert all(approx_tokens([c.text])[0] <= 40 + 2 for c in chunks)
    for a, b in itertools.pairwise(chunks):
        assert a.text.split(". ")[-1].rstrip(".") in b.text  # last sentence carried over
    joined = " ".join(c.text for c in chunks)
    assert all(s.rstrip(".") in joined for s in sentences)


def test_a_sentence_longer_than_a_chunk_is_cut_by_words() -> None:
    doc = Document("d", "s", None, [Block(" ".join(f"x{i}" for i in range(500)))])
    chunks = chunk_document(doc, approx_tokens, max_tokens=50, overlap=0)
    assert len(chunks) >= 10 and all(approx_tokens([c.text])[0] <= 50 for c in chunks)


def test_markdown_headings_and_code_fences() -> None:
    blocks = markdown_blocks("# Top\n\nintro\n\n## Sub\n\ntext\n\n```\n# not a heading\n```\n"
                             "\n### Deep\n\nmore\n")
    assert [(b.headings, b.text.split()[0]) for b in blocks] == [
        (("Top",), "intro"), (("Top", "Sub"), "text"), (("Top", "Sub"), "```"),
        (("Top", "Sub", "Deep"), "more")]


def test_bm25_analysis_stems_and_drops_stop_words() -> None:
    assert analyze("The cells were Running") == ["cell", "run"]
    assert analyze("检索测试") == ["检索", "索测", "测试"]
    assert analyze("🙂") == []
    bm25 = BM25()
    q = bm25.query_vector("cells cell CELLS")
    assert len(q.indices) == 1 and q.values == [1.0]
    long_doc = bm25.vector_of(bm25.doc_counts("cell " * 3 + "tissue " * 100), avgdl=10)
    short_doc = bm25.vector_of(bm25.doc_counts("cell " * 3), avgdl=10)
    assert long_doc.indices == sorted(long_doc.indices)
    weight = dict(zip(short_doc.indices, short_doc.values, strict=True))
    long_weight = dict(zip(long_doc.indices, long_doc.values, strict=True))
    cell = q.indices[0]
    assert weight[cell] > long_weight[cell]  # length normalisation
    assert weight[cell] < bm25.k1 + 1  # saturation


def test_chinese_terms_are_words_in_new_collections_and_bigrams_in_older_ones() -> None:
    """New collections index Chinese as jieba's search-mode words (the shorter words of a
    long one too), older ones keep the bigrams they were built with; kana and Hangul
    (and a Japanese text's kanji) stay bigrams; Latin words around them are unchanged."""
    from agent_search.kb._store import bm25_of

    words = analyze("链条多久上一次油", cjk="words")
    assert "链条" in words and "多久" in words and "条多" not in words
    assert {"中华", "人民", "共和", "共和国"} <= set(analyze("中华人民共和国", cjk="words"))
    assert analyze("Running 检索测试abc", cjk="words") == ["run", "abc", "检索", "测试"]
    assert analyze("한국어", cjk="words") == ["한국", "국어"]
    assert analyze("東京のホテル", cjk="words") == analyze("東京のホテル")  # Japanese
    settings = KBSettings()
    assert settings.cjk_terms == "words"
    assert bm25_of({}, settings).cjk == "words"  # a collection about to be created
    older = {"bm25": {"k1": 1.2, "b": 0.75, "language": "english", "avgdl": 90.0}}
    assert bm25_of(older, settings).cjk == "bigrams"
    newer = {"bm25": {**older["bm25"], "cjk": "words"}}
    assert bm25_of(newer, KBSettings(cjk_terms="bigrams")).cjk == "words"
    # the collection's CJK terms stay out of the BM25 repr ingest hashes into each chunk
    assert repr(bm25_of(older, settings)) == repr(bm25_of(newer, settings))
    query = BM25(cjk="words").query_vector("链条多久上一次油")
    doc = BM25(cjk="words").doc_counts("自行车链条多久上一次油比较好")
    assert set(query.indices) <= set(doc.ids.tolist())


def test_filters_translate_to_both_engines() -> None:
    from agent_search.kb._store._server import to_models

    flt = to_filter([
        QueryWhere(field="type", op="=", value="md"),
        QueryWhere.model_validate({"or": [{"field": "page", "op": ">=", "value": 2},
                                          {"field": "source", "op": "in", "value": ["a", "b"]}]}),
        QueryWhere(field="year", op="between", value=[2000, 2010]),
        QueryWhere(field="lang", op="is null"),
    ])
    assert flt == Group(must=(
        Match("meta.type", "md"),
        Group(should=(Range("meta.page", gte=2.0), MatchAny("source", ("a", "b")))),
        Range("meta.year", gte=2000.0, lte=2010.0), IsNull("meta.lang")))
    qm = to_models(flt)
    assert qm is not None
    first, group, between, null = qm.must  # type: ignore[misc]
    assert first == models.FieldCondition(key="meta.type", match=models.MatchValue(value="md"))
    assert group.should[1] == models.FieldCondition(key="source",
                                                    match=models.MatchAny(any=["a", "b"]))
    assert between.range == models.Range(gte=2000, lte=2010)
    assert null.is_null.key == "meta.lang"
    assert indexed_fields(flt) == {"meta.type": "keyword", "meta.page": "float",
                                   "source": "keyword", "meta.year": "float"}
    assert to_filter([]) is None
    with pytest.raises(FilterError, match="needs a number"):
        to_filter([QueryWhere(field="x", op=">", value="ten")])


def test_settings_errors_name_the_key() -> None:
    with pytest.raises(ConfigError, match=r"kb\.chunk_tokens"):
        KBSettings.from_config(SearchConfig(kb={"chunk_tokens": 1}))
    with pytest.raises(ConfigError, match=r"kb\.colour"):
        KBSettings.from_config(SearchConfig(kb={"colour": "blue"}))
    with pytest.raises(ConfigError, match="embedding_url"):
        KBSettings.from_config(SearchConfig(kb={"embedding_provider": "openai"}))
    assert KBSettings.from_config(SearchConfig()).mode == "hybrid"
