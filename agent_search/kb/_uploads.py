"""Documents sent as text (the HTTP service's ``POST /v1/kb/{collection}/documents``, or
a Python caller): each is a name and its text, ingested as the file ``upload:<name>``
would be — the name's suffix picks the reader (``.txt``, ``.md``, ``.csv``, ``.html``;
none means ``.txt``), the source ``upload:<name>`` is its identity (no file's source has
that form, and a folder ingest never mirrors it away), so sending the same
name again updates the document in place, and the caller's access record owns it (two
owners sending the same name have two documents).

A name may be a relative path (``notes/sub/bikes.md``: what ``kb ingest FOLDER --server``
sends), so a folder's documents share the source prefix ``upload:<folder>/``, and
:func:`mirror_folder` removes the caller's documents under such a prefix whose file the
client no longer has (the folder mirrored, as a local ``kb ingest FOLDER`` does). A name
is only a name: it is checked part by part (:func:`check_name`), never joined to a path
on the server (each document is written as ``<temporary folder>/<index>/<last part>``),
and a caller's names only ever reach its own documents (the point ids and every removal
are scoped to its owner and team).

Bounded before anything is written: at most :data:`MAX_DOCUMENTS` per call, names of at
most :data:`MAX_NAME_CHARS` characters and :data:`MAX_NAME_BYTES` bytes (parts of at most
:data:`MAX_PART_CHARS` characters and :data:`MAX_PART_BYTES` bytes in UTF-8: a disk's
limit; a name it still refuses is a ``ValueError``, never an ``OSError``), at most
:data:`MAX_PRESENT` names in a mirror, and the ingest's own caps (``kb.max_file_mb`` per
document, ``kb.max_run_mb`` per call). A write from outside (``bounded``) waits its turn
among the collection's writes without holding a thread, or is refused when the queue is
full (:mod:`agent_search.kb._ingest._admission`).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar, cast

import anyio

from agent_search.config import SearchConfig
from agent_search.kb._ingest import (
    TEXT_SUFFIXES,
    ProgressCallback,
    Skipped,
    WriteTicket,
    write_turn,
)
from agent_search.kb._manage import collection_lock, delete_points, documents_in, owner_scope
from agent_search.kb._store import (
    UPLOAD_PREFIX,
    Access,
    CollectionNotFound,
    check_collection_name,
    get_store,
    is_eval_collection,
    twin_source,
)
from agent_search.kb.ingest import IngestReport, _ingest_sync
from agent_search.kb.settings import KBSettings

if TYPE_CHECKING:
    from agent_search.context import Context

_T = TypeVar("_T")
MAX_DOCUMENTS = 100
MAX_NAME_CHARS = 1024
MAX_PART_CHARS = 255
MAX_PART_BYTES = 255
"""A part of a name in UTF-8 bytes: what a disk takes for one file name (ext4, APFS,
NTFS in UTF-16 allow more): 255 characters of Chinese are 765 bytes."""
MAX_NAME_BYTES = 1024
MAX_PRESENT = 50_000
"""Names in one mirror call (the body cap, ``server.max_body_bytes``, usually binds
first)."""
_PART = re.compile(r"[^/\\\x00-\x1f\x7f]+")
_NAME_RULE = (f"a file name or a relative path (parts separated by '/') of 1 to "
              f"{MAX_NAME_CHARS} characters and at most {MAX_NAME_BYTES} bytes in UTF-8: "
              f"no part empty, '.', '..', over {MAX_PART_CHARS} characters or "
              f"{MAX_PART_BYTES} bytes or with '\\' or control characters, the file name "
              "not starting with '.'")


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _part_ok(part: str) -> bool:
    return bool(_PART.fullmatch(part)) and part not in (".", "..") \
        and len(part) <= MAX_PART_CHARS and _utf8_len(part) <= MAX_PART_BYTES


def check_folder(folder: str) -> str:
    """A folder as sent (``notes`` or ``notes/sub``): the prefix of its documents' names,
    refused unless every part is a plain name (no ``..``, no absolute path)."""
    if not isinstance(folder, str) or not 0 < len(folder) <= MAX_NAME_CHARS \
            or _utf8_len(folder) > MAX_NAME_BYTES or folder != folder.strip() \
            or not all(_part_ok(part) for part in folder.split("/")):
        raise ValueError(f"folder {str(folder)[:80]!r}: {_NAME_RULE}")
    return folder


def check_name(name: str, *, text: bool = True) -> str:
    """A document's name as sent — a file name, or a relative path whose last part is the
    file name — with ``.txt`` added when the file name has no suffix; with ``text=False``
    (a file the server parses, whose suffix its upload route checks) any suffix."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"document name {str(name)[:80]!r}: {_NAME_RULE}")
    folder, slash, base = name.rpartition("/")
    if slash:  # "/a.md" has an empty folder: no plain relative path
        try:
            check_folder(folder)
        except ValueError:
            raise ValueError(f"document name {name[:80]!r}: {_NAME_RULE}") from None
    if len(name) > MAX_NAME_CHARS or _utf8_len(name) > MAX_NAME_BYTES \
            or not _part_ok(base) or base.startswith(".") or base != base.strip():
        raise ValueError(f"document name {name[:80]!r}: {_NAME_RULE}")
    suffix = Path(base).suffix.lower()
    if not text:
        return name
    if not suffix:
        return f"{name}.txt"
    if suffix not in TEXT_SUFFIXES:
        raise ValueError(f"document name {name[:80]!r}: text documents are "
                         f"{' '.join(TEXT_SUFFIXES)} (or no suffix, read as .txt)")
    return name


