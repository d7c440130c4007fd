"""The write side of an ingest: chunks are embedded and written in rounds, a new collection
is created from the first of them, and the entity graph follows (see :class:`Writer`).
Also the report an ingest returns (:class:`IngestReport`)."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_search.embedding import Embedder
from agent_search.kb._ingest._chunking import CHUNKER, Chunk
from agent_search.kb._ingest._loaders import Skipped
from agent_search.kb._store import (
    BASE_INDEXES,
    ID_SCHEME,
    Access,
    KBStore,
    PointData,
    TermCounts,
    bm25_of,
    collection_meta,
    point_id_kind,
)
from agent_search.kb.settings import KBSettings

ProgressCallback = Callable[[int, int], None]
"""``progress(bytes_done, bytes_total)`` of the input, called from worker threads."""

EMBED_BATCH = 256  # chunks per embed + upsert round (bounds memory, paces progress)
EMBED_AHEAD = 2  # rounds embedding or embedded, not yet written, once the collection exists
AVGDL_SAMPLE = 4096  # chunks a new collection's BM25 average length is estimated from
GRAPH_FLUSH_CHARS = 8_000_000  # graph updates are applied in rounds of this much text


@dataclass(slots=True)
class IngestReport:
    collection: str
    files: int = 0
    documents: int = 0
    chunks: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[Skipped] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # sources removed: their file is gone
    bytes_read: int = 0
    seconds: float = 0.0
    embed_seconds: float = 0.0
    store_seconds: float = 0.0  # in the store: writes, deletes, reads of known chunks
    peak_rss_mb: float = 0.0

    @property
    def embedded(self) -> int:
        """Chunks embedded and written (added + updated)."""
        return self.added + self.updated

    @property
    def deleted(self) -> int:
        return self.removed

    @property
    def docs_per_s(self) -> float:
        return self.documents / self.seconds if self.seconds > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "collection": self.collection, "files": self.files, "documents": self.documents,
            "chunks": self.chunks, "added": self.added, "updated": self.updated,
            "unchanged": self.unchanged, "removed": self.removed, "embedded": self.embedded,
            "bytes_read": self.bytes_read, "seconds": round(self.seconds, 3),
            "docs_per_s": round(self.docs_per_s, 2), "peak_rss_mb": round(self.peak_rss_mb, 1),
            "embed_seconds": round(self.embed_seconds, 3),
            "store_seconds": round(self.store_seconds, 3),
            "skipped": [{"source": s.source, "reason": s.reason} for s in self.skipped],
            "warnings": [{"source": w.source, "message": w.reason} for w in self.warnings],
            "missing": list(self.missing),
        }


@dataclass(slots=True)
class Pending:
    pid: str
    doc_id: str
    source: str
    title: str | None
    chunk: Chunk
    text: str
    digest: str
    terms: TermCounts
    progress: int  # input bytes done once this chunk is written
    ocr: bool = False  # its text was read by OCR (a scan, a photo of a page)


class Writer:
    """Embeds and writes chunks in rounds of :data:`EMBED_BATCH`, in three stages side by
    side: the caller's thread reads, chunks and analyses the files and hands each round
    to a thread that embeds it (over the embedder's sessions), whose vectors go to a
    thread that writes them (sparse vectors, points). Reading and chunking no longer wait
    for the embedding (they took ~3% of an ingest's wall time with both cores idle but
    one). Bounded: at most :data:`EMBED_AHEAD` rounds are embedding or waiting to be
    written, and one is written at a time. A new collection is created once
    :data:`AVGDL_SAMPLE` chunks (or all, if fewer) are known, with their mean BM25
    length; the rounds embedded before then wait for it (they are those chunks)."""

    def __init__(self, store: KBStore, collection: str, settings: KBSettings,
                 embedder: Embedder, meta: dict[str, Any] | None, report: IngestReport,
                 progress: ProgressCallback | None, total: int, graph_home: Path | None,
                 access: Access) -> None:
        self.store = store
        self.access = access
        # in the content hash: new access rewrites the chunks (public keeps the hashes of
        # earlier versions, so a migrated store re-ingests as unchanged)
        self.access_key = "" if access == Access.of() else f"\x00{access}"
        self.collection = collection
        self.settings = settings
        self.embedder = embedder
        self.meta = meta
        self.report = report
        self.progress = progress
        self.total = total
        self.graph_home = graph_home
        self.bm25 = bm25_of(meta or {}, settings)
        self.avgdl = float(((meta or {}).get("bm25") or {}).get("avgdl") or 0.0)
        self.id_kind = point_id_kind(meta)
        self.created = False
        self.pending: list[Pending] = []
        self.sample: list[int] = []  # a new collection's first chunks' BM25 lengths
        self.rounds: deque[tuple[list[Pending], Future[Any]]] = deque()  # embedding
        self.removed: list[str] = []
        self.graph_chunks: list[tuple[str, str, str]] = []
        self.graph_chars = 0
        self.embedding = ThreadPoolExecutor(1, thread_name_prefix="kb-ingest-embed")
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="kb-ingest-write")
        self.writing: Future[None] | None = None

    def add(self, item: Pending) -> None:
        self.pending.append(item)
        if self.meta is None:
            self.sample.append(item.terms.length)
        if len(self.pending) >= EMBED_BATCH:
            batch, self.pending = self.pending[:EMBED_BATCH], self.pending[EMBED_BATCH:]
            self._embed(batch)
        if self.meta is None and len(self.sample) >= AVGDL_SAMPLE:
            self._ensure_collection()
        self._hand_over(wait=False)

    def remove(self, ids: list[str]) -> None:
        """Delete points (the collection exists: only known points are removed)."""
        self.store.delete(self.collection, ids)
        if self.graph_home is not None:
            self.removed.extend(ids)

    def abort(self) -> None:
        """Stop after the rounds being embedded and written (an error elsewhere ends the
        ingest)."""
        self.pending = []
        self.rounds.clear()
        self.embedding.shutdown(wait=True, cancel_futures=True)
        self.pool.shutdown(wait=True)

    def finish(self) -> None:
        try:
            # the last round, whatever its size (a round is not sent at each scanned
            # file's end: on two cores its embedding then ran beside the parser child's
            # OCR, and the Chinese scans of make bench-ocr took ~30 % longer)
            if self.pending:
                batch, self.pending = self.pending, []
                self._embed(batch)
            if self.rounds:
                self._ensure_collection()
            self._hand_over(wait=True)
            if self.writing is not None:
                self.writing.result()
                self.writing = None
            self._flush_graph(force=True)
        finally:
            self.embedding.shutdown(wait=True, cancel_futures=True)
            self.pool.shutdown(wait=True)

    def _ensure_collection(self) -> None:
        if self.meta is not None:
            return
        self.avgdl = sum(self.sample) / len(self.sample) if self.sample else 1.0
        # the first round's vectors give the model's size (a remote model's is learnt)
        dimensions = int(self.rounds[0][1].result().shape[1]) if self.rounds else \
            int(self.embedder.embed([self.pending[0].text]).shape[1])
        meta = {**collection_meta(self.settings, self.embedder, self.avgdl),
                "chunker": CHUNKER}
        self.store.create(self.collection, dimensions, meta, BASE_INDEXES)
        self.meta = meta
        self.created = True
        self.sample = []

    def _embed(self, batch: list[Pending]) -> None:
        """Queue a round for embedding; once the collection exists, first hand the oldest
        round over to the writer while :data:`EMBED_AHEAD` are queued (bounded memory)."""
        while self.meta is not None and len(self.rounds) >= EMBED_AHEAD:
            self._hand_over(wait=True, rounds=1)
        self.rounds.append((batch, self.embedding.submit(self._vectors, batch)))

    def _vectors(self, batch: list[Pending]) -> Any:
        t0 = time.perf_counter()
        vectors = self.embedder.embed([p.text for p in batch])
        self.report.embed_seconds += time.perf_counter() - t0
        return vectors

    def _hand_over(self, *, wait: bool, rounds: int | None = None) -> None:
        """Give embedded rounds, oldest first, to the writer (one written at a time):
        those done, or with ``wait`` the next ``rounds`` (all by default) once done."""
        if self.meta is None:
            return  # the collection is created from the first chunks: they wait for it
        handed = 0
        while self.rounds and (wait or self.rounds[0][1].done()) \
                and (rounds is None or handed < rounds):
            batch, future = self.rounds.popleft()
            vectors = future.result()
            if self.writing is not None:
                self.writing.result()
            self.writing = self.pool.submit(self._write, batch, vectors)
            handed += 1
            if self.graph_home is not None:
                self.graph_chunks.extend((p.pid, p.doc_id, p.text) for p in batch)
                self.graph_chars += sum(len(p.text) for p in batch)
                self._flush_graph(force=False)

    def _write(self, batch: list[Pending], vectors: Any) -> None:
        access = self.access.payload()
        points = [PointData(p.pid, vec.tolist(), self.bm25.vector_of(p.terms, self.avgdl),
                            {**_payload(p), **access})
                  for p, vec in zip(batch, vectors, strict=True)]
        t0 = time.perf_counter()
        self.store.upsert(self.collection, points)
        self.report.store_seconds += time.perf_counter() - t0
        if self.progress is not None:
            self.progress(batch[-1].progress, self.total)

    def _flush_graph(self, *, force: bool) -> None:
        if self.graph_home is None or not (force or self.graph_chars >= GRAPH_FLUSH_CHARS):
            return
        if not self.graph_chunks and not self.removed:
            return
        from agent_search.kb._retrieval import update_graph

        update_graph(self.graph_home, self.collection, self.graph_chunks, removed=self.removed)
        self.graph_chunks, self.removed, self.graph_chars = [], [], 0


def _payload(p: Pending) -> dict[str, Any]:
    return {
        "document_id": p.doc_id,
        "source": p.source,
        "title": p.title,
        "content": p.chunk.text,
        "chunk_index": p.chunk.index,
        "headings": list(p.chunk.headings),
        "page": p.chunk.page,
        "content_hash": p.digest,
        "id_scheme": ID_SCHEME,
        "meta": {"source": p.source, "type": Path(p.source).suffix.lstrip("."),
                 **({"extraction": "ocr"} if p.ocr else {})},
    }
