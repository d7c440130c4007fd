"""``agent-search kb list COLLECTION`` — a collection's documents, page by page.

Listing costs a page, not the collection (:func:`agent_search.kb._manage.documents_page`
locally, ``GET /v1/kb/{collection}/documents`` with ``--server``): without ``--limit``
every page is read and printed as it comes; with ``--limit N`` one page of N documents
is printed, then the cursor of the next (on stderr, or ``next_cursor`` in ``--json``), to
pass back as ``--cursor``. A local cursor is bound to its collection, a server's to its
collection and API key (:mod:`agent_search._paging`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import anyio

from agent_search._paging import MAX_LIMIT, CursorError, make_cursor, read_cursor
from agent_search.cli.app import console, err_console, fail, plural, print_json
from agent_search.config import SearchConfig

PAGE = 500
"""Documents per page when every page is read."""


def list_documents(config: SearchConfig | None, collection: str, *, server: str | None,
                   api_key_env: str, limit: int | None, cursor: str | None,
                   json_out: bool) -> None:
    """Print the documents (all pages, or the one page ``limit``/``cursor`` ask for)."""
    if limit is not None and not 1 <= limit <= MAX_LIMIT:
        fail(f"--limit: a page holds 1 to {MAX_LIMIT} documents")
    pages = _remote(server, collection, api_key_env, limit, cursor) if server is not None \
        else _local(config, collection, limit, cursor)
    if json_out:
        _print_json(pages, limit)
    else:
        _print_pages(pages, collection, limit, cursor)


Pages = Iterator[tuple[list[dict[str, Any]], str | None]]
"""Each page of documents with the cursor of the next (None after the last)."""


def _print_json(pages: Pages, limit: int | None) -> None:
    """Every document as one JSON array; with ``--limit``, the page and its next cursor."""
    docs: list[dict[str, Any]] = []
    nxt: str | None = None
    for page, after in pages:
        docs.extend(page)
        nxt = after
    print_json({"documents": docs, "next_cursor": nxt} if limit is not None else docs)


def _print_pages(pages: Pages, collection: str, limit: int | None,
                 cursor: str | None) -> None:
    """Each page as it comes; after a ``--limit`` page, the cursor of the next on
    stderr."""
    listed = 0
    nxt: str | None = None
    for page, after in pages:
        listed += len(page)
        nxt = after
        _print(page)
    if not listed and cursor is None:
        console.print(f"{collection}: no documents", highlight=False, markup=False)
    if limit is not None and nxt is not None:
        err_console.print(f"more: --cursor {nxt}", highlight=False, markup=False,
                          soft_wrap=True)


def _local(config: SearchConfig | None, collection: str, limit: int | None,
           cursor: str | None) -> Iterator[tuple[list[dict[str, Any]], str | None]]:
    from agent_search.kb import check_offset, list_documents_page

    assert config is not None
    scope = ("kb-local", collection)
    offset = None if cursor is None else _offset_of(cursor, scope, check_offset)
    while True:
        try:
            page, offset = anyio.run(functools.partial(
                list_documents_page, config, collection, limit=limit or PAGE, offset=offset))
        except ValueError as exc:  # a StoreError goes up to the command, which says it
            fail(str(exc))
        yield page, (make_cursor(scope, {"offset": offset}) if offset is not None else None)
        if offset is None or limit is not None:
            return


def _offset_of(cursor: str, scope: tuple[str, str], check: Callable[[str], str]) -> str:
    """The store offset ``--cursor`` carries (``check`` validates it); a clear error for
    a cursor of another collection, a tampered or a malformed one."""
    try:
        return check(str(read_cursor(cursor, scope).get("offset")))
    except (CursorError, ValueError) as exc:
        fail(f"--cursor: {exc}".replace("--cursor: cursor: ", "--cursor: "))


def _remote(server: str, collection: str, api_key_env: str, limit: int | None,
            cursor: str | None) -> Iterator[tuple[list[dict[str, Any]], str | None]]:
    from agent_search.cli._kb_remote import RemoteError, list_remote

    try:
        yield from list_remote(server, collection, api_key_env, limit=limit or PAGE,
                               cursor=cursor, pages=1 if limit is not None else None)
    except RemoteError as exc:
        fail(str(exc), 2 if " 404: " in str(exc) else 1)


def _print(docs: list[dict[str, Any]]) -> None:
    for doc in docs:
        console.print(f"{doc['source']}\t{plural(doc['chunks'], 'chunk')}\t{_readers(doc)}\t"
                      f"{doc['document_id']}", highlight=False, markup=False)


def _readers(doc: dict[str, Any]) -> str:
    if doc.get("share") == "public":
        return "public"
    owner = f"owner {doc['owner']}" if doc.get("owner") else ""
    team = f"team {doc['team']}" if doc.get("team") and doc.get("share") == "team" else ""
    return ", ".join(p for p in (owner, team) if p) or "no one"