async def ingest_texts(config: SearchConfig, collection: str,
                       documents: Sequence[tuple[str, str]], *, access: Access | None = None,
                       ctx: Context | None = None, bounded: bool = False,
                       ticket: WriteTicket | None = None) -> IngestReport:
    """Ingest ``(name, text)`` documents into ``collection`` as ``upload:<name>``.

    Raises ``ValueError`` for a bad collection name or document name, too many documents,
    or an access that is neither public nor owned; otherwise as
    :func:`~agent_search.kb.ingest.ingest_paths` (a document too large or without text is
    in ``report.skipped``). With ``bounded`` (a request from outside) a full write queue
    raises :class:`~agent_search.kb._ingest._admission.IngestBusy` instead of waiting, and
    the work runs in the background (:func:`in_background`); ``ticket``: the write's place,
    reserved by the caller before it read the documents (released here)."""
    names, access = _checked_request(collection, documents, access, ctx)
    settings = KBSettings.from_config(config)
    return await _ingest_checked(config, settings, collection, names, documents, access,
                                 bounded, ticket)


def _checked_request(collection: str, documents: Sequence[tuple[str, str]],
                     access: Access | None, ctx: Context | None) -> tuple[list[str], Access]:
    """The documents' checked names and the write's access (the caller's, else public);
    ``ValueError`` naming what is wrong with the request."""
    check_collection_name(collection)
    if is_eval_collection(collection):
        raise ValueError(f"collection names starting with 'eval-' are reserved for "
                         f"'agent-search eval retrieval': {collection!r}")
    if not documents:
        raise ValueError("no documents")
    if len(documents) > MAX_DOCUMENTS:
        raise ValueError(f"{len(documents)} documents; at most {MAX_DOCUMENTS} per call")
    names = [check_name(name) for name, _ in documents]
    if len(set(names)) != len(names):
        raise ValueError("two documents have the same name")
    if access is None:
        access = Access.of(ctx.user_id, ctx.team_id) if ctx is not None else Access.of()
    if not access.public and access.owner is None and access.team is None:
        raise ValueError("a document that is not public needs an owner or a team")
    return names, access


