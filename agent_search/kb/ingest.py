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
:mod:`agent_search.kb._ingest._loaders`), chunks are produced lazily and go through embedding and
writing in rounds of :data:`EMBED_BATCH`, so memory does not grow with the input. A new
collection's BM25 average length is taken from its first :data:`AVGDL_SAMPLE` chunks.
``progress(done, total)`` reports bytes of input.

Unreadable or empty files are reported in :attr:`IngestReport.skipped` and the rest goes
on; parser warnings are in :attr:`IngestReport.warnings`. Collection names starting with
``eval-`` are reserved for ``eval retrieval`` (see :mod:`agent_search.kb._store._open`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import resource
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from agent_search.config import SearchConfig
from agent_search.embedding import Embedder, LocalEmbedder, choose_model, get_embedder
from agent_search.kb._ingest import (
    CHUNKER,
    PARSED_SUFFIXES,
    Chunk,
    Document,
    IngestReport,
    Limits,
    Pending,
    ProgressCallback,
    Skipped,
    TokenCounter,
    Writer,
    approx_tokens,
    embedded_prefix,
    is_text,
    iter_chunks,
    iter_files,
    legacy_file_doc_id,
    load_file,
    ocr_workers,
    source_key,
    write_turn,
)
from agent_search.kb._manage import (
    collection_lock,
    documents_in,
    owner_scope,
    source_root,
)
from agent_search.kb._store import (
    ID_SCHEME,
    UPLOAD_PREFIX,
    Access,
    CollectionMismatchError,
    Group,
    KBStore,
    Match,
    MatchAny,
    check_collection_name,
    check_compatible,
    get_store,
    is_eval_collection,
    point_id,
    scroll_all,
    twin_source,
)
from agent_search.kb.settings import KBSettings

if TYPE_CHECKING:
    from agent_search.context import Context
    from agent_search.kb._ingest import ParseSandbox

MB = 1_000_000

__all__ = ["CollectionMismatchError", "IngestReport", "ProgressCallback", "embed_text",
           "ingest_paths", "source_hashes", "source_root"]


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def embed_text(title: str | None, chunk: Chunk) -> str:
    """What is embedded and indexed for a chunk: its document title and heading path give
    the chunk the context a reader would have."""
    prefix = embedded_prefix(title, chunk.headings)
    return f"{prefix}\n{chunk.text}" if prefix else chunk.text


def source_hashes(store: KBStore, name: str, source: str,
                  access: Access | None = None) -> dict[str, str]:
    """Point id → content hash of the chunks ingested from ``source`` (by that owner)."""
    parts: list[Any] = [Match("source", source)]
    if access is not None:
        parts.append(owner_scope(access))
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


@dataclass(frozen=True, slots=True)
class _Planned:
    path: Path
    key: str
    size: int


async def ingest_paths(config: SearchConfig, paths: Sequence[str | Path], collection: str, *,
                       graph: bool | None = None,
                       progress: ProgressCallback | None = None,
                       evaluation: bool = False, access: Access | None = None,
                       ctx: Context | None = None, mirror: bool = True) -> IngestReport:
    """Ingest files and folders into ``collection`` (created on first use).

    A folder is mirrored (``mirror``, the default): the documents of the same owner whose
    source lies under it and whose file is gone are removed, and listed in
    ``report.missing``; ``mirror=False`` (``--keep-missing``) keeps them.

    ``access`` says who may read the documents (:class:`~agent_search.kb._store._tenancy.Access`);
    without it, the identity of ``ctx`` owns them (owner = its user, shared with its
    team), and without either they are public.
    ``graph`` (default ``config.kb.graph``) also updates the collection's entity graph.
    Returns what was done; bad or oversized files are in ``report.skipped``. Raises
    ``ValueError`` for a bad or reserved collection name (``eval-…`` is for
    ``evaluation=True``, i.e. ``eval retrieval``), for an ``access`` that is neither
    public nor owned (no one could read it), or settings that do not match the
    collection, and :class:`~agent_search.kb._store._open.StoreError` when the store cannot be
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
    if not access.public and access.owner is None and access.team is None:
        # readable by no one, and named like the public document: it would replace it
        raise ValueError("a document that is not public needs an owner or a team "
                         "(Access.of(owner, team, public=False))")
    # the collection's turn is awaited here, holding no worker thread (see _admission)
    async with write_turn(settings, config.home, collection, access,
                          bounded=False) as limiter:
        return await anyio.to_thread.run_sync(
            _ingest_sync, config.home, settings, [Path(p) for p in paths], collection,
            use_graph, progress, access, mirror, limiter=limiter)


def _plan(paths: list[Path], root: Path, settings: KBSettings, report: IngestReport,
          names: Mapping[Path, str] | None = None) -> list[_Planned]:
    """The files to read, each once (by source key: ``names`` gives it for files that are
    not where their document lives, e.g. uploads), within the size caps; the rest are
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
            key = names[item] if names and item in names else source_key(item, root)
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
                 access: Access, mirror: bool = True,
                 names: Mapping[Path, str] | None = None) -> IngestReport:
    """The ingest in a worker thread: plan the files, then under the collection's lock
    read and write them, mirror the folders, and settle the store."""
    started = time.perf_counter()
    report = IngestReport(collection)
    store = get_store(settings, home)
    root = source_root(settings, home)
    planned = _plan(paths, root, settings, report, names)
    total = sum(p.size for p in planned)
    if progress is not None:
        progress(0, total)
    with collection_lock(store, collection), _Reader(settings, planned) as reader:
        reader.start()  # the parser child's start-up overlaps the model's
        run = _Run.start(home, store, collection, settings, planned, report,
                         home if use_graph else None, access, progress, total)
        run.read(planned, reader)
        folders = [p for p in paths if p.is_dir()] if mirror and run.exists else []
        if folders:
            _remove_missing(store, collection, folders, root, run.writer, report)
        run.writer.finish()
        run.settle()
    report.seconds = time.perf_counter() - started
    report.peak_rss_mb = peak_rss_mb()
    return report


