"""Relevance floors on a handful of notes (issues 24 and 26): the right note passes the
default floor, off-topic questions get nothing — in English, in Chinese, and in a
collection holding both."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_search import SearchConfig
from agent_search.kb import ingest_paths
from agent_search.kb._store import get_store
from agent_search.kb.settings import E5_MODEL, KBSettings

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


async def test_four_english_notes(config: SearchConfig, tmp_path: Path) -> None:
    await ingest_notes(config, tmp_path, "notes", ENGLISH)
    await check_floors(config, "notes", ENGLISH_QUESTIONS, ENGLISH_OFF_TOPIC)


def _minilm(config: SearchConfig) -> SearchConfig:
    """The English model named explicitly (else Chinese notes get the multilingual one)."""
    return config.merged({"kb": {"embedding_model": "all-MiniLM-L6-v2"}})


async def test_four_chinese_notes(config: SearchConfig, tmp_path: Path) -> None:
    config = _minilm(config)
    await ingest_notes(config, tmp_path, "zh-notes", CHINESE)
    await check_floors(config, "zh-notes", CHINESE_QUESTIONS, CHINESE_OFF_TOPIC)


async def test_a_collection_of_chinese_and_english_notes(config: SearchConfig,
                                                        tmp_path: Path) -> None:
    config = _minilm(config)
    await ingest_notes(config, tmp_path, "mixed", {**ENGLISH, **CHINESE})
    await check_floors(config, "mixed", {**ENGLISH_QUESTIONS, **CHINESE_QUESTIONS},
                       ENGLISH_OFF_TOPIC + CHINESE_OFF_TOPIC)


@pytest.mark.slow
async def test_four_chinese_notes_with_the_multilingual_model(e5_config: SearchConfig,
                                                              tmp_path: Path) -> None:
    await ingest_notes(e5_config, tmp_path, "zh-notes", CHINESE)
    await check_floors(e5_config, "zh-notes", CHINESE_QUESTIONS, CHINESE_OFF_TOPIC)


@pytest.mark.slow
async def test_chinese_and_english_notes_with_the_multilingual_model(
        e5_config: SearchConfig, tmp_path: Path) -> None:
    await ingest_notes(e5_config, tmp_path, "mixed", {**ENGLISH, **CHINESE})
    await check_floors(e5_config, "mixed", {**ENGLISH_QUESTIONS, **CHINESE_QUESTIONS},
                       ENGLISH_OFF_TOPIC + CHINESE_OFF_TOPIC)


@pytest.mark.slow
async def test_chinese_notes_get_the_multilingual_model_unasked(
        config: SearchConfig, e5_config: SearchConfig, tmp_path: Path) -> None:
    """No model configured: the first ingest samples the notes, picks the multilingual
    model and records it; later searches and ingests use it."""
    await ingest_notes(config, tmp_path, "zh-auto", CHINESE)
    settings = KBSettings.from_config(config)
    meta = get_store(settings, config.home).info("zh-auto").meta
    assert meta["embedding"]["model"] == E5_MODEL
    await ingest_paths(config, [tmp_path / "zh-auto"], "zh-auto")  # not refused
    await check_floors(config, "zh-auto", CHINESE_QUESTIONS, CHINESE_OFF_TOPIC)
