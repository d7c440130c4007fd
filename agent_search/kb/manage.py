"""The collections of a store and what is in them: list, drop, prune the evaluation's.

Each operation runs in a worker thread and holds the collection's lock
(:func:`collection_lock`), which an ingest into the same collection also holds.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio

from agent_search.config import SearchConfig
from agent_search.kb._store import (
    KBStore,
    check_collection_name,
    get_store,
    is_eval_collection,
)
from agent_search.kb.settings import KBSettings

_COLLECTION_LOCKS: dict[tuple[int, str], threading.Lock] = {}
_COLLECTION_LOCKS_GUARD = threading.Lock()


def collection_lock(store: KBStore, name: str) -> threading.Lock:
    """The lock of one collection of one store in this process (ingest, drop, removal)."""
    with _COLLECTION_LOCKS_GUARD:
        return _COLLECTION_LOCKS.setdefault((id(store), name), threading.Lock())


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
    with collection_lock(store, collection):
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


