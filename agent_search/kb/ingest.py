"""Ingestion: files → documents → chunks → dense + BM25 vectors → Qdrant points.

Idempotent: a point's id is derived from the collection, the source file, the document id
and the chunk's position; its payload keeps a hash of what was embedded. Re-ingesting a
file re-embeds only chunks whose text changed, overwrites them in place and deletes the
chunks the file no longer has, so nothing is ever duplicated. Unreadable or empty files
are reported in :attr:`IngestReport.skipped` and the rest goes on.
"""

from __future__ import annotations

import hashlib
import resource
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from agent_search.config import SearchConfig
from agent_search.kb.chunking import Chunk, TokenCounter, approx_tokens, chunk_document
from agent_search.kb.embedder import Embedder, FastEmbedder, Vectors, get_embedder
from agent_search.kb.loaders import Document, Skipped, iter_files, load_file
from agent_search.kb.settings import KBSettings
from agent_search.kb.sparse import BM25
from agent_search.kb.store import DENSE, SPARSE, KBStore, check_collection_name, get_store

ProgressCallback = Callable[[int, int], None]
"""``progress(chunks_done, chunks_total)``, called from worker threads."""

_ID_NAMESPACE = uuid.UUID("6f1c1b2e-55a4-4b8e-9a57-3f0f7f0c2a11")
EMBED_BATCH = 256  # chunks per embed + upsert round (bounds memory, paces progress)


class CollectionMismatchError(ValueError):
    """A collection was built with other embedding or BM25 settings than the current ones."""


@dataclass(slots=True)
class IngestReport:
    collection: str
    files: int = 0
    documents: int = 0
    chunks: int = 0
    embedded: int = 0
    unchanged: int = 0
    deleted: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    seconds: float = 0.0
    embed_seconds: float = 0.0
    peak_rss_mb: float = 0.0

    @property
    def docs_per_s(self) -> float:
        return self.documents / self.seconds if self.seconds > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "collection": self.collection, "files": self.files, "documents": self.documents,
            "chunks": self.chunks, "embedded": self.embedded, "unchanged": self.unchanged,
            "deleted": self.deleted, "seconds": round(self.seconds, 3),
            "docs_per_s": round(self.docs_per_s, 2), "peak_rss_mb": round(self.peak_rss_mb, 1),
            "skipped": [{"source": s.source, "reason": s.reason} for s in self.skipped],
        }


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def collection_meta(settings: KBSettings, embedder: Embedder, avgdl: float) -> dict[str, Any]:
    return {
        "embedding_model": embedder.model_id,
        "dimensions": embedder.dimensions,
        # how to embed queries for this collection, whatever the current settings say
        "embedding": {"provider": settings.embedding_provider,
                      "model": settings.embedding_model, "url": settings.embedding_url,
                      "max_tokens": settings.max_tokens, "int8": settings.int8},
        "bm25": {"k1": settings.bm25_k1, "b": settings.bm25_b, "language": settings.language,
                 "avgdl": avgdl},
        "chunk_tokens": settings.chunk_tokens,
        "chunk_overlap": settings.chunk_overlap,
    }


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
    bm25 = meta.get("bm25") or {}
    return BM25(k1=float(bm25.get("k1", settings.bm25_k1)), b=float(bm25.get("b", settings.bm25_b)),
                language=str(bm25.get("language", settings.language)))


def embed_text(title: str | None, chunk: Chunk) -> str:
    """What is embedded and indexed for a chunk: its document title and heading path give
    the chunk the context a reader would have."""
    parts = [p for p in (title, " > ".join(chunk.headings)) if p]
    return "\n".join([*parts, chunk.text])


def point_id(collection: str, source: str, doc_id: str, index: int) -> str:
    return str(uuid.uuid5(_ID_NAMESPACE, f"{collection}\x00{source}\x00{doc_id}\x00{index}"))


