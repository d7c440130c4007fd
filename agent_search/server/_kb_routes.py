"""Adding and removing knowledge-base documents while the service runs.

The service holds the data home's store, so while it runs every ``agent-search kb``
command of another process is refused ("open in another process"); these routes do the
work in the service's own process instead (the CLI sends it with ``--server URL``).

* ``POST /v1/kb/{collection}/documents`` — ``{"documents": [{"name": "notes.md",
  "text": "..."}]}``: text documents (the text suffixes of the ingest's format table,
  listed in the route's OpenAPI description; see :mod:`agent_search.kb._uploads`),
  ingested as ``upload:<name>``; a name may be a
  relative path (``notes/sub/a.md``). The answer is the ingest report.
* ``POST /v1/kb/{collection}/files`` — ``multipart/form-data`` parts named ``file``
  (text and the parsed types of the format table, listed likewise), checked and parsed as
  :mod:`agent_search.server._kb_files` says, ingested as ``upload:<name>``, or
  ``upload:<folder>/<name>`` with ``?folder=notes/sub``; the answer is the ingest report.
* ``POST /v1/kb/{collection}/mirror`` — ``{"folder": "notes", "present": ["a.md",
  "sub/b.md"]}``: the caller's documents named ``upload:notes/<rest>`` whose ``rest`` is
  not in ``present`` are removed (``kb ingest FOLDER --server`` mirrors the folder so);
  the answer lists them (``removed``, ``missing``).
* ``GET /v1/kb`` — the collections the caller can read a chunk of, with the number of
  chunks it may read and the embedding model (``kb list --server URL``).
* ``GET /v1/kb/{collection}/documents?limit=&cursor=`` — a page of the documents the
  caller may read (``next_cursor`` for the next; see :mod:`agent_search._paging`) (source,
  chunks, owner, team, share, document id).
* ``DELETE /v1/kb/{collection}/documents/{document}`` — one document, by its source
  (``upload:notes.md``) or document id.

The caller's key decides the owner and team of what it adds (like ``kb ingest --user
--team``), and a caller removes (one by one or by mirroring) only its own documents —
those of exactly its owner and team; without API keys (loopback only) documents are
public. A name is only a name (checked part by part, never a path on the server).
Bounded: the body by ``server.max_body_bytes`` and JSON only (the middleware), the number
and names of documents by :mod:`agent_search.kb._uploads`, each document and the call by
``kb.max_file_mb`` and ``kb.max_run_mb``. A write (add, upload, mirror, removal) waits for
its collection's turn without holding a worker thread and runs on the kb's own threads,
so searches keep theirs; a full queue is refused at once (503 for the collection's,
``kb.ingest_queue``; 429 for the caller's share, ``kb.ingest_per_tenant``; both with
``Retry-After``), and the add and upload routes count in ``server.max_streams``
(:mod:`agent_search.kb._ingest._admission`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from agent_search._paging import (
    DEFAULT_LIMIT,
    MAX_CURSOR,
    MAX_LIMIT,
    make_cursor,
    read_cursor,
)
from agent_search.kb import BINARY_SUFFIXES, TEXT_SUFFIXES, Access
from agent_search.kb.formats import describe
from agent_search.server._errors import ApiError
from agent_search.server._middleware import REFUSAL_PAUSE_S, identity_of
from agent_search.server._routes import _json_body, _validate, service_of

kb_router = APIRouter()
_SECURED: dict[str, Any] = {"security": [{"HTTPBearer": []}]}

TEXT_TYPES = describe(TEXT_SUFFIXES)
"""The text documents the add route takes, from the ingest's format table."""
FILE_TYPES = describe(TEXT_SUFFIXES + BINARY_SUFFIXES)
"""The files the upload route takes, from the ingest's format table."""


class TextDocument(BaseModel):
    name: str = Field(min_length=1, max_length=200, description="file name, e.g. notes.md")
    text: str


class DocumentsBody(BaseModel):
    documents: list[TextDocument] = Field(min_length=1, max_length=100)


class MirrorBody(BaseModel):
    folder: str = Field(min_length=1, max_length=1024,
                        description="the folder's name as its documents carry it: notes")
    present: list[str] = Field(max_length=50_000, description=(
        "the files the folder holds now, relative to it: a.md, sub/b.md"))


def _access(request: Request) -> Access:
    identity = identity_of(request.scope)
    return Access.of(identity.user_id, identity.team_id)


