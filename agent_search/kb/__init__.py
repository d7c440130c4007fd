"""Knowledge-base search: embedded Qdrant, offline embeddings, hybrid dense + BM25
retrieval, ingestion, an entity graph and retrieval evaluation.

    handler = create_handler(config)               # type "kb"
    report = await ingest_paths(config, ["docs/"], "docs")
    await list_collections(config); await drop_collection(config, "docs")

The package's parts are its sub-packages: :mod:`~agent_search.kb._store` (collections,
filters, schema, statistics, tenancy), :mod:`~agent_search.kb._ingest` (reading, chunking,
writing, admission) and :mod:`~agent_search.kb._retrieval` (scores, feedback, graph);
the public modules (``handler``, ``ingest``, ``settings``, ``evaluation``,
``calibrate``) and the documents' management (``_manage``, ``_uploads``) put them
together. The embedder is its own package, :mod:`agent_search.embedding`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_search._lazy import lazy_exports

if TYPE_CHECKING:
    from agent_search.embedding import EmbeddingError, get_embedder, prepare_model_dir
    from agent_search.kb._ingest import BINARY_SUFFIXES as BINARY_SUFFIXES
    from agent_search.kb._ingest import MAGIC as MAGIC
    from agent_search.kb._ingest import TEXT_SUFFIXES as TEXT_SUFFIXES
    from agent_search.kb._ingest import IngestBusy as IngestBusy
    from agent_search.kb._ingest import ProgressCallback as ProgressCallback
    from agent_search.kb._ingest import Skipped as Skipped
    from agent_search.kb._ingest import WriteTicket as WriteTicket
    from agent_search.kb._ingest import iter_files as iter_files
    from agent_search.kb._ingest import reserve_write as reserve_write
    from agent_search.kb._ingest import source_key as source_key
    from agent_search.kb._manage import check_offset as check_offset
    from agent_search.kb._manage import drop_collection, list_collections
    from agent_search.kb._manage import list_documents as list_documents
    from agent_search.kb._manage import list_documents_page as list_documents_page
    from agent_search.kb._manage import prune_eval_collections as prune_eval_collections
    from agent_search.kb._manage import remove_document as remove_document
    from agent_search.kb._manage import repair_collection as repair_collection
    from agent_search.kb._manage import source_root as source_root
    from agent_search.kb._store import UPLOAD_PREFIX as UPLOAD_PREFIX
    from agent_search.kb._store import (
        Access,
        CollectionMismatchError,
        CollectionNotFound,
        StoreError,
        StoreLockedError,
        close_stores,
    )
    from agent_search.kb._store import check_collection_name as check_collection_name
    from agent_search.kb._store import is_eval_collection as is_eval_collection
    from agent_search.kb._store import migrate as migrate
    from agent_search.kb._store import visibility as visibility
    from agent_search.kb._uploads import MAX_PART_BYTES as MAX_PART_BYTES
    from agent_search.kb._uploads import check_folder as check_folder
    from agent_search.kb._uploads import check_name as check_name
    from agent_search.kb._uploads import in_background as in_background
    from agent_search.kb._uploads import ingest_named_files as ingest_named_files
    from agent_search.kb._uploads import ingest_texts as ingest_texts
    from agent_search.kb._uploads import mirror_folder as mirror_folder
    from agent_search.kb._uploads import remove_own_document as remove_own_document
    from agent_search.kb._uploads import write_named as write_named
    from agent_search.kb.handler import KBHandler, create_handler
    from agent_search.kb.ingest import IngestReport, ingest_paths
    from agent_search.kb.settings import KBSettings

_PUBLIC = {
    "Access": "_store", "CollectionMismatchError": "_store",
    "CollectionNotFound": "_store", "EmbeddingError": "agent_search.embedding",
    "IngestReport": "ingest", "KBHandler": "handler", "KBSettings": "settings",
    "StoreError": "_store", "StoreLockedError": "_store", "close_stores": "_store",
    "create_handler": "handler", "drop_collection": "_manage",
    "get_embedder": "agent_search.embedding", "ingest_paths": "ingest",
    "list_collections": "_manage", "prepare_model_dir": "agent_search.embedding",
}
"""The documented API (``__all__``)."""

_PROJECT = {
    # the CLI and the HTTP service: documents, uploads, admission of writes
    "BINARY_SUFFIXES": "_ingest", "MAGIC": "_ingest", "TEXT_SUFFIXES": "_ingest",
    "IngestBusy": "_ingest", "ProgressCallback": "_ingest", "Skipped": "_ingest",
    "WriteTicket": "_ingest", "iter_files": "_ingest", "reserve_write": "_ingest",
    "source_key": "_ingest", "check_offset": "_manage", "list_documents": "_manage",
    "list_documents_page": "_manage", "prune_eval_collections": "_manage",
    "remove_document": "_manage", "repair_collection": "_manage", "source_root": "_manage",
    "UPLOAD_PREFIX": "_store", "check_collection_name": "_store",
    "is_eval_collection": "_store", "migrate": "_store", "visibility": "_store",
    "MAX_PART_BYTES": "_uploads", "check_folder": "_uploads",
    "check_name": "_uploads", "ingest_named_files": "_uploads", "ingest_texts": "_uploads",
    "mirror_folder": "_uploads", "remove_own_document": "_uploads",
    "write_named": "_uploads", "in_background": "_uploads",
}
"""What the project's other packages take from the kb (the CLI's ``kb`` commands, the
HTTP service's kb routes): importable from here, so they need none of the kb's private
modules, but not part of the documented API."""

__getattr__, __dir__ = lazy_exports(__name__, {**_PUBLIC, **_PROJECT})
"""Each name is imported on first use, so a process that needs one module of the package
(the parser process of :mod:`agent_search.kb._ingest._sandbox`) does not load the
embedding model's libraries."""


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