@dataclass(slots=True)
class _Pending:
    pid: str
    doc: Document
    chunk: Chunk
    text: str
    digest: str


_COLLECTION_LOCKS: dict[tuple[int, str], threading.Lock] = {}
_COLLECTION_LOCKS_GUARD = threading.Lock()


def _collection_lock(store: KBStore, name: str) -> threading.Lock:
    with _COLLECTION_LOCKS_GUARD:
        return _COLLECTION_LOCKS.setdefault((id(store), name), threading.Lock())


async def ingest_paths(config: SearchConfig, paths: Sequence[str | Path], collection: str, *,
                       graph: bool | None = None,
                       progress: ProgressCallback | None = None) -> IngestReport:
    """Ingest files and folders into ``collection`` (created on first use).

    ``graph`` (default ``config.kb.graph``) also updates the collection's entity graph.
    Returns what was done; bad files are in ``report.skipped``. Raises ``ValueError`` for a
    bad collection name or settings that do not match the collection, and
    :class:`~agent_search.kb.store.StoreError` when the store cannot be opened.
    """
    check_collection_name(collection)
    settings = KBSettings.from_config(config)
    use_graph = settings.graph if graph is None else graph
    return await anyio.to_thread.run_sync(
        _ingest_sync, config.home, settings, [Path(p) for p in paths], collection, use_graph,
        progress)


def _ingest_sync(home: Path, settings: KBSettings, paths: list[Path], collection: str,
                 use_graph: bool, progress: ProgressCallback | None) -> IngestReport:
    started = time.perf_counter()
    report = IngestReport(collection)
    store = get_store(settings, home)
    embedder = get_embedder(settings, home)
    count: TokenCounter = approx_tokens
    if isinstance(embedder, FastEmbedder):
        tokenizer = embedder.tokenizer
        # without offsets: half the time of encode_batch for the same ids
        encode = getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)

        def count(texts: Sequence[str]) -> list[int]:
            return [len(e.ids) for e in encode(list(texts), add_special_tokens=False)]

    by_source: dict[str, list[tuple[Document, list[Chunk]]]] = {}
    for item in iter_files(paths):
        if isinstance(item, Skipped):
            report.skipped.append(item)
            continue
        report.files += 1
        produced = False
        for doc in load_file(item):
            if isinstance(doc, Skipped):
                report.skipped.append(doc)
                continue
            chunks = chunk_document(doc, count, max_tokens=settings.chunk_tokens,
                                    overlap=settings.chunk_overlap)
            if chunks:
                by_source.setdefault(str(item), []).append((doc, chunks))
                produced = True
        if not produced and not any(s.source.startswith(str(item)) for s in report.skipped):
            report.skipped.append(Skipped(str(item), "no text"))

    with _collection_lock(store, collection):
        exists = store.exists(collection)
        meta = store.info(collection).meta if exists else {}
        if exists:
            check_compatible(collection, meta, embedder, settings)
        bm25 = bm25_of(meta, settings)
        pending: list[_Pending] = []
        stale: list[str] = []
        for source, docs in by_source.items():
            known = store.source_hashes(collection, source) if exists else {}
            fresh: set[str] = set()
            for doc, chunks in docs:
                report.documents += 1
                for chunk in chunks:
                    report.chunks += 1
                    pid = point_id(collection, source, doc.doc_id, chunk.index)
                    text = embed_text(doc.title, chunk)
                    digest = hashlib.sha1(
                        f"{embedder.model_id}\x00{bm25}\x00{doc.title}\x00{text}".encode()
                    ).hexdigest()
                    fresh.add(pid)
                    if known.get(pid) == digest:
                        report.unchanged += 1
                    else:
                        pending.append(_Pending(pid, doc, chunk, text, digest))
            stale.extend(pid for pid in known if pid not in fresh)

        # every chunk is analysed once; its term counts are kept compactly until written
        terms = [bm25.doc_counts(p.text) for p in pending]
        mean_length = sum(t.length for t in terms) / len(terms) if terms else 1.0
        if not exists:
            if not pending:
                report.seconds = time.perf_counter() - started
                report.peak_rss_mb = peak_rss_mb()
                return report
            avgdl = mean_length
            probe = embedder.embed([pending[0].text])  # learns the dimension of remote models
            meta = collection_meta(settings, embedder, avgdl)
            store.create(collection, int(probe.shape[1]), meta)
        avgdl = float((meta.get("bm25") or {}).get("avgdl") or mean_length)

        store.delete(collection, stale)
        report.deleted = len(stale)
        total = len(pending)
        if progress is not None:
            progress(0, total)

        def write(start: int, vectors: Vectors) -> None:
            from qdrant_client import models
            batch = pending[start:start + EMBED_BATCH]
            points = []
            for i, (p, vec) in enumerate(zip(batch, vectors, strict=True)):
                sparse = bm25.vector_of(terms[start + i], avgdl)
                points.append(models.PointStruct(
                    id=p.pid,
                    vector={DENSE: vec.tolist(),
                            SPARSE: models.SparseVector(indices=sparse.indices,
                                                        values=sparse.values)},
                    payload=_payload(p),
                ))
            store.upsert(collection, points)
            report.embedded += len(batch)
            if progress is not None:
                progress(report.embedded, total)

        # a pipeline of two stages: while round N is written (sparse vectors, points, and
        # local mode's upsert, which commits to sqlite once per point and mostly waits for
        # the disk), round N + 1 is embedded; at most one round waits to be written
        with ThreadPoolExecutor(1, thread_name_prefix="kb-ingest-write") as writer:
            writing: Future[None] | None = None
            for start in range(0, total, EMBED_BATCH):
                t0 = time.perf_counter()
                vectors = embedder.embed([p.text for p in pending[start:start + EMBED_BATCH]])
                report.embed_seconds += time.perf_counter() - t0
                if writing is not None:
                    writing.result()
                writing = writer.submit(write, start, vectors)
            if writing is not None:
                writing.result()

        if use_graph:
            from agent_search.kb.graph import update_graph

            update_graph(home, collection, [(p.pid, p.doc.doc_id, p.text) for p in pending],
                         removed=stale)
    report.seconds = time.perf_counter() - started
    report.peak_rss_mb = peak_rss_mb()
    return report


