"""Eval collections are reused only for the same corpus, settings and model build: a
collection embedded by an older graph of the same model id once scored a new build's
queries against the old build's documents (SciFact test hybrid 0.7386 for 0.7429)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_search.config import SearchConfig
from agent_search.embedding import _minilm, _multilingual_e5
from agent_search.kb.evaluation import collection_for
from agent_search.kb.settings import KBSettings


def test_a_new_model_build_gets_a_new_eval_collection(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "1", "text": "a"}\n', encoding="utf-8")
    settings = KBSettings.from_config(SearchConfig(home=tmp_path))
    first = collection_for(corpus, settings)
    assert collection_for(corpus, settings) == first
    monkeypatch.setattr(_minilm, "MODEL_FOLDER", _minilm.MODEL_FOLDER + "-next")
    second = collection_for(corpus, settings)
    monkeypatch.setattr(_multilingual_e5, "MODEL_FOLDER", _multilingual_e5.MODEL_FOLDER + "-next")
    assert len({first, second, collection_for(corpus, settings)}) == 3

