"""Ingestion: files → documents → chunks → dense + BM25 vectors → Qdrant points.

Identity and idempotency: a document's identity is its canonical source — the file's
resolved path relative to the *source root* (``kb.source_root``, default the folder that
holds the data home, i.e. the project), or the absolute resolved path for a file outside
it — plus, for a BEIR corpus, the record's ``_id``. A point's id is derived from the
collection, that source, the document id and the chunk's position: a 63-bit integer in
collections created since integer ids (``point_ids: u64`` in the collection's metadata,
:data:`POINT_IDS`), the UUID it was taken from in older ones (which keep them, so a
re-ingest never duplicates). Its payload keeps a hash of what was embedded. So
``README.md``, ``./README.md`` and ``/abs/README.md`` are one document, and re-ingesting
re-embeds only chunks whose text changed, overwrites them in place and deletes the chunks
the file no longer has. The report counts chunks *added*, *updated*, *unchanged* and
*removed*. Points written before source keys (ids from the path as typed) are found by
their old document id or path forms and replaced on re-ingest.

Bounded: a file over ``kb.max_file_mb`` and the files beyond ``kb.max_run_mb`` of one run
are skipped and reported before they are read; text files are streamed (see
:mod:`agent_search.kb._loaders`), chunks are produced lazily and go through embedding and
writing in rounds of :data:`EMBED_BATCH`, so memory does not grow with the input. A new
collection's BM25 average length is taken from its first :data:`AVGDL_SAMPLE` chunks.
``progress(done, total)`` reports bytes of input.

Unreadable or empty files are reported in :attr:`IngestReport.skipped` and the rest goes
on; parser warnings are in :attr:`IngestReport.warnings`. Collection names starting with
``eval-`` are reserved for ``eval retrieval`` (see :mod:`agent_search.kb._store`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import resource
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from agent_search.config import SearchConfig
from agent_search.errors import InputError
from agent_search.kb._chunking import Chunk, TokenCounter, approx_tokens, iter_chunks
from agent_search.kb._embedder import Embedder, get_embedder
from agent_search.kb._filters import Group, IndexKind, IsNull, Match, MatchAny
from agent_search.kb._loaders import (
    Document,
    Skipped,
    iter_files,
    legacy_file_doc_id,
    load_file,
    source_key,
)
from agent_search.kb._local import LocalEmbedder
from agent_search.kb._sparse import BM25, TermCounts
from agent_search.kb._store import (
    KBStore,
    PointData,
    check_collection_name,
    get_store,
    is_eval_collection,
    scroll_all,
)
from agent_search.kb._tenancy import ACL_INDEXES, ACL_OWNER, ACL_TEAM, Access
from agent_search.kb.settings import KBSettings

if TYPE_CHECKING:
    from agent_search.context import Context

ProgressCallback = Callable[[int, int], None]
"""``progress(bytes_done, bytes_total)`` of the input, called from worker threads."""

_ID_NAMESPACE = uuid.UUID("6f1c1b2e-55a4-4b8e-9a57-3f0f7f0c2a11")
EMBED_BATCH = 256  # chunks per embed + upsert round (bounds memory, paces progress)
AVGDL_SAMPLE = 4096  # chunks a new collection's BM25 average length is estimated from
GRAPH_FLUSH_CHARS = 8_000_000  # graph updates are applied in rounds of this much text
ID_SCHEME = 2  # payload "id_scheme" of points keyed by source key (absent: legacy ids)
POINT_IDS = "u64"
"""The point-id type of collections created now (metadata ``point_ids``): integers cost
the engine and the store's Python side less than UUIDs (~330 of them per hybrid search).
A collection without the key holds UUIDs and keeps them."""
MB = 1_000_000


class CollectionMismatchError(InputError):
    """A collection was built with other embedding or BM25 settings than the current ones."""


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
    bm25 = meta.get("bm25") or {}
    return BM25(k1=float(bm25.get("k1", settings.bm25_k1)), b=float(bm25.get("b", settings.bm25_b)),
                language=str(bm25.get("language", settings.language)))


def embed_text(title: str | None, chunk: Chunk) -> str:
    """What is embedded and indexed for a chunk: its document title and heading path give
    the chunk the context a reader would have."""
    parts = [p for p in (title, " > ".join(chunk.headings)) if p]
    return "\n".join([*parts, chunk.text])


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


def _owner_scope(access: Access) -> Group:
    """The chunks of the same owner and team (null when none): an ingest's own chunks."""
    return Group(must=(Match(ACL_OWNER, access.owner) if access.owner else IsNull(ACL_OWNER),
                       Match(ACL_TEAM, access.team) if access.team else IsNull(ACL_TEAM)))