def _payload(p: _Pending) -> dict[str, Any]:
    return {
        "document_id": p.doc.doc_id,
        "source": p.doc.source,
        "title": p.doc.title,
        "content": p.chunk.text,
        "chunk_index": p.chunk.index,
        "headings": list(p.chunk.headings),
        "page": p.chunk.page,
        "content_hash": p.digest,
        "meta": {"source": p.doc.source, "type": Path(p.doc.source).suffix.lstrip(".")},
    }


async def list_collections(config: SearchConfig) -> list[dict[str, Any]]:
    """Every collection with its point count and recorded settings."""
    settings = KBSettings.from_config(config)

    def _list() -> list[dict[str, Any]]:
        store = get_store(settings, config.home)
        out = []
        for name in store.collections():
            info = store.info(name)
            out.append({"name": name, "points": info.points, **info.meta})
        return out

    return await anyio.to_thread.run_sync(_list)


async def drop_collection(config: SearchConfig, collection: str) -> bool:
    """Delete a collection and its graph; False when it did not exist."""
    check_collection_name(collection)
    settings = KBSettings.from_config(config)

    def _drop() -> bool:
        store = get_store(settings, config.home)
        with _collection_lock(store, collection):
            dropped = store.drop(collection)
            from agent_search.kb.graph import graph_path

            gpath = graph_path(config.home, collection)
            if gpath.exists():
                gpath.unlink()
                dropped = True
            return dropped

    return await anyio.to_thread.run_sync(_drop)
