"""Text embeddings, offline (all-MiniLM-L6-v2, multilingual-e5-small through onnxruntime)
or from an OpenAI-compatible endpoint: the kb embeds its chunks and questions with them,
the parser links a question's words to a schema's names by meaning.

    embedder = get_embedder(settings, home)         # settings: EmbeddingSettings
    vectors = embedder.embed(["a passage", "another"])

Names are imported on first use (``agent_search._lazy``): the constants and the settings
protocol cost nothing, the models' libraries load with the first embedder."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_search._lazy import lazy_exports

if TYPE_CHECKING:
    from agent_search.embedding._endpoint import OpenAIEmbedder
    from agent_search.embedding._factory import (
        MAX_EMBEDDERS,
        Embedder,
        embedder_for_collection,
        get_embedder,
        model_builds,
        model_prepared,
        shipped_embedder,
    )
    from agent_search.embedding._local import (
        EmbeddingError,
        LocalEmbedder,
        Vectors,
        default_workers,
    )
    from agent_search.embedding._minilm import FastEmbedder, prepare_model_dir
    from agent_search.embedding._model_choice import CJK_SHARE, choose_model, cjk_share
    from agent_search.embedding._models import (
        DEFAULT_MODEL,
        E5_MODEL,
        OFFLINE_MODELS,
        EmbeddingSettings,
    )
    from agent_search.embedding._multilingual_e5 import E5Embedder, prepare_e5_dir
    from agent_search.embedding._vector_cache import VectorCache

_HOME = {
    "CJK_SHARE": "_model_choice", "DEFAULT_MODEL": "_models", "E5Embedder": "_multilingual_e5",
    "E5_MODEL": "_models", "Embedder": "_factory", "EmbeddingError": "_local",
    "MAX_EMBEDDERS": "_factory",
    "EmbeddingSettings": "_models", "FastEmbedder": "_minilm", "LocalEmbedder": "_local",
    "OFFLINE_MODELS": "_models", "OpenAIEmbedder": "_endpoint", "Vectors": "_local",
    "choose_model": "_model_choice", "cjk_share": "_model_choice",
    "default_workers": "_local", "embedder_for_collection": "_factory",
    "get_embedder": "_factory", "model_builds": "_factory", "model_prepared": "_factory",
    "prepare_e5_dir": "_multilingual_e5", "prepare_model_dir": "_minilm",
    "shipped_embedder": "_factory", "VectorCache": "_vector_cache",
}
"""Where each public name lives."""

__getattr__, __dir__ = lazy_exports(__name__, _HOME)

__all__ = [
    "CJK_SHARE",
    "DEFAULT_MODEL",
    "E5_MODEL",
    "MAX_EMBEDDERS",
    "OFFLINE_MODELS",
    "E5Embedder",
    "Embedder",
    "EmbeddingError",
    "EmbeddingSettings",
    "FastEmbedder",
    "LocalEmbedder",
    "OpenAIEmbedder",
    "VectorCache",
    "Vectors",
    "choose_model",
    "cjk_share",
    "default_workers",
    "embedder_for_collection",
    "get_embedder",
    "model_builds",
    "model_prepared",
    "prepare_e5_dir",
    "prepare_model_dir",
    "shipped_embedder",
]
