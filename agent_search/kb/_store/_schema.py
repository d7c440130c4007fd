"""The schema of a collection: what its metadata records, when a collection is compatible
with the current settings, and how points are named.

A collection records the embedding model and dimension, the BM25 parameters its sparse
vectors were computed with, the chunking, and the type of its point ids
(:func:`collection_meta`); :func:`check_compatible` refuses to mix other vectors in, and
:func:`bm25_of` gives the BM25 a collection was built with. Ingest writes by these rules,
the kb handler and the migration read by them; this module depends on neither.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from agent_search.embedding import Embedder
from agent_search.errors import InputError
from agent_search.kb._store._filters import IndexKind
from agent_search.kb._store._sparse import BM25
from agent_search.kb._store._tenancy import ACL_INDEXES, Access

if TYPE_CHECKING:
    from agent_search.kb.settings import KBSettings

_ID_NAMESPACE = uuid.UUID("6f1c1b2e-55a4-4b8e-9a57-3f0f7f0c2a11")
ID_SCHEME = 2  # payload "id_scheme" of points keyed by source key (absent: legacy ids)
UPLOAD_PREFIX = "upload:"
"""The sources of documents sent as text (:mod:`agent_search.kb._uploads`): ``upload:<name>``
(a file's source is a relative path or an absolute one, never this)."""


def twin_source(source: str) -> str:
    """The other source one file may have: ``upload:notes/a.md`` (sent by ``kb ingest
    notes --server``, which names a folder's files as a local ingest does) for
    ``notes/a.md`` (read from the disk), and back. One file is one document however it
    was sent: an ingest under one replaces the caller's document under the other."""
    if source.startswith(UPLOAD_PREFIX):
        return source[len(UPLOAD_PREFIX):]
    return UPLOAD_PREFIX + source
POINT_IDS = "u64"
"""The point-id type of collections created now (metadata ``point_ids``): integers cost
the engine and the store's Python side less than UUIDs (~330 of them per hybrid search).
A collection without the key holds UUIDs and keeps them."""


class CollectionMismatchError(InputError):
    """A collection was built with other embedding or BM25 settings than the current ones."""


def collection_meta(settings: KBSettings, embedder: Embedder, avgdl: float) -> dict[str, Any]:
    return {
        "embedding_model": embedder.model_id,
        "dimensions": embedder.dimensions,
        # how to embed queries for this collection, whatever the current settings say
        "embedding": {"provider": settings.embedding_provider,
                      "model": settings.embedding_model, "url": settings.embedding_url,
                      "max_tokens": settings.max_tokens, "int8": settings.int8},
        "bm25": {"k1": settings.bm25_k1, "b": settings.bm25_b, "language": settings.language,
                 "cjk": settings.cjk_terms, "avgdl": avgdl},
        "chunk_tokens": settings.chunk_tokens,
        "chunk_overlap": settings.chunk_overlap,
        "id_scheme": ID_SCHEME,
        "point_ids": POINT_IDS,
    }


def point_id_kind(meta: dict[str, Any] | None) -> str:
    """``"u64"`` or ``"uuid"``: the point ids of a collection (``None``: one not created
    yet, which gets :data:`POINT_IDS`)."""
    if meta is None:
        return POINT_IDS
    return "u64" if meta.get("point_ids") == "u64" else "uuid"


def check_compatible(name: str, meta: dict[str, Any], embedder: Embedder,
                     settings: KBSettings, *, bm25: bool = True) -> None:
    """Refuse to mix vectors of another model or BM25 of other parameters in a collection."""
    model = meta.get("embedding_model")
    dims = meta.get("dimensions")
    if model is not None and model != embedder.model_id:
        raise CollectionMismatchError(
            f"collection {name!r} was built with embedding model {model!r}, not "
            f"{embedder.model_id!r}; re-ingest it into a new collection")
    if dims is not None and embedder.dimensions and int(dims) != embedder.dimensions:
        raise CollectionMismatchError(
            f"collection {name!r} holds {dims}-d vectors but the embedding model gives "
            f"{embedder.dimensions}-d; re-ingest it into a new collection")
    recorded = (meta.get("bm25") or {}) if bm25 else {}
    for key, value in (("k1", settings.bm25_k1), ("b", settings.bm25_b),
                       ("language", settings.language)):
        if key in recorded and recorded[key] != value:
            raise CollectionMismatchError(
                f"collection {name!r} was built with BM25 {key}={recorded[key]!r}, "
                f"not {value!r}")


def bm25_of(meta: dict[str, Any], settings: KBSettings) -> BM25:
    """The BM25 of a collection (``meta``), or of one about to be created (``{}``). A
    collection created before its CJK terms were recorded has bigrams."""
    bm25 = meta.get("bm25") or {}
    cjk = bm25.get("cjk") or ("bigrams" if bm25 else settings.cjk_terms)
    return BM25(k1=float(bm25.get("k1", settings.bm25_k1)), b=float(bm25.get("b", settings.bm25_b)),
                language=str(bm25.get("language", settings.language)), cjk=str(cjk))


BASE_INDEXES: dict[str, IndexKind] = {"source": "keyword", "document_id": "keyword",
                                      **ACL_INDEXES}
"""Payload indexes every collection gets at creation (the filters ingest and tenancy use)."""


def point_id(collection: str, source: str, doc_id: str, index: int,
             access: Access | None = None, *, kind: str = POINT_IDS) -> str:
    """A chunk's id: a UUID (``kind="uuid"``) hashed from its identity, or (``"u64"``)
    that UUID's top 63 bits as a decimal string (below 2**63, so any client's signed
    64-bit integer holds it; a collision needs ~3·10**9 chunks for even odds). A
    document owned by a user or team is another document than the same file ingested
    by someone else (or as public): they never overwrite each other."""
    owned = access is not None and (access.owner is not None or access.team is not None)
    scope = f"\x00{access.owner or ''}\x00{access.team or ''}" if owned and access else ""
    key = uuid.uuid5(_ID_NAMESPACE, f"{collection}\x00{source}\x00{doc_id}\x00{index}{scope}")
    return str(key.int >> 65) if kind == "u64" else str(key)
