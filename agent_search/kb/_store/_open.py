"""The knowledge-base store: one small interface, two backends.

* **Qdrant Edge** (the default, :mod:`agent_search.kb._store._edge`): Qdrant's own engine
  embedded in the process, one shard per collection under ``$AGENT_SEARCH_HOME/kb/``.
  One process opens a data home at a time; a second one gets :class:`StoreLockedError`
  at once.
* **A Qdrant server** (``kb.url`` and ``kb.api_key_env``,
  :mod:`agent_search.kb._store._server`) through qdrant-client.

Which one is a table, :data:`STORES`, chosen by ``kb.store`` (``edge`` or ``qdrant``;
unset: ``qdrant`` when ``kb.url`` is set, else ``edge``). A store of your own is a
:class:`StoreType` registered under a name by an entry point in the
``agent_search.kb_stores`` group; :class:`agent_search.testing.KBStoreTests` says what it
must pass.

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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agent_search.errors import ConfigError
from agent_search.kb._store._base import KBStore, StoreError, edge_root
from agent_search.registry import entry_point_plugins

if TYPE_CHECKING:
    from agent_search.kb.settings import KBSettings

__all__ = ["ENTRY_POINT_GROUP", "STORES", "StoreType", "close_stores", "get_store",
           "store_absent", "store_name", "store_type"]
"""The rest of the store's names live in :mod:`agent_search.kb._store._base`; the
package's face exports them."""


@dataclass(frozen=True, slots=True)
class StoreType:
    """One kind of kb store: how to open it for the settings and data home, what names
    one open store in the process (two settings with the same key share it), and
    whether a read-only command finds nothing to read (then nothing is opened)."""

    open: Callable[[KBSettings, Path], KBStore]
    key: Callable[[KBSettings, Path], str]
    absent: Callable[[KBSettings, Path], bool] = lambda settings, home: False


def _open_edge(settings: KBSettings, home: Path) -> KBStore:
    from agent_search.kb._store._edge import EdgeStore
    from agent_search.kb._store._migrate import check_not_legacy

    check_not_legacy(home)
    return EdgeStore(edge_root(home))


def _edge_absent(settings: KBSettings, home: Path) -> bool:
    """The embedded store was never written in ``home``: opening it would create its
    folders and lock in a data home that had none. An earlier version's store is not
    absent: opening it says how to migrate it."""
    from agent_search.kb._store._migrate import is_legacy

    return not edge_root(home).is_dir() and not is_legacy(home)


def _open_server(settings: KBSettings, home: Path) -> KBStore:
    from agent_search.kb._store._server import LOCAL_SCHEME, ServerStore, server_client

    if not settings.url:
        raise StoreError("kb.store 'qdrant' needs kb.url (the server's address, or "
                         "file:///abs/folder for qdrant-client's local mode)")
    return ServerStore(server_client(settings), location=settings.url,
                       local=settings.url.startswith(LOCAL_SCHEME))


STORES: dict[str, StoreType] = {
    "edge": StoreType(_open_edge, lambda s, home: f"path:{edge_root(home).resolve()}",
                      _edge_absent),
    "qdrant": StoreType(_open_server, lambda s, home: f"url:{s.url}"),
}
"""The kb stores by ``kb.store`` name: the builtin ones, then (on first look-up) the
plug-ins of :data:`ENTRY_POINT_GROUP`."""

ENTRY_POINT_GROUP = "agent_search.kb_stores"
"""The entry-point group plug-in stores (a :class:`StoreType`) are registered under."""

_plugins_read = False
_STORES: dict[str, KBStore] = {}
_STORES_LOCK = threading.Lock()


def load_plugins() -> None:
    """Add the :class:`StoreType` objects of the ``agent_search.kb_stores`` entry points
    to :data:`STORES` (once per process). One that cannot be loaded, is no StoreType or
    takes a builtin name is a ConfigError naming its entry point."""
    global _plugins_read
    if _plugins_read:
        return
    _plugins_read = True
    for name, kind, where in entry_point_plugins(ENTRY_POINT_GROUP, "kb store",
                                                 lambda loaded: loaded):
        if not isinstance(kind, StoreType) or name in STORES:
            raise ConfigError(f"kb store plug-in {where}: expected a StoreType under "
                              "a name not already in use", key=where)
        STORES[name] = kind


def store_name(settings: KBSettings) -> str:
    """The store ``settings`` choose: ``kb.store``, else ``qdrant`` when ``kb.url`` is
    set (as before the key existed), else the embedded ``edge``."""
    return settings.store or ("qdrant" if settings.url else "edge")


def store_type(name: str) -> StoreType:
    """The store named ``name``; a StoreError naming ``kb.store`` and the names there
    are when none is."""
    load_plugins()
    kind = STORES.get(name)
    if kind is None:
        raise StoreError(f"kb.store: unknown store {name!r}; one of {', '.join(STORES)}")
    return kind


def store_absent(settings: KBSettings, home: Path) -> bool:
    """Whether the chosen store was never written in ``home``: a command that only
    reads (``kb list``, a search) then has nothing to read and opens nothing."""
    return store_type(store_name(settings)).absent(settings, home)


def get_store(settings: KBSettings, home: Path) -> KBStore:
    """The process-wide store for these settings (opened on first use)."""
    kind = store_type(store_name(settings))
    key = kind.key(settings, home)
    with _STORES_LOCK:
        store = _STORES.get(key)
        if store is None:
            store = kind.open(settings, home)
            if not _STORES:
                # close (and unlock) before interpreter teardown, not in __del__ during it
                atexit.register(close_stores)
            _STORES[key] = store
        return store


def close_stores() -> None:
    """Close every open store of this process (releases the data home's lock)."""
    with _STORES_LOCK:
        for store in _STORES.values():
            store.close()
        _STORES.clear()