@dataclass(slots=True)
class _Run:
    """One ingest into one collection once its model is chosen and its writer set up:
    what each file's step needs, in one place."""

    store: KBStore
    collection: str
    settings: KBSettings
    embedder: Embedder
    writer: Writer
    report: IngestReport
    meta: dict[str, Any] | None
    """The collection's metadata before this ingest; ``None``: it is new."""
    legacy: bool
    """Some points carry ids of an older scheme (found and replaced by source)."""
    progress: ProgressCallback | None
    total: int
    done: int = 0

    @classmethod
    def start(cls, home: Path, store: KBStore, collection: str, settings: KBSettings,
              planned: list[_Planned], report: IngestReport, graph_home: Path | None,
              access: Access, progress: ProgressCallback | None, total: int) -> _Run:
        """The model the collection uses (recorded, configured or chosen from a sample
        of the text files), checked against the collection, and the writer."""
        meta = store.info(collection).meta if store.exists(collection) else None
        settings = choose_model(settings, meta,
                                [p.path for p in planned if is_text(p.path)])
        embedder = get_embedder(settings, home)
        if meta is not None:
            check_compatible(collection, meta, embedder, settings)
        writer = Writer(store, collection, settings, embedder, meta, report, progress, total,
                        graph_home, access)
        legacy = meta is not None and meta.get("id_scheme") != ID_SCHEME \
            and has_legacy_points(store, collection, ID_SCHEME)
        if meta is not None and meta.get("chunker") != CHUNKER:
            report.warnings.append(Skipped(collection, (
                "re-chunked: the collection was chunked by older rules (chunks could "
                "exceed the model's window once the title and heading path were added); "
                "the files of this ingest are chunked again, ingest the others again "
                "to re-chunk them too")))
        return cls(store, collection, settings, embedder, writer, report, meta, legacy,
                   progress, total)

    @property
    def exists(self) -> bool:
        return self.meta is not None

    @property
    def window(self) -> int | None:
        """The model's input window in its tokens, when the model is here to count them
        (an embedding endpoint's texts are counted by estimate and bounded by size)."""
        return self.settings.max_tokens if isinstance(self.embedder, LocalEmbedder) else None

    def read(self, planned: list[_Planned], reader: _Reader) -> None:
        """Every planned file into the writer, progress after each; on any error the
        writer's pending rounds are dropped."""
        try:
            for planned_file in planned:
                _ingest_file(planned_file, self, reader)
                self.done += planned_file.size
                self.report.bytes_read = self.done
                if self.progress is not None:
                    self.progress(self.done, self.total)
        except BaseException:
            self.writer.abort()
            raise

    def settle(self) -> None:
        """Let the store make the writes searchable, and record the current id scheme
        once no point of an older one is left."""
        if self.writer.created or self.exists:
            t0 = time.perf_counter()
            self.store.settle(self.collection)
            self.report.store_seconds += time.perf_counter() - t0
        if self.meta is not None and self.meta.get("chunker") != CHUNKER \
                and self.report.files:
            self.store.update_meta(self.collection, {**self.store.info(self.collection).meta,
                                                     "chunker": CHUNKER})
        if self.meta is not None and self.meta.get("id_scheme") != ID_SCHEME \
                and not has_legacy_points(self.store, self.collection, ID_SCHEME):
            self.store.update_meta(self.collection, {**self.store.info(self.collection).meta,
                                                     "id_scheme": ID_SCHEME})


