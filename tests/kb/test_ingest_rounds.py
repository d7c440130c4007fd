"""Ingest in rounds: chunks are read while earlier rounds are embedded and written, and a
new collection is created from its first chunks; what is stored does not depend on the
round size."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_search import SearchConfig
from agent_search.kb import ingest_paths
from agent_search.kb._ingest import _writer
from agent_search.kb._store import get_store, scroll_all
from agent_search.kb.settings import KBSettings

pytestmark = pytest.mark.anyio


def _stored(config: SearchConfig, name: str) -> dict[tuple[str, int], tuple[Any, ...]]:
    store = get_store(KBSettings.from_config(config), config.home)
    out = {}
    for r in scroll_all(store, name, vectors=True):
        assert r.dense is not None and r.sparse is not None
        out[(r.payload["source"], r.payload["chunk_index"])] = (
            r.payload["content"], r.payload["content_hash"], r.sparse.indices,
            [round(v, 6) for v in r.sparse.values])
    return out


async def test_small_rounds_store_what_one_round_stores(
        config: SearchConfig, docs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = await ingest_paths(config, [docs], "whole")
    monkeypatch.setattr(_writer, "EMBED_BATCH", 2)
    monkeypatch.setattr(_writer, "EMBED_AHEAD", 1)
    rounds = await ingest_paths(config, [docs], "rounds")
    assert rounds.chunks == whole.chunks > 4 and rounds.embedded == rounds.chunks
    assert _stored(config, "rounds") == _stored(config, "whole")


async def test_a_new_collection_waits_for_its_sample(
        config: SearchConfig, docs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rounds embedded before the collection exists are written once it does, with the
    average length of the first chunks."""
    monkeypatch.setattr(_writer, "EMBED_BATCH", 1)
    monkeypatch.setattr(_writer, "AVGDL_SAMPLE", 3)
    report = await ingest_paths(config, [docs], "sampled")
    assert report.embedded == report.chunks > 3
    assert len(_stored(config, "sampled")) == report.chunks