def source_hashes(store: KBStore, name: str, source: str,
                  access: Access | None = None) -> dict[str, str]:
    """Point id → content hash of the chunks ingested from ``source`` (by that owner)."""
    parts: list[Any] = [Match("source", source)]
    if access is not None:
        parts.append(_owner_scope(access))
    return {r.id: str(r.payload.get("content_hash", "")) for r in scroll_all(
        store, name, Group(must=tuple(parts)), payload=["content_hash"])}


def has_legacy_points(store: KBStore, name: str, scheme: int) -> bool:
    """True when some point lacks ``id_scheme == scheme`` (written by an older ingest)."""
    records, _ = store.scroll(name, Group(must_not=(Match("id_scheme", scheme),)), limit=1,
                              offset=None, payload=False, vectors=False)
    return bool(records)


def legacy_points(store: KBStore, name: str, scheme: int, sources: list[str],
                  document_id: str) -> list[str]:
    """Ids of points of an older ingest (no ``id_scheme == scheme``) whose source is one
    of ``sources`` or whose document id is ``document_id``."""
    flt = Group(should=(MatchAny("source", tuple(sources)), Match("document_id", document_id)),
                must_not=(Match("id_scheme", scheme),))
    return [r.id for r in scroll_all(store, name, flt, payload=False)]


@dataclass(slots=True)
class _Pending:
    pid: str
    doc_id: str
    source: str
    title: str | None
    chunk: Chunk
    text: str
    digest: str
    terms: TermCounts
    progress: int  # input bytes done once this chunk is written


@dataclass(frozen=True, slots=True)
class _Planned:
    path: Path
    key: str
    size: int


_COLLECTION_LOCKS: dict[tuple[int, str], threading.Lock] = {}
_COLLECTION_LOCKS_GUARD = threading.Lock()


def _collection_lock(store: KBStore, name: str) -> threading.Lock:
    with _COLLECTION_LOCKS_GUARD:
        return _COLLECTION_LOCKS.setdefault((id(store), name), threading.Lock())


def source_root(settings: KBSettings, home: Path) -> Path:
    """The folder sources are named relative to: ``kb.source_root``, else the folder that
    holds the data home (the project)."""
    if settings.source_root:
        return Path(settings.source_root).expanduser().resolve()
    return home.resolve().parent


async def ingest_paths(config: SearchConfig, paths: Sequence[str | Path], collection: str, *,
                       graph: bool | None = None,
                       progress: ProgressCallback | None = None,
                       evaluation: bool = False, access: Access | None = None,
                       ctx: Context | None = None) -> IngestReport:
    """Ingest files and folders into ``collection`` (created on first use).

    ``access`` says who may read the documents (:class:`~agent_search.kb._tenancy.Access`);
    without it, the identity of ``ctx`` owns them (owner = its user, shared with its
    team), and without either they are public.
    ``graph`` (default ``config.kb.graph``) also updates the collection's entity graph.
    Returns what was done; bad or oversized files are in ``report.skipped``. Raises
    ``ValueError`` for a bad or reserved collection name (``eval-…`` is for
    ``evaluation=True``, i.e. ``eval retrieval``) or settings that do not match the
    collection, and :class:`~agent_search.kb._store.StoreError` when the store cannot be
    opened.
    """
    check_collection_name(collection)
    if is_eval_collection(collection) and not evaluation:
        raise ValueError(f"collection names starting with 'eval-' are reserved for "
                         f"'agent-search eval retrieval': {collection!r}")
    settings = KBSettings.from_config(config)
    use_graph = settings.graph if graph is None else graph
    if access is None:
        access = Access.of(ctx.user_id, ctx.team_id) if ctx is not None else Access.of()
    return await anyio.to_thread.run_sync(
        _ingest_sync, config.home, settings, [Path(p) for p in paths], collection, use_graph,
        progress, access)


