"""The collections of a store and what is in them: list, drop, prune the evaluation's;
the documents of a collection, listed and removed one at a time.

Each operation runs in a worker thread and holds the collection's lock
(:func:`collection_lock`), which an ingest into the same collection also holds. A document
is named by its source (the file's path, written any way that resolves to the same file,
or its source key as ``kb list COLLECTION`` shows it) or by its document id.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import anyio

from agent_search.config import SearchConfig
from agent_search.kb._ingest import source_key
from agent_search.kb._store import (
    ACL_OWNER,
    ACL_SHARE,
    ACL_TEAM,
    Access,
    CollectionNotFound,
    Condition,
    Group,
    IsNull,
    KBStore,
    Match,
    check_collection_name,
    get_store,
    is_eval_collection,
    scroll_all,
    store_absent,
)
from agent_search.kb.settings import KBSettings

_DOC_FIELDS = ["source", "document_id", "title", ACL_OWNER, ACL_TEAM, ACL_SHARE]

_COLLECTION_LOCKS: dict[tuple[int, str], threading.Lock] = {}
_COLLECTION_LOCKS_GUARD = threading.Lock()


def collection_lock(store: KBStore, name: str) -> threading.Lock:
    """The lock of one collection of one store in this process (ingest, drop, removal)."""
    with _COLLECTION_LOCKS_GUARD:
        return _COLLECTION_LOCKS.setdefault((id(store), name), threading.Lock())


def source_root(settings: KBSettings, home: Path) -> Path:
    """The folder sources are named relative to: ``kb.source_root``, else the folder that
    holds the data home (the project)."""
    if settings.source_root:
        return Path(settings.source_root).expanduser().resolve()
    return home.resolve().parent


def owner_scope(access: Access) -> Group:
    """The chunks of the same owner and team (null when none): an ingest's own chunks."""
    return Group(must=(Match(ACL_OWNER, access.owner) if access.owner else IsNull(ACL_OWNER),
                       Match(ACL_TEAM, access.team) if access.team else IsNull(ACL_TEAM)))


def documents_in(store: KBStore, collection: str, flt: Condition | None = None, *,
                 ids: bool = False) -> list[dict[str, Any]]:
    """The documents of a collection (those with a chunk matching ``flt``): source,
    document id, title, chunk count and who may read them (and, with ``ids``, their
    point ids), sorted by source."""
    docs: dict[tuple[Any, ...], dict[str, Any]] = {}
    for record in scroll_all(store, collection, flt, payload=_DOC_FIELDS):
        p = record.payload
        key = (p.get("source"), p.get("document_id"), p.get(ACL_OWNER), p.get(ACL_TEAM))
        doc = docs.get(key)
        if doc is None:
            doc = docs[key] = {"source": p.get("source"), "document_id": p.get("document_id"),
                               "title": p.get("title"), "chunks": 0,
                               "owner": p.get(ACL_OWNER), "team": p.get(ACL_TEAM),
                               "share": p.get(ACL_SHARE)}
            if ids:
                doc["ids"] = []
        doc["chunks"] += 1
        if ids:
            doc["ids"].append(record.id)
    return sorted(docs.values(), key=lambda d: (str(d["source"]), str(d["document_id"])))


