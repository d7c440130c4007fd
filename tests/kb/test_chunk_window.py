"""Chunks fit the model: what is embedded for a chunk — its page's title, its heading
path and its text, with the model's own [CLS] and [SEP] — is within the model's window
(256 tokens of all-MiniLM-L6-v2), counted by its tokenizer; the end of a longer input is
never read by the model. A collection chunked by the older rules is re-chunked by the
next ingest, which says so."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from agent_search import SearchConfig
from agent_search.embedding import get_embedder
from agent_search.kb import ingest_paths
from agent_search.kb._ingest import CHUNKER, Block, Document, embedded_prefix
from agent_search.kb._ingest._chunking import chunk_document
from agent_search.kb._store import get_store, scroll_all
from agent_search.kb.settings import KBSettings


def _words(texts: Sequence[str]) -> list[int]:
    return [len(t.split()) for t in texts]


def _page(path: int) -> Document:
    headings = tuple(f"Heading {i} of a deep reference page on replication" for i in
                     range(path))
    prose = " ".join(f"Sentence {i} says what a replica does." for i in range(200))
    return Document("d", "p.md", "Replication: how copies follow the primary",
                    [Block(prose, headings)])


@pytest.mark.parametrize("path", [0, 1, 4])
def test_title_path_and_text_fit_the_window(path: int) -> None:
    doc = _page(path)
    chunks = chunk_document(doc, _words, max_tokens=256, overlap=32, window=256)
    assert len(chunks) > 3
    for chunk in chunks:
        prefix = embedded_prefix(doc.title, chunk.headings)
        assert _words([prefix])[0] + _words([chunk.text])[0] + 2 <= 256
    # the text alone used to fill the chunk: with a title and a path it overflowed
    old = chunk_document(doc, _words, max_tokens=256, overlap=32)
    assert max(_words([c.text])[0] for c in old) > 256 - 2 - _words([doc.title or ""])[0]


def test_a_path_too_long_still_leaves_room_for_text() -> None:
    doc = _page(40)  # the path alone is over the window
    chunks = chunk_document(doc, _words, max_tokens=256, overlap=32, window=256)
    assert all(_words([c.text])[0] >= 1 for c in chunks)
    assert max(_words([c.text])[0] for c in chunks) <= 256 // 4


@pytest.mark.anyio
async def test_ingested_chunks_fit_the_model_and_old_ones_are_rechunked(
        config: SearchConfig, tmp_path: Path) -> None:
    heads = "\n\n".join(f"{'#' * (i + 2)} Section {i} on snapshots, persistence and "
                        f"the append-only file" for i in range(4))
    prose = " ".join(f"The server writes snapshot number {i} to disk in a child process "
                     "while it keeps answering clients." for i in range(120))
    page = tmp_path / "persistence.md"
    page.write_text(f"# Persistence of the dataset on disk\n\n{heads}\n\n{prose}\n",
                    encoding="utf-8")
    settings = KBSettings.from_config(config)
    report = await ingest_paths(config, [page], "docs")
    assert report.chunks > 3 and not report.warnings
    store = get_store(settings, config.home)
    tokenizer = get_embedder(settings, config.home).tokenizer  # type: ignore[attr-defined]
    for record in scroll_all(store, "docs"):
        p = record.payload
        text = f"{embedded_prefix(p['title'], p['headings'])}\n{p['content']}"
        assert len(tokenizer.encode(text).ids) <= settings.max_tokens  # specials included
    assert store.info("docs").meta["chunker"] == CHUNKER
    # a collection of the older rules: the next ingest re-chunks and says so, once
    meta = dict(store.info("docs").meta)
    del meta["chunker"]
    store.update_meta("docs", meta)
    again = await ingest_paths(config, [page], "docs")
    assert any("re-chunked" in w.reason for w in again.warnings)
    assert store.info("docs").meta["chunker"] == CHUNKER
    third = await ingest_paths(config, [page], "docs")
    assert not third.warnings and third.unchanged == third.chunks