@contextmanager
def _kb_errors(bad_input: str) -> Iterator[None]:
    """The knowledge base's errors as the API's, the same for every route: a collection
    of another model 409, no such collection 404, bad input 422 (naming the parameter
    ``bad_input``), the store unavailable 503."""
    from agent_search.kb import CollectionMismatchError, CollectionNotFound, IngestBusy, StoreError

    try:
        yield
    except IngestBusy as exc:  # the collection's queue (503) or the caller's share (429)
        raise ApiError(exc.status, str(exc), param="collection",
                       headers={"Retry-After": str(exc.retry_after)}) from None
    except CollectionMismatchError as exc:  # a ValueError too: before it
        raise ApiError(409, str(exc), param="collection") from None
    except CollectionNotFound as exc:  # a StoreError too: before it
        raise ApiError(404, str(exc), param="collection") from None
    except ValueError as exc:
        raise ApiError(422, str(exc), param=bad_input) from None
    except StoreError as exc:
        raise ApiError(503, str(exc)) from None


async def _reserve(config: Any, collection: str, access: Access) -> Any:
    """The write's place in the collection's queue, taken before the body is read; a full
    queue or share is refused after the same pause as a rate-limited request (the body
    unread), so a client retrying at once does not turn refusals into a load of their own."""
    from agent_search.kb import IngestBusy
    from agent_search.server._kb_files import reserve

    try:
        return reserve(config, collection, access)
    except IngestBusy:
        await anyio.sleep(REFUSAL_PAUSE_S)
        with _kb_errors("collection"):
            raise


@kb_router.post("/v1/kb/{collection}/documents", tags=["kb"], openapi_extra=_SECURED,
                description=(
                    "Ingest text documents into a collection (created on first use), owned "
                    "by the caller; the ingest report (added, updated, unchanged, skipped "
                    f"with reasons). Names end in: {TEXT_TYPES} (or no suffix: text)."))
async def add_documents(request: Request, collection: str) -> dict[str, Any]:
    """Ingest text documents (:data:`TEXT_TYPES`) into a collection; the OpenAPI
    description says the rest."""
    from agent_search.kb import ingest_texts
    from agent_search.server._kb_files import check_target

    access = _access(request)
    service = service_of(request)
    config = service.searcher.config
    with _kb_errors("collection"):
        check_target(collection, access)
    service.admit()
    ticket = await _reserve(config, collection, access)
    try:
        body = _validate(DocumentsBody, await _json_body(request))
    except BaseException:
        ticket.release()
        raise
    try:
        with service.stream_slot(), _kb_errors("documents"):
            report = await ingest_texts(config, collection,
                                        [(d.name, d.text) for d in body.documents],
                                        access=access, bounded=True, ticket=ticket)
    finally:
        ticket.release()  # idempotent: also when the documents were refused
    return report.to_json()


@kb_router.post("/v1/kb/{collection}/files", tags=["kb"], openapi_extra=_SECURED,
                description=(
                    "Ingest uploaded files (multipart/form-data parts named file) into a "
                    "collection (created on first use), owned by the caller; the ingest "
                    "report. With ?progress=true: server-sent progress events, then report "
                    f"(or error). Files of: {FILE_TYPES}."))
async def add_files(request: Request, collection: str) -> Any:
    """Ingest uploaded files (:data:`FILE_TYPES`) into a collection, or stream the
    progress; the OpenAPI description says the rest."""
    from agent_search.kb import check_folder
    from agent_search.kb.settings import KBSettings
    from agent_search.server._kb_files import check_target, ingest_files, read_files

    access = _access(request)
    service = service_of(request)
    config = service.searcher.config
    with _kb_errors("collection"):
        check_target(collection, access)
    folder = request.query_params.get("folder")
    if folder is not None:
        with _kb_errors("folder"):
            check_folder(folder)
    service.admit()
    ticket = await _reserve(config, collection, access)
    try:
        uploads = await read_files(request, KBSettings.from_config(config))
    except BaseException:
        ticket.release()
        raise
    if request.query_params.get("progress", "").lower() in ("1", "true"):
        return _progress_stream(request, config, collection, uploads, access, folder,
                                ticket)
    with service.stream_slot(), _kb_errors("collection"):
        report = await ingest_files(config, collection, uploads, access, folder=folder,
                                    ticket=ticket)
    return report.to_json()


