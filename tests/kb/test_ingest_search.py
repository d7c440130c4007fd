"""Ingest real files into real Qdrant local mode with the real model, then search."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_search import Context, QueryWhere, Request, SearchConfig, Searcher
from agent_search.kb import create_handler, drop_collection, ingest_paths, list_collections

pytestmark = pytest.mark.anyio


async def _search(config: SearchConfig, query: str, **fields: object):  # type: ignore[no-untyped-def]
    handler = create_handler(config)
    request = Request(type="kb", query=query, limit=fields.pop("limit", 5), **fields)  # type: ignore[arg-type]
    return await handler.search(Context(config=config), request)


async def test_ingest_reports_files_chunks_and_speed(config: SearchConfig, docs: Path) -> None:
    report = await ingest_paths(config, [docs], "docs")
    assert report.files == 3 and report.documents == 3
    assert report.chunks >= 5  # headings split the Markdown file into sections
    assert report.embedded == report.chunks and report.skipped == []
    assert report.docs_per_s > 0 and report.peak_rss_mb > 0
    rows = await list_collections(config)
    assert [r["name"] for r in rows] == ["docs"]
    assert rows[0]["points"] == report.chunks
    assert rows[0]["dimensions"] == 384
    assert rows[0]["embedding_model"].startswith("sentence-transformers/all-MiniLM-L6-v2")


@pytest.mark.parametrize("mode", ["hybrid", "dense", "sparse"])
async def test_each_mode_finds_the_right_document(config: SearchConfig, docs: Path,
                                                  mode: str) -> None:
    await ingest_paths(config, [docs], "docs")
    result = await _search(config, "how long should spaghetti boil", collections=["docs"],
                           options={"mode": mode})
    assert result.error is None
    top = result.items[0]
    assert top.type == "kb" and top.collection == "docs"
    assert top.metadata["source"].endswith("pasta.txt")
    assert top.document_id and top.content and top.title == "pasta"
    assert isinstance(top.metadata["chunk_index"], int)
    assert all(0.0 <= i.score <= 1.0 for i in result.items)
    assert [i.score for i in result.items] == sorted((i.score for i in result.items), reverse=True)


async def test_paraphrase_found_by_dense_and_exact_term_by_sparse(config: SearchConfig,
                                                                  docs: Path) -> None:
    await ingest_paths(config, [docs], "docs")
    dense = await _search(config, "insects communicating the location of food",
                          options={"mode": "dense"})
    assert dense.items[0].metadata["source"].endswith("bees.html")
    assert dense.items[0].metadata["headings"] == ["Honey bees", "Waggle dance"]
    sparse = await _search(config, "DBSF", options={"mode": "sparse"})
    assert len(sparse.items) == 1 and "Distribution-Based" in sparse.items[0].content
    assert sparse.items[0].metadata["headings"] == ["Qdrant", "Hybrid queries"]


async def test_markdown_headings_are_chunk_metadata(config: SearchConfig, docs: Path) -> None:
    await ingest_paths(config, [docs], "docs")
    result = await _search(config, "one process may open a storage folder", limit=1)
    item = result.items[0]
    assert item.metadata["headings"] == ["Qdrant", "Local mode"]
    assert item.title == "Qdrant › Local mode"  # document title › nearest heading


async def test_threshold_limit_and_trace(config: SearchConfig, docs: Path) -> None:
    """A threshold only cuts: the same ranking, less of it. Each cut is one of the
    ranking's own scores, so what it keeps is known by construction, whatever scores this
    CPU's model build gives: the test asked for exactly one item above ``top - 1e-6``,
    which held only while the first score stood clear of the second."""
    await ingest_paths(config, [docs], "docs")
    searcher = Searcher(config)
    searcher.registry.register(create_handler(config))
    ctx = searcher.context()
    everything = await searcher.search(Request(type="kb", query="honey bees", limit=20),
                                       ctx=ctx)
    ranked = [(i.content, i.score) for i in everything.items]
    assert everything.error is None and len(ranked) >= 2
    for cut in sorted({score for _, score in ranked}, reverse=True):
        high = await searcher.search(Request(type="kb", query="honey bees", limit=20,
                                             threshold=cut), ctx=ctx)
        assert [(i.content, i.score) for i in high.items] == [
            (content, score) for content, score in ranked if score >= cut], cut
    if ranked[0][1] + 1e-6 <= 1.0:
        above = await searcher.search(Request(type="kb", query="honey bees", limit=20,
                                              threshold=ranked[0][1] + 1e-6), ctx=ctx)
        assert above.items == [] and above.error is None
    one = await searcher.search(Request(type="kb", query="honey bees", limit=1), ctx=ctx)
    assert len(one.items) == 1 and one.items[0].citation_id
    names = {n.name for n in ctx.trace.find("embedding") + ctx.trace.find("vector_search")}
    assert names == {"embedding", "vector_search"}


async def test_several_collections_in_one_request(config: SearchConfig, docs: Path) -> None:
    await ingest_paths(config, [docs / "pasta.txt"], "food")
    await ingest_paths(config, [docs / "bees.html"], "nature")
    result = await _search(config, "honey bee colony queen", collections=["food", "nature"])
    assert result.error is None
    assert {i.collection for i in result.items} == {"food", "nature"}
    assert result.items[0].collection == "nature"


async def test_missing_collection_is_an_error_naming_it(config: SearchConfig,
                                                        docs: Path) -> None:
    await ingest_paths(config, [docs], "docs")
    result = await _search(config, "pasta", collections=["docs", "nope"])
    assert result.items == [] and result.error is not None and "'nope'" in result.error


async def test_empty_kb_gives_empty_result(config: SearchConfig) -> None:
    result = await _search(config, "anything at all")
    assert result.error is None and result.items == []


async def test_default_collections_come_from_config(home: Path, docs: Path) -> None:
    config = SearchConfig(home=home, kb={"collections": ["nature"]})
    await ingest_paths(config, [docs / "pasta.txt"], "food")
    await ingest_paths(config, [docs / "bees.html"], "nature")
    result = await _search(config, "cooking")
    assert {i.collection for i in result.items} == {"nature"}


async def test_metadata_filters(config: SearchConfig, docs: Path) -> None:
    await ingest_paths(config, [docs], "docs")
    only_md = await _search(config, "queen bees and pasta", limit=10,
                            wheres=[QueryWhere(field="type", op="=", value="md")])
    assert only_md.items and all(i.metadata["type"] == "md" for i in only_md.items)
    either = await _search(config, "queen bees and pasta", limit=10, wheres=[
        QueryWhere.model_validate({"or": [{"field": "type", "value": "txt"},
                                          {"field": "metadata.type", "value": "html"}]})])
    assert {i.metadata["type"] for i in either.items} == {"txt", "html"}
    first_chunks = await _search(config, "qdrant", limit=10,
                                 wheres=[QueryWhere(field="chunk_index", op="<", value=1)])
    assert first_chunks.items and all(i.metadata["chunk_index"] == 0
                                      for i in first_chunks.items)


async def test_bad_mode_and_filter_are_errors(config: SearchConfig, docs: Path) -> None:
    await ingest_paths(config, [docs], "docs")
    bad_mode = await _search(config, "x", options={"mode": "fuzzy"})
    assert bad_mode.error is not None and "fuzzy" in bad_mode.error
    bad_filter = await _search(config, "x", wheres=[QueryWhere(field="n", op=">", value="a")])
    assert bad_filter.error is not None and "number" in bad_filter.error


@pytest.mark.parametrize("query", ["🙂🍝 pasta", "蜜蜂的舞蹈", "x " * 8000])
async def test_unusual_queries_work(config: SearchConfig, docs: Path, query: str) -> None:
    await ingest_paths(config, [docs], "docs")
    result = await _search(config, query)
    assert result.error is None


async def test_chinese_text_is_searchable(config: SearchConfig, tmp_path: Path) -> None:
    folder = tmp_path / "zh"
    folder.mkdir()
    (folder / "a.txt").write_text("蜜蜂通过摇摆舞告诉同伴花的位置。", encoding="utf-8")
    (folder / "b.txt").write_text("意大利面要在盐水中煮九分钟。", encoding="utf-8")
    await ingest_paths(config, [folder], "zh")
    result = await _search(config, "摇摆舞", options={"mode": "sparse"})
    assert result.items[0].metadata["source"].endswith("a.txt")


async def test_drop_removes_the_collection(config: SearchConfig, docs: Path) -> None:
    await ingest_paths(config, [docs], "docs")
    assert await drop_collection(config, "docs") is True
    assert await drop_collection(config, "docs") is False
    assert await list_collections(config) == []
    result = await _search(config, "pasta", collections=["docs"])
    assert result.error is not None and "'docs'" in result.error
