"""Knowledge-base search: embedded Qdrant, offline embeddings, hybrid dense + BM25
retrieval, ingestion, an entity graph and retrieval evaluation.

    handler = create_handler(config)               # type "kb"
    report = await ingest_paths(config, ["docs/"], "docs")
    await list_collections(config); await drop_collection(config, "docs")
"""

from agent_search.kb._embedder import EmbeddingError, get_embedder, prepare_model_dir
from agent_search.kb._schema import CollectionMismatchError
from agent_search.kb._store import CollectionNotFound, StoreError, StoreLockedError, close_stores
from agent_search.kb._tenancy import Access
from agent_search.kb.handler import KBHandler, create_handler
from agent_search.kb.ingest import IngestReport, ingest_paths
from agent_search.kb.manage import drop_collection, list_collections
from agent_search.kb.settings import KBSettings

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
