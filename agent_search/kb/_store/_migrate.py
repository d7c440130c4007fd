"""Moving a data home made by Qdrant's local mode (``$AGENT_SEARCH_HOME/qdrant``, earlier
versions) to the embedded Qdrant Edge store.

Opening the store of such a home fails with one line that names the command,
``agent-search kb migrate``; it copies every collection with its recorded settings, its
points, their payloads and both vectors (nothing is re-embedded), checks the counts, and
then renames the old folder to ``qdrant.migrated-<time>`` (kept as the backup; delete it
when satisfied). Points written before documents had owners get the public access record
(:mod:`agent_search.kb._store._tenancy`): they were readable by everyone before, and stay so.
A migration that stopped half-way is redone from the start for the collections that do
not hold every point yet.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agent_search.kb._store._base import PointData, StoreError, StoreLockedError, edge_root
from agent_search.kb._store._sparse import SparseVec
from agent_search.kb._store._tenancy import ACL_SHARE, Access

if TYPE_CHECKING:
    from agent_search.kb._store._server import ServerStore

LEGACY_FOLDER = "qdrant"
PAGE = 512


class LegacyStoreError(StoreError):
    """The data home still holds a knowledge base of Qdrant's local mode."""


def legacy_path(home: Path) -> Path:
    return home / LEGACY_FOLDER


def is_legacy(home: Path) -> bool:
    folder = legacy_path(home)
    return (folder / "meta.json").is_file() or (folder / "collection").is_dir()


def check_not_legacy(home: Path) -> None:
    """Raise :class:`LegacyStoreError` (one line, with the command) for an old home."""
    if is_legacy(home):
        raise LegacyStoreError(
            f"the knowledge base at {legacy_path(home)} was made by an earlier version "
            "(Qdrant local mode); run 'agent-search kb migrate' to move it to the new store "
            "(vectors are copied, nothing is re-embedded, the old folder is kept as a backup)")


@dataclass(slots=True)
class Migrated:
    collections: dict[str, int]
    backup: Path | None


def migrate(home: Path) -> Migrated:
    """Copy every collection of the local-mode store of ``home`` into the embedded store
    and keep the old folder as a backup; blocking (call it from a worker thread)."""
    from agent_search.kb._store._edge import EdgeStore
    from agent_search.kb._store._schema import BASE_INDEXES

    if not is_legacy(home):
        return Migrated({}, None)
    old = _open_legacy(home)
    target = EdgeStore(edge_root(home))
    done: dict[str, int] = {}
    try:
        for name in old.collections():
            info = old.info(name)
            if target.exists(name):
                if target.count(name) == info.points:
                    done[name] = info.points
                    continue
                target.drop(name)  # a migration that stopped half-way
            dims = int(info.meta.get("dimensions") or 0)
            if dims <= 0:
                raise StoreError(f"collection {name!r} records no vector size; cannot migrate")
            target.create(name, dims, info.meta, BASE_INDEXES)
            offset: str | None = None
            while True:
                records, offset = old.scroll(name, None, limit=PAGE, offset=offset,
                                             payload=True, vectors=True)
                target.upsert(name, [PointData(
                    r.id, r.dense or [0.0] * dims, r.sparse or SparseVec([], []),
                    r.payload if ACL_SHARE in r.payload
                    else {**r.payload, **Access.of().payload()}) for r in records])
                if offset is None:
                    break
            target.settle(name)
            copied = target.count(name)
            if copied != info.points:
                raise StoreError(f"collection {name!r}: copied {copied} of {info.points} "
                                 "points; the old store is left as it was")
            done[name] = copied
    finally:
        old.close()
        target.close()
    backup = home / f"{LEGACY_FOLDER}.migrated-{time.strftime('%Y%m%d-%H%M%S')}"
    legacy_path(home).rename(backup)
    return Migrated(done, backup)


def _open_legacy(home: Path) -> ServerStore:
    from qdrant_client import QdrantClient

    from agent_search.kb._store._server import ServerStore

    path = legacy_path(home)
    try:
        client = QdrantClient(path=str(path))
    except RuntimeError as exc:
        if "already accessed" in str(exc):
            raise StoreLockedError(f"the knowledge base at {path} is open in another "
                                   "process; stop it and migrate again") from exc
        raise StoreError(f"cannot open the old knowledge base at {path}: {exc}") from exc
    except Exception as exc:
        raise StoreError(f"cannot open the old knowledge base at {path} (corrupt or "
                         f"unreadable): {type(exc).__name__}: {exc}".splitlines()[0]) from exc
    return ServerStore(client, location=str(path), local=True)
