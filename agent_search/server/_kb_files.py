"""Files uploaded to a collection while the service runs: ``POST /v1/kb/{collection}/files``,
a ``multipart/form-data`` body of ``file`` parts (the chat page's upload control, or
``curl -F file=@report.pdf``).

Everything is checked before any document is parsed, and a request that fails a check
writes nothing:

* the body — at most :func:`upload_limit` bytes (``kb.max_file_mb`` per file times
  :data:`MAX_FILES`, within ``kb.max_run_mb``), enforced by
  :class:`~agent_search.server._middleware.BodyLimit` on this route only, while the body
  streams (Starlette spools file parts above 1 MB to disk, so the body is never held in
  memory whole);
* the count — at most :data:`MAX_FILES` file parts and no other fields beyond a few;
* each name — a bare file name (no path, no control characters, not hidden) with a suffix
  of :data:`FILE_SUFFIXES`; two files with the same name are refused;
* each size — at most ``kb.max_file_mb``; together at most ``kb.max_run_mb``;
* each type — the first bytes must fit the suffix (``%PDF-`` for ``.pdf``, a zip for the
  office files, no NUL byte in a text file), so a renamed binary is refused, not parsed.

Then the files are written under their names into a private temporary folder and ingested
as ``upload:<name>`` (like :func:`agent_search.kb._uploads.ingest_texts`), so PDF, HTML and
office files are parsed in the ingest's sandboxed child process
(:mod:`agent_search.kb._ingest._sandbox`), as ``agent-search kb ingest`` parses them. The caller's
key decides owner and team. With ``?progress=true`` the answer is a stream of server-sent
events instead (:func:`progress_events`), for uploads that take a while to index.
"""

from __future__ import annotations

import collections
import functools
import logging
import re
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import anyio
from starlette.datastructures import UploadFile
from starlette.requests import Request

from agent_search.config import SearchConfig
from agent_search.kb import (
    BINARY_SUFFIXES,
    MAGIC,
    MAX_PART_BYTES,
    TEXT_SUFFIXES,
    UPLOAD_PREFIX,
    Access,
    IngestBusy,
    ProgressCallback,
    WriteTicket,
    check_collection_name,
    in_background,
    ingest_named_files,
    is_eval_collection,
    reserve_write,
    write_named,
)
from agent_search.kb.ingest import IngestReport
from agent_search.kb.settings import KBSettings
from agent_search.server._errors import ApiError
from agent_search.server._sse import Write

FILE_SUFFIXES = TEXT_SUFFIXES + BINARY_SUFFIXES
MAX_FILES = 20
MAX_NAME_CHARS = 200
_MB = 1 << 20
_PROGRESS_BATCH = 64
"""The most progress events one batch of an upload's stream writes (the newest)."""
_FORM_OVERHEAD = 64 * 1024
"""Bytes of multipart framing allowed on top of the files themselves."""
_NAME = re.compile(r"[^/\\\x00-\x1f\x7f]+")
_SNIFF_BYTES = 8192
log = logging.getLogger("agent_search.server")
FILES_PATH = re.compile(r"/v1/kb/[^/]+/files")
"""The route whose body may be as large as :func:`upload_limit` (the middleware's test)."""
DOCUMENTS_PATH = re.compile(r"/v1/kb/[^/]+/documents")
"""The route of text documents, whose body the middleware counts but does not read ahead
(the route refuses a full write queue before it reads the body)."""


def upload_limit(settings: KBSettings) -> int:
    """The largest upload body in bytes: :data:`MAX_FILES` files of ``kb.max_file_mb``,
    at most ``kb.max_run_mb``, plus the multipart framing."""
    files = min(settings.max_file_mb * MAX_FILES, settings.max_run_mb)
    return int(files * _MB) + _FORM_OVERHEAD