def _plan(paths: list[Path], root: Path, settings: KBSettings,
          report: IngestReport) -> list[_Planned]:
    """The files to read, each once (by source key), within the size caps; the rest are
    reported as skipped before anything is read."""
    max_file = int(settings.max_file_mb * MB)
    max_run = int(settings.max_run_mb * MB)
    planned: list[_Planned] = []
    seen: set[str] = set()
    run_bytes = 0
    for item in iter_files(paths):
        if isinstance(item, Skipped):
            report.skipped.append(item)
            continue
        try:
            key = source_key(item, root)
            size = item.stat().st_size
        except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
            report.skipped.append(Skipped(str(item), f"cannot read: {exc}"))
            continue
        if key in seen:
            continue
        seen.add(key)
        if size > max_file:
            report.skipped.append(Skipped(str(item), (
                f"file is {size / MB:.1f} MB, over the per-file cap of "
                f"{settings.max_file_mb:g} MB (kb.max_file_mb)")))
        elif run_bytes + size > max_run:
            report.skipped.append(Skipped(str(item), (
                f"over the per-run cap of {settings.max_run_mb:g} MB (kb.max_run_mb); "
                "ingest it in another run")))
        else:
            run_bytes += size
            planned.append(_Planned(item, key, size))
    return planned


def _token_counter(embedder: Embedder) -> TokenCounter:
    if not isinstance(embedder, LocalEmbedder):
        return approx_tokens
    tokenizer = embedder.tokenizer
    # without offsets: half the time of encode_batch for the same ids
    encode = getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)

    def count(texts: Sequence[str]) -> list[int]:
        return [len(e.ids) for e in encode(list(texts), add_special_tokens=False)]

    return count


def _ingest_sync(home: Path, settings: KBSettings, paths: list[Path], collection: str,
                 use_graph: bool, progress: ProgressCallback | None,
                 access: Access) -> IngestReport:
    started = time.perf_counter()
    report = IngestReport(collection)
    store = get_store(settings, home)
    embedder = get_embedder(settings, home)
    planned = _plan(paths, source_root(settings, home), settings, report)
    total = sum(p.size for p in planned)
    if progress is not None:
        progress(0, total)
    with _collection_lock(store, collection):
        exists = store.exists(collection)
        meta = store.info(collection).meta if exists else {}
        if exists:
            check_compatible(collection, meta, embedder, settings)
        writer = _Writer(store, collection, settings, embedder, meta if exists else None,
                         report, progress, total, home if use_graph else None, access)
        legacy = exists and meta.get("id_scheme") != ID_SCHEME \
            and has_legacy_points(store, collection, ID_SCHEME)
        done = 0
        try:
            for planned_file in planned:
                _ingest_file(planned_file, store, collection, settings, embedder, writer,
                             report, exists, legacy, done)
                done += planned_file.size
                report.bytes_read = done
                if progress is not None:
                    progress(done, total)
        except BaseException:
            writer.abort()
            raise
        writer.finish()
        if writer.created or exists:
            t0 = time.perf_counter()
            store.settle(collection)
            report.store_seconds += time.perf_counter() - t0
        if exists and meta.get("id_scheme") != ID_SCHEME \
                and not has_legacy_points(store, collection, ID_SCHEME):
            store.update_meta(collection, {**store.info(collection).meta,
                                           "id_scheme": ID_SCHEME})
    report.seconds = time.perf_counter() - started
    report.peak_rss_mb = peak_rss_mb()
    return report


