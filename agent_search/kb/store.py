"""The Qdrant store: one client per process per storage path (or server URL), and the
collection operations the kb needs.

Local mode (the default) keeps the collections on disk under ``$AGENT_SEARCH_HOME/qdrant``
with no server. A local storage folder can be opened by one process at a time (Qdrant takes
a file lock): every user in this process shares one client, calls on it are serialised by
a lock, and a second process gets :class:`StoreLockedError` with what to do. With
``kb.url`` (and ``kb.api_key_env``) the same code talks to a Qdrant server or cluster.

Each collection records in its Qdrant metadata the embedding model and dimension, and the
BM25 parameters its sparse vectors were computed with; a later ingest or a search with
other settings is refused with a clear error instead of returning garbage.

Collections named ``eval-…`` (:data:`EVAL_PREFIX`) belong to ``eval retrieval``: only the
evaluation ingests into them, and the kb handler never searches them unless it was built
for the evaluation (not something a request, hook, tool or MCP call can ask for).
"""

from __future__ import annotations

import atexit
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_search.kb.settings import KBSettings

if TYPE_CHECKING:  # qdrant-client is imported where it is used: it takes ~1 s
    from qdrant_client import QdrantClient, models

DENSE = "dense"
SPARSE = "bm25"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
EVAL_PREFIX = "eval-"


def is_eval_collection(name: str) -> bool:
    """True for the collections of ``eval retrieval`` (case-insensitive prefix)."""
    return name[:len(EVAL_PREFIX)].lower() == EVAL_PREFIX


class StoreError(RuntimeError):
    """The knowledge-base store cannot be used; the message says why and what to do."""


class StoreLockedError(StoreError):
    """Another process holds the local storage folder."""


class CollectionNotFound(StoreError):
    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"collection {name!r} not found")


def check_collection_name(name: str) -> str:
    if not _NAME.match(name or ""):
        raise ValueError(
            f"invalid collection name {name!r}: use letters, digits, '_', '-', '.' "
            "(starting with a letter or digit, at most 128 characters)"
        )
    return name


@dataclass(frozen=True, slots=True)
class CollectionInfo:
    name: str
    points: int
    meta: dict[str, Any]


class KBStore:
    """Collection operations on one Qdrant client. Methods block: call them in a thread."""

    def __init__(self, client: QdrantClient, *, location: str, local: bool) -> None:
        self.client = client
        self.location = location
        self.local = local
        self.lock = threading.RLock()
        self._versions: dict[str, int] = {}
        self._writes = 0
        # local mode: this process is the only writer, so listings and collection info
        # stay valid until it writes; cached per write count
        self._cache: dict[str, tuple[int, Any]] = {}

    def version(self, name: str) -> int:
        """Bumped on every write through this store (local mode: the only writer)."""
        return self._versions.get(name, 0)

    def _bump(self, name: str) -> None:
        self._versions[name] = self._versions.get(name, 0) + 1
        self._writes += 1

    def _cached(self, key: str) -> Any:
        if not self.local:
            return None
        hit = self._cache.get(key)
        return hit[1] if hit is not None and hit[0] == self._writes else None

    def _remember(self, key: str, value: Any) -> Any:
        if self.local:
            self._cache[key] = (self._writes, value)
        return value

    def collections(self) -> list[str]:
        with self.lock:
            cached = self._cached("\x00collections")
            if cached is not None:
                return list(cached)
            names = sorted(c.name for c in self.client.get_collections().collections)
            return list(self._remember("\x00collections", names))

    def exists(self, name: str) -> bool:
        with self.lock:
            return bool(self.client.collection_exists(name))

    def info(self, name: str) -> CollectionInfo:
        with self.lock:
            cached = self._cached(name)
            if cached is not None:
                return CollectionInfo(cached.name, cached.points, dict(cached.meta))
            if not self.client.collection_exists(name):
                raise CollectionNotFound(name)
            info = self.client.get_collection(name)
            count = self.client.count(name, exact=True).count
            meta = dict(info.config.metadata or {})
            found = CollectionInfo(name, int(count), meta)
            self._remember(name, CollectionInfo(name, int(count), dict(meta)))
            return found

    def create(self, name: str, dimensions: int, meta: dict[str, Any]) -> None:
        from qdrant_client import models
        with self.lock:
            self.client.create_collection(
                name,
                vectors_config={DENSE: models.VectorParams(size=dimensions,
                                                           distance=models.Distance.COSINE)},
                sparse_vectors_config={SPARSE: models.SparseVectorParams(
                    modifier=models.Modifier.IDF)},
                metadata=meta,
            )
            if not self.local:
                for key in ("source", "document_id"):
                    self.client.create_payload_index(name, key, models.PayloadSchemaType.KEYWORD)
            self._bump(name)

    def update_meta(self, name: str, meta: dict[str, Any]) -> None:
        with self.lock:
            self.client.update_collection(name, metadata=meta)
            self._writes += 1

    def drop(self, name: str) -> bool:
        with self.lock:
            if not self.client.collection_exists(name):
                return False
            self.client.delete_collection(name)
            self._bump(name)
            return True

    def source_hashes(self, name: str, source: str) -> dict[str, str]:
        """Point id → content hash of the chunks ingested from ``source``."""
        from qdrant_client import models
        found: dict[str, str] = {}
        flt = models.Filter(must=[models.FieldCondition(
            key="source", match=models.MatchValue(value=source))])
        offset: Any = None
        with self.lock:
            while True:
                points, offset = self.client.scroll(
                    name, scroll_filter=flt, limit=1024, offset=offset,
                    with_payload=["content_hash"], with_vectors=False)
                for p in points:
                    found[str(p.id)] = str((p.payload or {}).get("content_hash", ""))
                if offset is None:
                    return found

    def has_legacy_points(self, name: str, scheme: int) -> bool:
        """True when some point lacks ``id_scheme == scheme`` (written by an older ingest)."""
        from qdrant_client import models
        flt = models.Filter(must_not=[models.FieldCondition(
            key="id_scheme", match=models.MatchValue(value=scheme))])
        with self.lock:
            points, _ = self.client.scroll(name, scroll_filter=flt, limit=1,
                                           with_payload=False, with_vectors=False)
        return bool(points)

    def legacy_points(self, name: str, scheme: int, sources: list[str],
                      document_id: str) -> list[str]:
        """Ids of points of an older ingest (no ``id_scheme == scheme``) whose source is one
        of ``sources`` or whose document id is ``document_id``."""
        from qdrant_client import models
        flt = models.Filter(
            should=[models.FieldCondition(key="source", match=models.MatchAny(any=sources)),
                    models.FieldCondition(key="document_id",
                                          match=models.MatchValue(value=document_id))],
            must_not=[models.FieldCondition(key="id_scheme",
                                            match=models.MatchValue(value=scheme))])
        found: list[str] = []
        offset: Any = None
        with self.lock:
            while True:
                points, offset = self.client.scroll(
                    name, scroll_filter=flt, limit=1024, offset=offset,
                    with_payload=False, with_vectors=False)
                found.extend(str(p.id) for p in points)
                if offset is None:
                    return found

    def upsert(self, name: str, points: list[models.PointStruct]) -> None:
        if not points:
            return
        with self.lock:
            self.client.upsert(name, points=points, wait=True)
            self._bump(name)

    def delete(self, name: str, ids: list[str]) -> None:
        from qdrant_client import models
        if not ids:
            return
        with self.lock:
            self.client.delete(name, points_selector=models.PointIdsList(points=list(ids)),
                               wait=True)
            self._bump(name)

    def retrieve(self, name: str, ids: list[str]) -> dict[str, dict[str, Any]]:
        with self.lock:
            points = self.client.retrieve(name, ids=ids, with_payload=True, with_vectors=False)
        return {str(p.id): dict(p.payload or {}) for p in points}

    def scroll_all(self, name: str) -> list[models.Record]:
        """Every point with payload and vectors (to build the in-process index of local mode)."""
        out: list[models.Record] = []
        offset: Any = None
        with self.lock:
            while True:
                points, offset = self.client.scroll(name, limit=4096, offset=offset,
                                                    with_payload=True, with_vectors=True)
                out.extend(points)
                if offset is None:
                    return out

    def close(self) -> None:
        with self.lock:
            self.client.close()


