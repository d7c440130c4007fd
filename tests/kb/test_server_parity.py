"""The Qdrant-server path (qdrant-client's local mode as the server, ``kb.url:
file://…``) passes the floors as the embedded store does and gives the same documents the
same hits and scores (issue 33 item 1: it had no collection statistics and fell back to
approximations)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_search import Request, SearchConfig, Searcher
from agent_search.kb import create_handler

from ..support.floor_notes import (
    CHINESE,
    CHINESE_OFF_TOPIC,
    CHINESE_QUESTIONS,
    ENGLISH,
    ENGLISH_OFF_TOPIC,
    ENGLISH_QUESTIONS,
    check_floors,
    ingest_notes,
)

pytestmark = pytest.mark.anyio


def _server(config: SearchConfig, tmp_path: Path) -> SearchConfig:
    return config.merged({"kb": {"url": f"file://{tmp_path / 'server'}",
                                 "embedding_model": "all-MiniLM-L6-v2"}})


async def test_the_floors_hold_on_the_server_path(config: SearchConfig,
                                                  tmp_path: Path) -> None:
    server = _server(config, tmp_path)
    await ingest_notes(server, tmp_path, "mixed", {**ENGLISH, **CHINESE})
    await check_floors(server, "mixed", {**ENGLISH_QUESTIONS, **CHINESE_QUESTIONS},
                       ENGLISH_OFF_TOPIC + CHINESE_OFF_TOPIC)


async def test_both_stores_give_the_same_hits_and_scores(config: SearchConfig,
                                                        tmp_path: Path) -> None:
    edge = config.merged({"kb": {"embedding_model": "all-MiniLM-L6-v2"}})
    server = _server(config, tmp_path)
    answers = []
    for cfg, folder in ((edge, tmp_path / "e"), (server, tmp_path / "s")):
        folder.mkdir()
        await ingest_notes(cfg, folder, "notes", ENGLISH)
        searcher = Searcher(cfg, handlers=[create_handler(cfg)])
        try:
            rows = []
            for question in [*ENGLISH_QUESTIONS, *ENGLISH_OFF_TOPIC]:
                for mode in ("hybrid", "sparse"):
                    result = await searcher.search(Request(
                        type="kb", query=question, collections=["notes"], limit=4,
                        options={"mode": mode, "min_score": 0.0}))
                    assert result.error is None, result.error
                    rows.append([(Path(str(i.metadata["source"])).name, i.score)
                                 for i in result.items])
            answers.append(rows)
        finally:
            await searcher.aclose()
    # the engines score in different float orders (~1e-6): the same hits, scores to 1e-4
    for mine, theirs in zip(*answers, strict=True):
        assert [s for s, _ in mine] == [s for s, _ in theirs]
        assert [x for _, x in mine] == pytest.approx([x for _, x in theirs], abs=1e-4)