def _ingest_file(planned: _Planned, store: KBStore, collection: str, settings: KBSettings,
                 embedder: Embedder, writer: _Writer, report: IngestReport, exists: bool,
                 legacy: bool, done_before: int) -> None:
    """Stream one file's chunks into the writer; then delete what the file no longer has
    (and its points under legacy ids)."""
    path, key = planned.path, planned.key
    t0 = time.perf_counter()
    known = source_hashes(store, collection, key, writer.access) if exists else {}
    report.store_seconds += time.perf_counter() - t0
    fresh: set[str] = set()
    produced = False
    skipped_before = len(report.skipped)
    count = _token_counter(embedder)
    report.files += 1
    consumed = 0
    for doc in load_file(path, key, max_chars=int(settings.max_file_mb * MB)):
        if isinstance(doc, Skipped):
            report.skipped.append(doc)
            continue
        documented = False
        for chunk in iter_chunks(doc, count, max_tokens=settings.chunk_tokens,
                                 overlap=settings.chunk_overlap):
            if not documented:
                report.documents += 1
                documented = produced = True
            report.chunks += 1
            consumed += len(chunk.text)
            pid = point_id(collection, key, doc.doc_id, chunk.index, writer.access,
                           kind=writer.id_kind)
            text = embed_text(doc.title, chunk)
            digest = hashlib.sha1(
                f"{embedder.model_id}\x00{writer.bm25}\x00{doc.title}\x00{text}"
                f"{writer.access_key}".encode()).hexdigest()
            fresh.add(pid)
            old = known.get(pid)
            if old == digest:
                report.unchanged += 1
                continue
            if old is None:
                report.added += 1
            else:
                report.updated += 1
            writer.add(_Pending(pid, doc.doc_id, key, doc.title, chunk, text, digest,
                                writer.bm25.doc_counts(text),
                                done_before + min(consumed, planned.size)))
        report.warnings.extend(Skipped(str(path), w) for w in _warnings(doc))
    if not produced and len(report.skipped) == skipped_before:
        report.skipped.append(Skipped(str(path), "no text"))
    stale = [pid for pid in known if pid not in fresh]
    if legacy:
        seen = set(stale) | fresh
        stale.extend(pid for pid in legacy_points(
            store, collection, ID_SCHEME, _path_forms(path), legacy_file_doc_id(path))
            if pid not in seen)
    if stale:
        writer.remove(stale)
        report.removed += len(stale)


def _warnings(doc: Document) -> list[str]:
    return list(doc.warnings)


def _path_forms(path: Path) -> list[str]:
    """How the old id scheme may have recorded this file's source: as typed, absolute,
    resolved, or relative to the working directory."""
    forms = {str(path), str(path.absolute()), str(path.resolve())}
    with contextlib.suppress(ValueError):  # another drive (Windows)
        forms.add(os.path.relpath(path.resolve()))
    return sorted(forms)