def _progress_stream(request: Request, config: Any, collection: str, uploads: Any,
                     access: Access, folder: str | None, ticket: Any) -> Any:
    from agent_search.server._kb_files import progress_events
    from agent_search.server._sse import EventStreamResponse, sse

    service = service_of(request)
    stopping = {"error": {"message": "the server is shutting down", "status": 503}}
    produce = progress_events(config, collection, uploads, access, folder=folder,
                              ticket=ticket)

    async def counted(write: Any) -> None:
        try:
            with service.stream_slot():
                await produce(write)
        finally:
            ticket.release()  # also when the stream was cut before the ingest began

    return EventStreamResponse(
        counted,
        stop=service.stop_streams,
        on_stop=lambda: sse(stopping, "error"),
        on_error=lambda message: sse({"error": {"message": message, "status": 500}},
                                     "error"),
        keepalive=service.settings.keepalive_seconds)


@kb_router.delete("/v1/kb/{collection}/documents/{document:path}", tags=["kb"],
                  openapi_extra=_SECURED)
async def remove_document(request: Request, collection: str, document: str) -> dict[str, Any]:
    """Remove one of the caller's documents (by source or document id); 404 when the
    caller has no such document."""
    from agent_search.kb import remove_own_document

    access = _access(request)
    config = service_of(request).searcher.config
    with _kb_errors("document"):
        removed = await remove_own_document(config, collection, document, access=access)
    if not removed:
        raise ApiError(404, f"no document {document[:200]!r} of yours in collection "
                       f"{collection!r}", param="document")
    return {"collection": collection, "removed": removed}


@kb_router.post("/v1/kb/{collection}/mirror", tags=["kb"], openapi_extra=_SECURED)
async def mirror(request: Request, collection: str) -> dict[str, Any]:
    """Remove the caller's documents of a folder sent earlier (``upload:<folder>/...``)
    whose file the folder no longer holds; 404 when the collection does not exist."""
    from agent_search.kb import mirror_folder

    access = _access(request)
    body = _validate(MirrorBody, await _json_body(request))
    config = service_of(request).searcher.config
    with _kb_errors("folder"):
        removed = await mirror_folder(config, collection, body.folder, body.present,
                                      access=access, bounded=True)
    return {"collection": collection, "folder": body.folder, "removed": removed,
            "missing": [d["source"] for d in removed]}


@kb_router.get("/v1/kb", tags=["kb"], openapi_extra=_SECURED)
async def collections(request: Request) -> dict[str, Any]:
    """The collections the caller can read a chunk of (a name is not told to whom it
    holds nothing), each with the chunks the caller may read and its embedding model."""
    from agent_search.kb import list_collections, visibility

    identity = identity_of(request.scope)
    config = service_of(request).searcher.config
    with _kb_errors("collection"):
        rows = await list_collections(config, visibility(identity.user_id, identity.team_id))
    return {"collections": [{"name": r["name"], "points": r["points"],
                             "embedding_model": r.get("embedding_model")} for r in rows]}


@kb_router.get("/v1/kb/{collection}/documents", tags=["kb"], openapi_extra=_SECURED)
async def documents(
        request: Request, collection: str,
        limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
        cursor: Annotated[str | None, Query(max_length=MAX_CURSOR)] = None) -> dict[str, Any]:
    """A page of the documents of a collection the caller may read (public ones, its
    own, its team's shared ones): at most ``limit`` (≤ 1000), and ``next_cursor`` to pass
    as ``cursor`` for the next page (null on the last); 404 when the collection does not
    exist, 422 for a cursor of another listing (another collection or caller)."""
    from agent_search.kb import check_collection_name, check_offset, list_documents_page, visibility

    identity = identity_of(request.scope)
    config = service_of(request).searcher.config
    with _kb_errors("collection"):
        check_collection_name(collection)
    scope = ("kb-documents", collection, identity.user_id or "", identity.team_id or "")
    offset = None
    if cursor is not None:
        try:
            offset = check_offset(str(read_cursor(cursor, scope).get("offset")))
        except ValueError as exc:  # a CursorError too
            raise ApiError(422, str(exc), param="cursor") from None
    with _kb_errors("collection"):
        docs, nxt = await list_documents_page(
            config, collection, visibility(identity.user_id, identity.team_id),
            limit=limit, offset=offset)
    return {"collection": collection, "documents": docs,
            "next_cursor": make_cursor(scope, {"offset": nxt}) if nxt is not None else None}