async def _ingest_checked(config: SearchConfig, settings: KBSettings, collection: str,
                          names: list[str], documents: Sequence[tuple[str, str]],
                          access: Access, bounded: bool, ticket: WriteTicket | None
                          ) -> IngestReport:
    """:func:`ingest_texts` once the request is checked: in the caller's reserved turn
    (``ticket``), else in a write turn of its own."""
    texts = [text for _, text in documents]
    work = functools.partial(_ingest_texts_sync, config.home, settings, collection, names,
                             texts, access)
    opened = (settings, config.home)
    if ticket is not None:
        try:
            async with ticket.turn() as limiter:
                return await anyio.to_thread.run_sync(
                    functools.partial(in_background, work, store=opened), limiter=limiter)
        finally:
            ticket.release()
    async with write_turn(settings, config.home, collection, access,
                          bounded=bounded) as limiter:
        run = functools.partial(in_background, work, store=opened) if bounded else \
            functools.partial(_now, work)
        return await anyio.to_thread.run_sync(run, limiter=limiter)


BACKGROUND_NICE = 10
"""How much lower than the server's the OS priority of a request's ingest thread is."""
BACKGROUND_SHARE = 0.5
"""The share of its time a request's ingest works: after each file it pauses as long as
the file took (``(1 - share) / share`` of it), its GIL released."""
_MAX_PAUSE_S = 2.0


def _now(work: Callable[[ProgressCallback | None], _T]) -> _T:
    return work(None)


def in_background(work: Callable[[ProgressCallback | None], _T],
                  progress: ProgressCallback | None = None, *,
                  store: tuple[KBSettings, Path] | None = None) -> _T:
    """Run ``work(progress)`` — an ingest requested from outside — so that it does not
    starve the service's other requests: in a new thread of lower OS priority
    (:data:`BACKGROUND_NICE`; a niced thread of the shared pool could not be made normal
    again), pausing after each file so it works at most :data:`BACKGROUND_SHARE` of its
    time (the pause releases the interpreter lock the event loop needs). Blocks the
    calling worker thread until done; ``progress`` still gets every call.

    ``store`` (the kb settings and data home the ingest writes to) is opened first, in
    the calling thread at the server's priority, as the store starts a thread of its own
    that serves every tenant (its flusher, which holds the interpreter lock while it
    flushes). A thread inherits the OS
    priority of the thread that starts it and cannot get it back, so such a thread
    started from the ingest's would stay niced: the OS would then stop it, holding the
    interpreter lock, while every other thread waits."""
    if store is not None:
        get_store(*store)
    outcome: dict[str, Any] = {}
    pace = _Pacer(BACKGROUND_SHARE, progress)

    def run() -> None:
        with contextlib.suppress(OSError, AttributeError):  # Linux: one thread's niceness
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(),
                           os.getpriority(os.PRIO_PROCESS, 0) + BACKGROUND_NICE)
        try:
            outcome["result"] = work(pace)
        except BaseException as exc:  # handed to the caller's thread, raised there
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="agent-search-background-ingest", daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return cast(_T, outcome["result"])


class _Pacer:
    """A progress callback that pauses the ingest after each file (see
    :func:`in_background`), then passes the call on."""

    def __init__(self, share: float, inner: ProgressCallback | None) -> None:
        self.factor = (1.0 - share) / share
        self.inner = inner
        self.last = time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        if self.inner is not None:
            self.inner(done, total)
        worked = time.perf_counter() - self.last
        time.sleep(min(worked * self.factor, _MAX_PAUSE_S))
        self.last = time.perf_counter()


def _ingest_texts_sync(home: Path, settings: KBSettings, collection: str, names: list[str],
                       texts: list[str], access: Access,
                       progress: ProgressCallback | None = None) -> IngestReport:
    with tempfile.TemporaryDirectory(prefix="agent-search-upload-") as tmp:
        paths: dict[Path, str] = {}
        for index, (name, text) in enumerate(zip(names, texts, strict=True)):
            path = Path(tmp) / str(index) / name.rpartition("/")[2]  # the name is no path
            path.parent.mkdir()
            with write_named(path, name) as out:
                out.write(text.encode("utf-8", errors="replace"))
            paths[path] = UPLOAD_PREFIX + name
        return ingest_named_files(home, settings, paths, collection, access, progress)


