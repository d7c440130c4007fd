"""KBTextSearch over the real kb handler (embedded Qdrant, offline MiniLM embeddings)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from agent_search import SearchConfig, Searcher
from agent_search.textsearch import KBTextSearch, create_search_function, equal_to

pytestmark = pytest.mark.anyio


class Chunk(BaseModel):
    title: str | None = None
    content: str
    source: str
    document_id: str


async def test_kb_text_search_on_the_real_handler(tmp_path: Path) -> None:
    from agent_search.kb import close_stores, create_handler, ingest_paths

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "hybrid.md").write_text(
        "# Hybrid search\n\nHybrid search fuses dense vector retrieval with BM25 keyword "
        "retrieval, so exact terms and paraphrases are both found.\n")
    (docs / "pasta.md").write_text(
        "# Cooking pasta\n\nBoil salted water, add the pasta and cook it until al dente.\n")
    config = SearchConfig(home=tmp_path / "home")
    await ingest_paths(config, [docs], "docs")
    searcher = Searcher(config)
    searcher.registry.register(create_handler(config))
    try:
        kb = KBTextSearch(searcher, ["docs"], record_type=Chunk, link_field="source")
        records = await kb.get_search_results("combining keyword and vector retrieval",
                                              {"top": 1})
        assert isinstance(records.items[0], Chunk)
        assert records.items[0].source.endswith("hybrid.md")

        ctx = searcher.context()
        fn = create_search_function(kb, output_type="text_search_result")
        out = await fn.invoke({"query": "how do I cook pasta", "count": 1}, ctx)
        assert out[0]["link"].endswith("pasta.md") and out[0]["citation_id"] == "1"

        # the query matches both documents (pasta best); the filter keeps the other one
        only_hybrid = await kb.get_text_search_results(
            "cooking or keyword retrieval", {"top": 5, "filter": equal_to("document_id",
                                                     records.items[0].document_id)})
        assert {r.link for r in only_hybrid.items} == {records.items[0].source}
    finally:
        await searcher.aclose()
        close_stores()