def check_file_name(name: str | None) -> str:
    """A file's name as sent, refused unless it is a bare name with a known suffix, of
    at most :data:`MAX_NAME_CHARS` characters and
    :data:`~agent_search.kb._uploads.MAX_PART_BYTES` bytes in UTF-8 (a disk's limit for
    one name: 200 Chinese characters are 600 bytes)."""
    if not name or len(name) > MAX_NAME_CHARS or not _NAME.fullmatch(name) \
            or name.startswith(".") or name != name.strip() \
            or len(name.encode("utf-8", "surrogatepass")) > MAX_PART_BYTES:
        raise ApiError(422, f"file name {(name or '')[:80]!r}: a bare file name of 1 to "
                       f"{MAX_NAME_CHARS} characters and at most {MAX_PART_BYTES} bytes in "
                       "UTF-8, not starting with '.', without '/', '\\', control "
                       "characters or surrounding spaces", param="file")
    if Path(name).suffix.lower() not in FILE_SUFFIXES:
        raise ApiError(415, f"file {name[:80]!r}: not a supported type; send "
                       f"{' '.join(FILE_SUFFIXES)}", param="file")
    return name


def _check_content(name: str, head: bytes) -> None:
    suffix = Path(name).suffix.lower()
    magic = MAGIC.get(suffix)
    if magic is not None and not head.startswith(magic):
        raise ApiError(415, f"file {name[:80]!r}: its content is not a {suffix} file",
                       param="file")
    if magic is None and b"\x00" in head:
        raise ApiError(415, f"file {name[:80]!r}: binary content in a {suffix} text file",
                       param="file")


@dataclass
class _Upload:
    name: str
    size: int
    file: IO[bytes]


async def read_files(request: Request, settings: KBSettings) -> list[_Upload]:
    """The request's file parts, each checked (name, size, type) and the set bounded
    (count, total size); :class:`ApiError` for the first that fails."""
    from starlette.exceptions import HTTPException

    try:
        form = await request.form(max_files=MAX_FILES, max_fields=8, max_part_size=4096)
    except HTTPException as exc:  # the multipart parser's own refusals (count, framing)
        raise ApiError(400, f"cannot read the upload: {exc.detail}", param="file") from None
    parts = form.getlist("file")
    if not parts:
        raise ApiError(422, "no files: send them as multipart/form-data parts named 'file'",
                       param="file")
    uploads: list[_Upload] = []
    per_file = int(settings.max_file_mb * _MB)
    for part in parts:
        if not isinstance(part, UploadFile):
            raise ApiError(422, "each 'file' part must be a file", param="file")
        name = check_file_name(part.filename)
        size = part.size if part.size is not None else 0
        if size > per_file:
            raise ApiError(413, f"file {name[:80]!r} is {size} bytes; at most "
                           f"{per_file} (kb.max_file_mb)", param="file")
        await part.seek(0)
        _check_content(name, await part.read(_SNIFF_BYTES))
        await part.seek(0)
        uploads.append(_Upload(name, size, part.file))
    names = [u.name.lower() for u in uploads]
    if len(set(names)) != len(names):
        raise ApiError(422, "two files have the same name", param="file")
    total = sum(u.size for u in uploads)
    if total > settings.max_run_mb * _MB:
        raise ApiError(413, f"the files are {total} bytes together; at most "
                       f"{int(settings.max_run_mb * _MB)} (kb.max_run_mb)", param="file")
    return uploads


def check_target(collection: str, access: Access) -> None:
    """``ValueError`` for a bad collection name or an access without owner that is not
    public (checked before the body is read)."""
    check_collection_name(collection)
    if is_eval_collection(collection):
        raise ValueError(f"collection names starting with 'eval-' are reserved for "
                         f"'agent-search eval retrieval': {collection!r}")
    if not access.public and access.owner is None and access.team is None:
        raise ValueError("a document that is not public needs an owner or a team")


def reserve(config: SearchConfig, collection: str, access: Access) -> WriteTicket:
    """The upload's place among the collection's and the caller's writes, taken before
    the answer starts (:class:`~agent_search.kb._ingest._admission.IngestBusy` when full)."""
    return reserve_write(KBSettings.from_config(config), config.home, collection, access,
                         bounded=True)


async def ingest_files(config: SearchConfig, collection: str, uploads: list[_Upload],
                       access: Access, progress: ProgressCallback | None = None,
                       folder: str | None = None,
                       ticket: WriteTicket | None = None) -> IngestReport:
    """Ingest checked uploads into ``collection`` as ``upload:<name>`` (``upload:<folder>/
    <name>`` with a ``folder`` checked by :func:`~agent_search.kb._uploads.check_folder`),
    once the collection's turn comes (``ticket``, else one reserved here: awaited without
    a thread), in a worker thread of the kb's own (parsed formats in the ingest's sandbox
    process); ``progress(bytes_done, bytes_total)`` is called from that thread."""
    check_target(collection, access)
    settings = KBSettings.from_config(config)
    prefix = UPLOAD_PREFIX + (f"{folder}/" if folder else "")
    ticket = ticket or reserve(config, collection, access)
    try:
        async with ticket.turn() as limiter:
            work = functools.partial(_ingest_files_sync, config.home, settings, collection,
                                     uploads, access, prefix=prefix)
            return await anyio.to_thread.run_sync(functools.partial(
                in_background, work, progress, store=(settings, config.home)),
                limiter=limiter)
    finally:
        ticket.release()