class _Reader:
    """Reads files into documents: text, Markdown and JSON lines streamed in this process;
    the formats a parser takes whole (:data:`PARSED_SUFFIXES`) in a child process started
    on the first of them, with a memory cap and deadlines that follow from the files'
    sizes, per file and for the run (:class:`~agent_search.kb._ingest._sandbox.ParseSandbox`)."""

    def __init__(self, settings: KBSettings, planned: Sequence[_Planned] = ()) -> None:
        self.settings = settings
        self.parsed_sizes = [p.size for p in planned
                             if p.path.suffix.lower() in PARSED_SUFFIXES]
        self.limits = Limits(max_chars=int(settings.max_file_mb * MB),
                             max_pages=settings.max_pages,
                             max_decompressed=int(settings.max_decompressed_mb * MB),
                             max_ocr_pages=settings.max_ocr_pages,
                             max_pixels=int(settings.max_image_megapixels * 1e6),
                             max_ocr_seconds=settings.max_ocr_seconds,
                             ocr_workers=ocr_workers(settings.ocr_workers, any(
                                 p.key.startswith(UPLOAD_PREFIX) for p in planned),
                                 settings.max_parse_memory_mb))
        self.sandbox: ParseSandbox | None = None

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start the parser child now when a planned file needs it, without waiting for
        it (its imports then overlap the caller's next steps)."""
        if self.parsed_sizes:
            self._sandbox().spawn()

    def _sandbox(self) -> ParseSandbox:
        from agent_search.kb._ingest import ParseSandbox, run_parse_seconds

        if self.sandbox is None:
            most = self.settings.max_parse_seconds
            self.sandbox = ParseSandbox(
                self.limits, seconds=most, memory_mb=self.settings.max_parse_memory_mb,
                run_seconds=run_parse_seconds(self.parsed_sizes, most),
                page_seconds=self.settings.max_ocr_page_seconds)
        return self.sandbox

    def load(self, path: Path, key: str, size: int,
             on_page: Callable[[int, int], None] | None = None) -> Iterator[Document | Skipped]:
        """The file's documents; ``on_page(page, pages)`` before each page read by OCR."""
        if path.suffix.lower() not in PARSED_SUFFIXES:
            return load_file(path, key, limits=self.limits)
        from agent_search.kb._ingest import parse_seconds

        return self._sandbox().load(path, key,
                                    parse_seconds(size, self.settings.max_parse_seconds),
                                    on_page)

    def close(self) -> None:
        if self.sandbox is not None:
            self.sandbox.close()


def _ingest_file(planned: _Planned, run: _Run, reader: _Reader) -> None:
    """Stream one file's chunks into the writer; then delete what the file no longer has
    (and its points under legacy ids)."""
    store, collection, settings, embedder = run.store, run.collection, run.settings, run.embedder
    writer, report, done_before = run.writer, run.report, run.done
    path, key = planned.path, planned.key
    t0 = time.perf_counter()
    known = source_hashes(store, collection, key, writer.access) if run.exists else {}
    if run.exists:  # the same file sent the other way (uploaded, or read from the disk):
        # its points are stale too, so the file stays one document however it was sent
        known.update(source_hashes(store, collection, twin_source(key), writer.access))
    report.store_seconds += time.perf_counter() - t0
    fresh: set[str] = set()
    produced = False
    skipped_before = len(report.skipped)
    count = _token_counter(embedder)
    report.files += 1
    consumed = 0

    def on_page(page: int, pages: int) -> None:
        # a scan read by OCR takes seconds a page: progress (an upload's event) per page
        if run.progress is not None:
            run.progress(done_before + planned.size * (page - 1) // max(pages, 1), run.total)

    for doc in reader.load(path, key, planned.size, on_page):
        if isinstance(doc, Skipped):
            report.skipped.append(doc)
            continue
        documented = False
        for chunk in iter_chunks(doc, count, max_tokens=settings.chunk_tokens,
                                 overlap=settings.chunk_overlap, window=run.window):
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
            writer.add(Pending(pid, doc.doc_id, key, doc.title, chunk, text, digest,
                                writer.bm25.doc_counts(text),
                                done_before + min(consumed, planned.size),
                                ocr=chunk.page in doc.ocr_pages))
        report.warnings.extend(Skipped(str(path), w) for w in _warnings(doc))
    if not produced and len(report.skipped) == skipped_before:
        report.skipped.append(Skipped(str(path), "no text"))
    stale = [pid for pid in known if pid not in fresh]
    if run.legacy:
        seen = set(stale) | fresh
        stale.extend(pid for pid in legacy_points(
            store, collection, ID_SCHEME, _path_forms(path), legacy_file_doc_id(path))
            if pid not in seen)
    if stale:
        writer.remove(stale)
        report.removed += len(stale)


def _remove_missing(store: KBStore, collection: str, folders: list[Path], root: Path,
                    writer: Writer, report: IngestReport) -> None:
    """Remove the documents (of this ingest's owner) under ``folders`` whose file is gone:
    a folder ingest mirrors the folder."""
    prefixes = []
    for folder in folders:
        key = source_key(folder, root)
        prefixes.append("" if key == "." else key.rstrip("/") + "/")
    t0 = time.perf_counter()
    for doc in documents_in(store, collection, owner_scope(writer.access), ids=True):
        source = named = str(doc["source"] or "")
        if source.startswith(UPLOAD_PREFIX):
            # sent by a client: a file of a named folder ingested here is the same file
            # (one document however it was sent); a name sent alone is no file of ours
            source = twin_source(source)
            if not any(p and source.startswith(p) for p in prefixes):
                continue
        elif not any(source.startswith(p) and (p or not source.startswith("/"))
                     for p in prefixes):
            continue
        if (root / source).exists():  # an absolute source stays absolute under "/"
            continue
        writer.remove(doc["ids"])
        report.removed += len(doc["ids"])
        report.missing.append(named)
    report.store_seconds += time.perf_counter() - t0


def _warnings(doc: Document) -> list[str]:
    return list(doc.warnings)


def _path_forms(path: Path) -> list[str]:
    """How the old id scheme may have recorded this file's source: as typed, absolute,
    resolved, or relative to the working directory."""
    forms = {str(path), str(path.absolute()), str(path.resolve())}
    with contextlib.suppress(ValueError):  # another drive (Windows)
        forms.add(os.path.relpath(path.resolve()))
    return sorted(forms)