@contextlib.contextmanager
def write_named(path: Path, name: str) -> Iterator[IO[bytes]]:
    """``path`` opened for a new file that holds the document sent as ``name``; the disk's
    refusal of the name (too long for it, a character it does not take) is a
    ``ValueError`` naming the document, not an ``OSError`` deep in the ingest. Space or
    permission failures stay ``OSError`` (the server's fault, not the name's)."""
    try:
        out = path.open("xb")
    except OSError as exc:
        if exc.errno in (errno.ENAMETOOLONG, errno.EILSEQ, errno.EINVAL):
            raise ValueError(f"document name {name[:80]!r}: the disk does not take this "
                             f"name ({exc.strerror}); at most {MAX_PART_BYTES} bytes in "
                             "UTF-8 a part") from None
        raise
    with out:
        yield out


def ingest_named_files(home: Path, settings: KBSettings, paths: dict[Path, str],
                       collection: str, access: Access,
                       progress: ProgressCallback | None = None) -> IngestReport:
    """Ingest temporary files each under its ``upload:<name>`` source (``paths``: file →
    source), and report skipped files and warnings by that source, not the temporary path
    (which means nothing to the caller)."""
    report = _ingest_sync(home, settings, list(paths), collection, settings.graph, progress,
                          access, False, paths)
    by_path = {str(p): source for p, source in paths.items()}
    report.skipped = [Skipped(by_path.get(s.source, s.source), s.reason)
                      for s in report.skipped]
    report.warnings = [Skipped(by_path.get(w.source, w.source), w.reason)
                       for w in report.warnings]
    return report


async def mirror_folder(config: SearchConfig, collection: str, folder: str,
                        present: Sequence[str], *, access: Access,
                        bounded: bool = False) -> list[dict[str, Any]]:
    """Remove the documents of ``access``'s owner and team named ``upload:<folder>/<rest>``
    whose ``rest`` is not in ``present`` (the files the client's folder holds now, as
    relative paths): the folder mirrored. Returns what was removed (as ``kb rm`` does);
    raises ``ValueError`` for a bad collection, folder or name or too many names, and
    :class:`~agent_search.kb._store._open.CollectionNotFound`."""
    check_collection_name(collection)
    check_folder(folder)
    if len(present) > MAX_PRESENT:
        raise ValueError(f"{len(present)} file names; at most {MAX_PRESENT} per mirror")
    for name in present:
        if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME_CHARS:
            raise ValueError(f"file name {str(name)[:80]!r}: 1 to {MAX_NAME_CHARS} "
                             "characters")
    settings = KBSettings.from_config(config)
    async with write_turn(settings, config.home, collection, access,
                          bounded=bounded) as limiter:
        return await anyio.to_thread.run_sync(_mirror_sync, settings, config.home,
                                              collection, UPLOAD_PREFIX + folder + "/",
                                              set(present), access, limiter=limiter)


async def remove_own_document(config: SearchConfig, collection: str, target: str, *,
                              access: Access) -> list[dict[str, Any]]:
    """:func:`~agent_search.kb._manage.remove_document` of the caller's own documents
    for a request from outside: it waits its turn among the collection's writes (holding
    no thread), bounded like an upload
    (:class:`~agent_search.kb._ingest._admission.IngestBusy`)."""
    from agent_search.kb._manage import remove_document

    check_collection_name(collection)
    settings = KBSettings.from_config(config)
    async with write_turn(settings, config.home, collection, access, bounded=True):
        return await remove_document(config, collection, target, access=access)


def _mirror_sync(settings: KBSettings, home: Path, collection: str, prefix: str,
                 present: set[str], access: Access) -> list[dict[str, Any]]:
    store = get_store(settings, home)
    with collection_lock(store, collection):
        if not store.exists(collection):
            raise CollectionNotFound(collection)
        # the folder's files as uploads, and as read from the disk by a local ingest (the
        # same files: one document each however they were sent)
        prefixes = (prefix, twin_source(prefix))
        gone = [doc for doc in documents_in(store, collection, owner_scope(access), ids=True)
                if any(str(doc["source"] or "").startswith(p)
                       and str(doc["source"])[len(p):] not in present for p in prefixes)]
        delete_points(store, home, collection, [i for d in gone for i in d["ids"]])
    return [{k: v for k, v in d.items() if k != "ids"} for d in gone]