def progress_events(config: SearchConfig, collection: str, uploads: list[_Upload],
                    access: Access, *, every: float = 0.5, folder: str | None = None,
                    ticket: WriteTicket | None = None) -> Callable[[Write], Awaitable[None]]:
    """An SSE producer for ``?progress=true``: ``progress`` events ``{"done", "total"}``
    (bytes of input ingested), one per step the ingest reports (each file, each page a
    scan reads by OCR), written in batches every ``every`` seconds while the ingest runs
    (the newest ``_PROGRESS_BATCH`` of a batch, so a fast ingest cannot flood the stream),
    then one ``report`` event (the ingest report) or one ``error`` event
    ``{"error": {"message", "status"}}``. The ingest itself is not cancelled when the
    client leaves (a worker thread cannot be): it finishes, so the collection stays
    consistent. An error of any kind is one ``error`` event with a clear message (never
    the text of an exception group)."""
    from agent_search.server._sse import sse

    async def produce(write: Write) -> None:
        steps: collections.deque[tuple[int, int]] = collections.deque(maxlen=_PROGRESS_BATCH)
        outcome: dict[str, Any] = {}
        finished = anyio.Event()

        def progress(done: int, total: int) -> None:
            steps.append((done, total))  # from the ingest's thread: deque appends are atomic

        async def work() -> None:
            try:
                report = await ingest_files(config, collection, uploads, access, progress,
                                            folder, ticket)
                outcome["report"] = report.to_json()
            except Exception as exc:  # every failure becomes the one error event
                outcome["error"] = error_event(exc)
            finally:
                finished.set()

        sent: tuple[int, int] | None = None

        async def drain() -> None:
            nonlocal sent
            while steps:
                step = steps.popleft()
                if step != sent and step[1] > 0:
                    sent = step
                    await write(sse({"done": sent[0], "total": sent[1]}, "progress"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(work)
            while not finished.is_set():
                with anyio.move_on_after(every):
                    await finished.wait()
                await drain()
        if "report" in outcome:
            await write(sse(outcome["report"], "report"))
        else:
            await write(sse({"error": outcome.get("error")}, "error"))

    return produce


def error_event(exc: Exception) -> dict[str, Any]:
    """An ingest's failure as the ``error`` event's body, with the status the plain
    route would answer: another model's collection 409, bad input 422, busy 429/503,
    the store unavailable 503; anything else 500 with its kind (logged in full)."""
    from agent_search.kb import CollectionMismatchError, StoreError

    if isinstance(exc, CollectionMismatchError):  # a ValueError too: before it
        return {"message": str(exc), "status": 409}
    if isinstance(exc, IngestBusy):
        return {"message": str(exc), "status": exc.status}
    if isinstance(exc, ValueError):
        return {"message": str(exc), "status": 422}
    if isinstance(exc, StoreError):
        return {"message": str(exc), "status": 503}
    log.error("kb upload failed", exc_info=exc)
    return {"message": f"the ingest failed ({type(exc).__name__}); the server log has "
                       "the details", "status": 500}


def _ingest_files_sync(home: Path, settings: KBSettings, collection: str,
                       uploads: list[_Upload], access: Access,
                       progress: ProgressCallback | None = None,
                       prefix: str = UPLOAD_PREFIX) -> IngestReport:
    with tempfile.TemporaryDirectory(prefix="agent-search-upload-") as tmp:
        paths: dict[Path, str] = {}
        for upload in uploads:
            path = Path(tmp) / upload.name
            with write_named(path, upload.name) as out:  # "x": a name that escaped fails
                shutil.copyfileobj(upload.file, out)
            paths[path] = prefix + upload.name
        return ingest_named_files(home, settings, paths, collection, access, progress)
