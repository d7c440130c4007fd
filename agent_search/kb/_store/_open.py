"""The knowledge-base store: one small interface, two backends.

* **Qdrant Edge** (the default, :mod:`agent_search.kb._store._edge`): Qdrant's own engine
  embedded in the process, one shard per collection under ``$AGENT_SEARCH_HOME/kb/``.
  One process opens a data home at a time; a second one gets :class:`StoreLockedError`
  at once.
* **A Qdrant server** (``kb.url`` and ``kb.api_key_env``,
  :mod:`agent_search.kb._store._server`) through qdrant-client.

Both take the same requests (:class:`VectorQuery`, :class:`FusionQuery`, filters of
:mod:`agent_search.kb._store._filters`), so retrieval (:mod:`agent_search.kb._retrieval._search`) is
written once. Methods block: call them from a worker thread (the kb handler and the ingest
do), never on the event loop.

Each collection records the embedding model and dimension, and the BM25 parameters its
sparse vectors were computed with; a later ingest or a search with other settings is
refused with a clear error instead of returning garbage.

Collections named ``eval-…`` (:data:`EVAL_PREFIX`) belong to ``eval retrieval``: only the
evaluation ingests into them, and the kb handler never searches them unless it was built
for the evaluation (not something a request, hook, tool or MCP call can ask for).
"""

from __future__ import annotations

import atexit
import threading
from pathlib import Path

from agent_search.kb._store._base import KBStore, edge_root
from agent_search.kb.settings import KBSettings

__all__ = ["close_stores", "get_store", "store_absent"]
"""The rest of the store's names live in :mod:`agent_search.kb._store._base`; the
package's face exports them."""

_STORES: dict[str, KBStore] = {}
_STORES_LOCK = threading.Lock()


def store_absent(settings: KBSettings, home: Path) -> bool:
    """Whether the embedded store was never written in ``home``: a command that only
    reads (``kb list``, a search) then has nothing to read and opens nothing, since
    opening creates the store's folders and lock in a data home that had none."""
    from agent_search.kb._store._migrate import is_legacy

    # an earlier version's store is not absent: opening it says how to migrate it
    return not settings.url and not edge_root(home).is_dir() and not is_legacy(home)


def get_store(settings: KBSettings, home: Path) -> KBStore:
    """The process-wide store for these settings (opened on first use)."""
    key = f"url:{settings.url}" if settings.url else f"path:{edge_root(home).resolve()}"
    with _STORES_LOCK:
        store = _STORES.get(key)
        if store is None:
            store = _open(settings, home)
            if not _STORES:
                # close (and unlock) before interpreter teardown, not in __del__ during it
                atexit.register(close_stores)
            _STORES[key] = store
        return store


def _open(settings: KBSettings, home: Path) -> KBStore:
    if settings.url:
        from agent_search.kb._store._server import LOCAL_SCHEME, ServerStore, server_client

        return ServerStore(server_client(settings), location=settings.url,
                           local=settings.url.startswith(LOCAL_SCHEME))
    from agent_search.kb._store._edge import EdgeStore
    from agent_search.kb._store._migrate import check_not_legacy

    check_not_legacy(home)
    return EdgeStore(edge_root(home))


def close_stores() -> None:
    """Close every open store of this process (releases the data home's lock)."""
    with _STORES_LOCK:
        for store in _STORES.values():
            store.close()
        _STORES.clear()