_STORES: dict[str, KBStore] = {}
_STORES_LOCK = threading.Lock()


def get_store(settings: KBSettings, home: Path) -> KBStore:
    """The process-wide store for these settings (opened on first use)."""
    key = f"url:{settings.url}" if settings.url else f"path:{(home / 'qdrant').resolve()}"
    with _STORES_LOCK:
        store = _STORES.get(key)
        if store is None:
            store = _open(settings, home)
            if not _STORES:
                # close (and unlock) before interpreter teardown, not in __del__ during it
                atexit.register(close_stores)
            _STORES[key] = store
        return store


def build_client(settings: KBSettings, home: Path) -> QdrantClient:
    """A Qdrant server client when ``url`` is set, else local mode under ``home/qdrant``."""
    from qdrant_client import QdrantClient
    if settings.url:
        api_key = None
        if settings.api_key_env:
            api_key = os.environ.get(settings.api_key_env)
            if not api_key:
                raise StoreError(f"kb.api_key_env: environment variable "
                                 f"{settings.api_key_env} is not set")
        return QdrantClient(url=settings.url, api_key=api_key, timeout=30)
    path = home / "qdrant"
    try:
        path.mkdir(parents=True, exist_ok=True)
        return QdrantClient(path=str(path))
    except RuntimeError as exc:
        if "already accessed" in str(exc):
            raise StoreLockedError(
                f"the knowledge base at {path} is open in another process; stop that process "
                "or use a Qdrant server (kb.url) for concurrent access") from None
        raise StoreError(f"cannot open the knowledge base at {path}: {exc}") from None
    except (OSError, ValueError) as exc:  # unreadable or corrupt storage (meta.json, sqlite)
        raise StoreError(f"cannot open the knowledge base at {path} (corrupt or unreadable "
                         f"storage): {type(exc).__name__}: {exc}".splitlines()[0]) from None
    except Exception as exc:
        raise StoreError(f"cannot open the knowledge base at {path} (corrupt or unreadable "
                         f"storage): {type(exc).__name__}: {exc}".splitlines()[0]) from None


def _open(settings: KBSettings, home: Path) -> KBStore:
    client = build_client(settings, home)
    if settings.url:
        return KBStore(client, location=settings.url, local=False)
    return KBStore(client, location=str(home / "qdrant"), local=True)


def close_stores() -> None:
    """Close every open store of this process (releases local-mode locks)."""
    with _STORES_LOCK:
        for store in _STORES.values():
            store.close()
        _STORES.clear()