class _Writer:
    """Embeds and writes chunks in rounds of :data:`EMBED_BATCH`: while round N is written
    (sparse vectors, points, and local mode's upsert, which commits to sqlite once per
    point and mostly waits for the disk), round N + 1 is embedded; at most one round waits
    to be written. A new collection is created once :data:`AVGDL_SAMPLE` chunks (or all,
    if fewer) are known, with their mean BM25 length."""

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
        self.pending: list[_Pending] = []
        self.removed: list[str] = []
        self.graph_chunks: list[tuple[str, str, str]] = []
        self.graph_chars = 0
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="kb-ingest-write")
        self.writing: Future[None] | None = None

    def add(self, item: _Pending) -> None:
        self.pending.append(item)
        if self.meta is None and len(self.pending) < AVGDL_SAMPLE:
            return  # still sampling the new collection's average length
        self._ensure_collection()
        while len(self.pending) >= EMBED_BATCH:
            batch, self.pending = self.pending[:EMBED_BATCH], self.pending[EMBED_BATCH:]
            self._embed_and_write(batch)

    def remove(self, ids: list[str]) -> None:
        """Delete points (the collection exists: only known points are removed)."""
        self.store.delete(self.collection, ids)
        if self.graph_home is not None:
            self.removed.extend(ids)

    def abort(self) -> None:
        """Stop after the round being written (an error elsewhere ends the ingest)."""
        self.pending = []
        self.pool.shutdown(wait=True)

    def finish(self) -> None:
        try:
            if self.pending:
                self._ensure_collection()
                batch, self.pending = self.pending, []
                self._embed_and_write(batch)
            if self.writing is not None:
                self.writing.result()
                self.writing = None
            self._flush_graph(force=True)
        finally:
            self.pool.shutdown(wait=True)

    def _ensure_collection(self) -> None:
        if self.meta is not None:
            return
        lengths = [p.terms.length for p in self.pending]
        self.avgdl = sum(lengths) / len(lengths) if lengths else 1.0
        probe = self.embedder.embed([self.pending[0].text])  # learns a remote model's size
        meta = collection_meta(self.settings, self.embedder, self.avgdl)
        self.store.create(self.collection, int(probe.shape[1]), meta, BASE_INDEXES)
        self.meta = meta
        self.created = True

    def _embed_and_write(self, batch: list[_Pending]) -> None:
        t0 = time.perf_counter()
        vectors = self.embedder.embed([p.text for p in batch])
        self.report.embed_seconds += time.perf_counter() - t0
        if self.writing is not None:
            self.writing.result()
        self.writing = self.pool.submit(self._write, batch, vectors)
        if self.graph_home is not None:
            self.graph_chunks.extend((p.pid, p.doc_id, p.text) for p in batch)
            self.graph_chars += sum(len(p.text) for p in batch)
            self._flush_graph(force=False)

    def _write(self, batch: list[_Pending], vectors: Any) -> None:
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
        from agent_search.kb._graph import update_graph

        update_graph(self.graph_home, self.collection, self.graph_chunks, removed=self.removed)
        self.graph_chunks, self.removed, self.graph_chars = [], [], 0


def _payload(p: _Pending) -> dict[str, Any]:
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
        "meta": {"source": p.source, "type": Path(p.source).suffix.lstrip(".")},
    }


async def list_collections(config: SearchConfig) -> list[dict[str, Any]]:
    """Every collection with its point count and recorded settings; ``evaluation`` is true
    for the collections of ``eval retrieval`` (which default searches never read)."""
    settings = KBSettings.from_config(config)

    def _list() -> list[dict[str, Any]]:
        store = get_store(settings, config.home)
        out = []
        for name in store.collections():
            info = store.info(name)
            out.append({"name": name, "points": info.points, **info.meta,
                        "evaluation": is_eval_collection(name)})
        return out

    return await anyio.to_thread.run_sync(_list)


async def drop_collection(config: SearchConfig, collection: str) -> bool:
    """Delete a collection and its graph; False when it did not exist."""
    check_collection_name(collection)
    settings = KBSettings.from_config(config)
    return await anyio.to_thread.run_sync(_drop_sync, settings, config.home, collection)


def _drop_sync(settings: KBSettings, home: Path, collection: str) -> bool:
    store = get_store(settings, home)
    with _collection_lock(store, collection):
        dropped = store.drop(collection)
        from agent_search.kb._graph import graph_path

        gpath = graph_path(home, collection)
        if gpath.exists():
            gpath.unlink()
            dropped = True
        return dropped


async def prune_eval_collections(config: SearchConfig) -> list[str]:
    """Delete every ``eval retrieval`` collection (``eval-…``); the names dropped."""
    settings = KBSettings.from_config(config)

    def _prune() -> list[str]:
        store = get_store(settings, config.home)
        names = [n for n in store.collections() if is_eval_collection(n)]
        return [n for n in names if _drop_sync(settings, config.home, n)]

    return await anyio.to_thread.run_sync(_prune)