_OFFSET = re.compile(r"\d{1,19}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def check_offset(offset: str) -> str:
    """A scroll offset as a page's ``next`` gives it (a point id); ``ValueError``
    otherwise (it comes from a cursor: never handed to the engine unchecked)."""
    if not _OFFSET.fullmatch(offset) or (offset.isdigit() and int(offset) >= 1 << 63):
        raise ValueError("cursor: not a position in this collection")
    return offset


def documents_page(store: KBStore, collection: str, flt: Condition | None, *, limit: int,
                   offset: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """One page of the documents with a chunk matching ``flt``: ``limit`` documents from
    ``offset`` (None: the first page) in the engine's order of their first chunks, each
    with its chunk count, and the offset of the next page (None: the last). Costs the
    page, not the collection: the first chunks (``chunk_index`` 0, indexed) are scrolled
    and each document's chunks counted by its indexed source."""
    first: Condition = Group(must=(Match("chunk_index", 0), *((flt,) if flt else ())))
    store.ensure_indexes(collection, {"chunk_index": "integer"})
    # one more than the page: its id starts the next page, and there is none without it
    records, _ = store.scroll(collection, first, limit=limit + 1, offset=offset,
                              payload=_DOC_FIELDS, vectors=False)
    nxt = records[limit].id if len(records) > limit else None
    records = records[:limit]
    docs = []
    for record in records:
        p = record.payload
        own = Group(must=tuple(Match(f, str(p[f])) if p.get(f) else IsNull(f) for f in (
            "source", "document_id", ACL_OWNER, ACL_TEAM)))
        docs.append({"source": p.get("source"), "document_id": p.get("document_id"),
                     "title": p.get("title"), "chunks": store.count(collection, own),
                     "owner": p.get(ACL_OWNER), "team": p.get(ACL_TEAM),
                     "share": p.get(ACL_SHARE)})
    docs.sort(key=lambda d: (str(d["source"]), str(d["document_id"])))
    return docs, nxt


def _written_store(settings: KBSettings, home: Path, collection: str) -> KBStore:
    """The store, for a command that reads ``collection``: not found, without opening
    (and so creating) a store in a data home that holds none."""
    if store_absent(settings, home):
        raise CollectionNotFound(collection)
    return get_store(settings, home)


async def list_documents_page(config: SearchConfig, collection: str,
                              flt: Condition | None = None, *, limit: int,
                              offset: str | None = None
                              ) -> tuple[list[dict[str, Any]], str | None]:
    """One page of :func:`list_documents` (see :func:`documents_page`); raises
    :class:`~agent_search.kb._store._open.CollectionNotFound`, ``ValueError`` for a bad
    ``offset``."""
    check_collection_name(collection)
    if offset is not None:
        check_offset(offset)
    settings = KBSettings.from_config(config)

    def _page() -> tuple[list[dict[str, Any]], str | None]:
        store = _written_store(settings, config.home, collection)
        if not store.exists(collection):
            raise CollectionNotFound(collection)
        return documents_page(store, collection, flt, limit=limit, offset=offset)

    return await anyio.to_thread.run_sync(_page)


async def list_documents(config: SearchConfig, collection: str,
                         flt: Condition | None = None) -> list[dict[str, Any]]:
    """The documents of ``collection`` (``kb list COLLECTION``), or only those with a
    chunk matching ``flt`` (the HTTP service passes what the caller may read); raises
    :class:`~agent_search.kb._store._open.CollectionNotFound` when there is no such collection."""
    check_collection_name(collection)
    settings = KBSettings.from_config(config)

    def _list() -> list[dict[str, Any]]:
        store = _written_store(settings, config.home, collection)
        if not store.exists(collection):
            raise CollectionNotFound(collection)
        return documents_in(store, collection, flt)

    return await anyio.to_thread.run_sync(_list)


async def remove_document(config: SearchConfig, collection: str, target: str, *,
                          access: Access | None = None) -> list[dict[str, Any]]:
    """Remove the document(s) named by ``target`` — a file path (it need not exist any
    more), a source as listed, or a document id — from ``collection`` and its graph.
    With ``access``, only the documents of that owner and team are candidates (a caller
    removes its own); without, any (the local operator). Returns what was removed (empty:
    nothing matched); raises :class:`~agent_search.kb._store._open.CollectionNotFound`."""
    check_collection_name(collection)
    if not target or len(target) > 4096 or "\x00" in target:
        raise ValueError("a document is named by a path, a source or an id "
                         "(at most 4096 characters, no NUL)")
    settings = KBSettings.from_config(config)
    return await anyio.to_thread.run_sync(_remove_sync, settings, config.home, collection,
                                          target, access)


def _remove_sync(settings: KBSettings, home: Path, collection: str, target: str,
                 access: Access | None) -> list[dict[str, Any]]:
    store = get_store(settings, home)
    names = {target, source_key(Path(target).expanduser(), source_root(settings, home))}
    named = Group(should=(*(Match("source", n) for n in sorted(names)),
                          Match("document_id", target)))
    flt = named if access is None else Group(must=(named, owner_scope(access)))
    with collection_lock(store, collection):
        if not store.exists(collection):
            raise CollectionNotFound(collection)
        docs = documents_in(store, collection, flt, ids=True)
        delete_points(store, home, collection, [i for d in docs for i in d["ids"]])
    return [{k: v for k, v in d.items() if k != "ids"} for d in docs]


def delete_points(store: KBStore, home: Path, collection: str, ids: list[str]) -> None:
    """Delete points and forget them in the collection's graph (when it has one)."""
    if not ids:
        return
    store.delete(collection, ids)
    store.settle(collection)  # the statistics the deletion updated are saved
    from agent_search.kb._retrieval import graph_path, update_graph

    if graph_path(home, collection).exists():
        update_graph(home, collection, [], removed=ids)


async def repair_collection(config: SearchConfig, collection: str) -> dict[str, Any]:
    """Rebuild ``collection``'s statistics from every point (``kb repair``): ingest keeps
    them up to date write by write, and a crash is detected and repaired on the next
    read, so this is for a store written by other means or suspected of drift. Returns
    the points and terms counted and the seconds it took."""
    check_collection_name(collection)
    settings = KBSettings.from_config(config)

    def _repair() -> dict[str, Any]:
        store = _written_store(settings, config.home, collection)
        with collection_lock(store, collection):
            if not store.exists(collection):
                raise CollectionNotFound(collection)
            done = store.repair(collection)
            chunker = store.info(collection).meta.get("chunker")
        return {"collection": collection, "points": done.points, "terms": done.terms,
                "seconds": round(done.seconds, 3), "rechunk": _rechunk_note(chunker)}

    return await anyio.to_thread.run_sync(_repair)


def _rechunk_note(chunker: Any) -> str | None:
    """What ``kb repair`` says of a collection chunked by older rules (its chunks are
    re-made from their files, which repair does not read: the next ingest does it)."""
    from agent_search.kb._ingest import CHUNKER

    if chunker == CHUNKER:
        return None
    return ("chunked by older rules (a chunk with its title and heading path could exceed "
            "the model's window, so its end was never embedded): ingest its files again "
            "to re-chunk them")


async def list_collections(config: SearchConfig, readable: Condition | None = None
                           ) -> list[dict[str, Any]]:
    """Every collection with its point count and recorded settings; ``evaluation`` is true
    for the collections of ``eval retrieval`` (which default searches never read). With
    ``readable`` (what a caller may read: the HTTP service's listing), only the
    collections the caller can read a chunk of, counting those chunks, eval ones left
    out."""
    settings = KBSettings.from_config(config)

    def _list() -> list[dict[str, Any]]:
        if store_absent(settings, config.home):
            return []  # nothing written here yet: nothing to open (nor to create)
        store = get_store(settings, config.home)
        out = []
        for name in store.collections():
            if readable is not None and is_eval_collection(name):
                continue
            info = store.info(name)
            points = info.points if readable is None else store.count(name, readable)
            if points or readable is None:
                out.append({"name": name, "points": points, **info.meta,
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
    with collection_lock(store, collection):
        dropped = store.drop(collection)
        from agent_search.kb._retrieval import graph_path

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


