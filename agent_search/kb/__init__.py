"""Knowledge-base search: embedded Qdrant, offline embeddings, hybrid dense + BM25
retrieval, ingestion, an entity graph and retrieval evaluation.

    handler = create_handler(config)               # type "kb"
    report = await ingest_paths(config, ["docs/"], "docs")
    await list_collections(config); await drop_collection(config, "docs")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_search._lazy import lazy_exports

if TYPE_CHECKING:
    from agent_search.kb._embedder import EmbeddingError, get_embedder, prepare_model_dir
    from agent_search.kb._manage import drop_collection, list_collections
    from agent_search.kb._schema import CollectionMismatchError
    from agent_search.kb._store import (
        CollectionNotFound,
        StoreError,
        StoreLockedError,
        close_stores,
    )
    from agent_search.kb._tenancy import Access
    from agent_search.kb.handler import KBHandler, create_handler
    from agent_search.kb.ingest import IngestReport, ingest_paths
    from agent_search.kb.settings import KBSettings

_HOME = {
    "Access": "_tenancy", "CollectionMismatchError": "_schema",
    "CollectionNotFound": "_store", "EmbeddingError": "_embedder", "IngestReport": "ingest",
    "KBHandler": "handler", "KBSettings": "settings", "StoreError": "_store",
    "StoreLockedError": "_store", "close_stores": "_store", "create_handler": "handler",
    "drop_collection": "_manage", "get_embedder": "_embedder", "ingest_paths": "ingest",
    "list_collections": "_manage", "prepare_model_dir": "_embedder",
}
"""Where each public name lives: imported on first use, so a process that needs one
module of the package (the parser process of :mod:`agent_search.kb._sandbox`) does not
load the embedding model's libraries."""


__getattr__, __dir__ = lazy_exports(__name__, _HOME)


__all__ = [
    "Access",
    "CollectionMismatchError",
    "CollectionNotFound",
    "EmbeddingError",
    "IngestReport",
    "KBHandler",
    "KBSettings",
    "StoreError",
    "StoreLockedError",
    "close_stores",
    "create_handler",
    "drop_collection",
    "get_embedder",
    "ingest_paths",
    "list_collections",
    "prepare_model_dir",
]
