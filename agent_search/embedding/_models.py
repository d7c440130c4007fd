"""The offline models by name, and what an embedder is configured by.

The settings are a protocol, not a model class: the kb's :class:`~agent_search.kb.KBSettings`
carries them among its own keys (``kb.embedding_model``, ``kb.max_tokens``…), and the
parser builds one for its schema linking, so this package needs no part of the kb."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
E5_MODEL = "intfloat/multilingual-e5-small"
OFFLINE_MODELS = {name.rsplit("/", 1)[-1].lower(): name for name in (DEFAULT_MODEL, E5_MODEL)}
"""The offline models by their short names too (``kb.embedding_model: multilingual-e5-small``)."""

Settings = TypeVar("Settings", bound="EmbeddingSettings")


class EmbeddingSettings(Protocol):
    """What picks and shapes an embedder; a pydantic model with these fields fits."""

    @property
    def embedding_provider(self) -> str: ...
    @property
    def embedding_model(self) -> str: ...
    @property
    def embedding_url(self) -> str | None: ...
    @property
    def embedding_dimensions(self) -> int | None: ...
    @property
    def max_tokens(self) -> int: ...
    @property
    def batch_size(self) -> int: ...
    @property
    def int8(self) -> str: ...
    @property
    def embed_workers(self) -> int | None: ...
    @property
    def model_fields_set(self) -> set[str]: ...

    def model_copy(self: Settings, *, update: Mapping[str, Any] | None = None,
                   deep: bool = False) -> Settings: ...
