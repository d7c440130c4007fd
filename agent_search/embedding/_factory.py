"""Which embedder a configuration or a collection gets: an offline model (all-MiniLM-L6-v2,
English, :mod:`agent_search.embedding._minilm`; multilingual-e5-small, ~100 languages,
:mod:`agent_search.embedding._multilingual_e5`) or an OpenAI-compatible endpoint
(:mod:`agent_search.embedding._endpoint`); at most :data:`MAX_EMBEDDERS` kept loaded.

Models are loaded once per embedder, lazily, and the calls are synchronous: callers run
them in a worker thread (``anyio.to_thread.run_sync``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from agent_search.embedding import _minilm, _multilingual_e5
from agent_search.embedding._endpoint import OpenAIEmbedder
from agent_search.embedding._local import EmbeddingError, Vectors
from agent_search.embedding._minilm import FastEmbedder, prepare_model_dir
from agent_search.embedding._models import DEFAULT_MODEL, E5_MODEL, EmbeddingSettings

__all__ = [
    "MAX_EMBEDDERS",
    "Embedder",
    "OfflineModel",
    "embedder_for_collection",
    "get_embedder",
    "model_builds",
    "model_prepared",
    "shipped_embedder",
]


def model_builds() -> list[str]:
    """The offline models' folder patterns, which name how each model is built: what
    depends on a build (an eval collection) keys itself by them."""
    return [_minilm.MODEL_FOLDER, _multilingual_e5.MODEL_FOLDER]


class Embedder(Protocol):
    """Turns texts into unit-length vectors. ``model_id`` and ``dimensions`` are recorded
    in each collection so a later ingest or search with another model fails clearly."""

    model_id: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> Vectors: ...

    def embed_query(self, text: str) -> Vectors: ...


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
        folder = _multilingual_e5.MODEL_FOLDER.format(tokens=settings.max_tokens)
        return (home / "models" / folder / "encoder.onnx").is_file()
    folder = _minilm.MODEL_FOLDER.format(kind=_minilm.model_kind(settings.int8),
                                         tokens=settings.max_tokens)
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
                e5_dir = _multilingual_e5.prepare_e5_dir(home, settings.max_tokens)
                found = _multilingual_e5.E5Embedder(e5_dir, batch_size=settings.batch_size,
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
