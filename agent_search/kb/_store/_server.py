"""The server store: a Qdrant server or cluster (``kb.url``) through qdrant-client.

The same requests as the embedded store, translated to qdrant-client's models; the server
runs the same engine, so filters, fusions and scores mean the same. Collection settings
live in the collection's Qdrant metadata. The collection statistics (document
frequencies, moments, postings) are kept on the server too, in a sibling collection
``_stats.<name>`` maintained by each write through the same code as the embedded store's
(:mod:`agent_search.kb._store._stats_keeper`), so the same documents rank alike on both stores.

qdrant-client's local mode (``QdrantClient(path=…)``) also fits here; the tests use it as
the server's stand-in so this code path stays exercised without a server.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from agent_search.kb._store._base import (
    DENSE,
    SPARSE,
    CollectionInfo,
    CollectionNotFound,
    PointData,
    QuerySpec,
    Record,
    RescoreQuery,
    Scored,
    StoreError,
    VectorQuery,
    engine_id,
)
from agent_search.kb._store._filters import (
    Condition,
    Group,
    HasId,
    IndexKind,
    IsEmpty,
    IsNull,
    Match,
    MatchAny,
    MatchExcept,
    MatchText,
    Range,
)
from agent_search.kb._store._sparse import SparseVec
from agent_search.kb._store._stats import CollectionStats
from agent_search.kb._store._stats_keeper import StatsKeeper
from agent_search.kb._store._stats_state import Repaired
from agent_search.kb._store._stats_vault import SIBLING_PREFIX, ServerVault

if TYPE_CHECKING:  # qdrant-client is imported where it is used: it takes ~1 s
    from qdrant_client import QdrantClient, models

    from agent_search.kb.settings import KBSettings


LOCAL_SCHEME = "file://"
"""``kb.url: file:///abs/folder`` opens qdrant-client's local mode in that folder: the
server path without a server (one process at a time), to compare the two stores on the
same documents (``eval retrieval``, the benchmarks)."""


def server_client(settings: KBSettings) -> QdrantClient:
    """A client of the server at ``kb.url`` (key from ``kb.api_key_env``), or of
    qdrant-client's local mode for a ``file://`` URL."""
    from qdrant_client import QdrantClient

    url = settings.url or ""
    if url.startswith(LOCAL_SCHEME):
        folder = url[len(LOCAL_SCHEME):]
        if not folder.startswith("/"):
            raise StoreError(f"kb.url {url!r}: a local-mode folder is an absolute path "
                             "(file:///abs/folder)")
        try:
            return QdrantClient(path=folder)
        except RuntimeError as exc:  # the folder is open in another process
            raise StoreError(f"kb.url {url!r}: {str(exc).splitlines()[0]}") from exc
    api_key = None
    if settings.api_key_env:
        api_key = os.environ.get(settings.api_key_env)
        if not api_key:
            raise StoreError(f"kb.api_key_env: environment variable "
                             f"{settings.api_key_env} is not set")
    return QdrantClient(url=settings.url, api_key=api_key, timeout=30)


class ServerStore:
    """Collection operations on one qdrant-client client (serialised by a lock)."""

    def __init__(self, client: QdrantClient, *, location: str, local: bool = False) -> None:
        self.client = client
        self.location = location
        self.local = local  # qdrant-client's local mode: no payload indexes there
        self.lock = threading.RLock()
        self._keeper = StatsKeeper(self, lambda name: ServerVault(client, name))

    @contextmanager
    def _named(self, name: str) -> Iterator[None]:
        """Hold the lock for an operation on the collection ``name``; a failure because
        the collection does not exist is :class:`CollectionNotFound`, as on the embedded
        store (the client says so differently: ValueError in local mode, a 404 from a
        server)."""
        with self.lock:
            try:
                yield
            except StoreError:
                raise
            except Exception as exc:
                if not self.client.collection_exists(name):
                    raise CollectionNotFound(name) from exc
                raise

    def collections(self) -> list[str]:
        with self.lock:
            return sorted(c.name for c in self.client.get_collections().collections
                          if not c.name.startswith(SIBLING_PREFIX))

    def exists(self, name: str) -> bool:
        with self.lock:
            return bool(self.client.collection_exists(name))

    def info(self, name: str) -> CollectionInfo:
        with self.lock:
            if not self.client.collection_exists(name):
                raise CollectionNotFound(name)
            info = self.client.get_collection(name)
            count = self.client.count(name, exact=True).count
            return CollectionInfo(name, int(count), dict(info.config.metadata or {}))

    def create(self, name: str, dimensions: int, meta: dict[str, Any],
               indexes: dict[str, IndexKind]) -> None:
        from qdrant_client import models
        with self.lock:
            if self.client.collection_exists(name):
                raise StoreError(f"collection {name!r} already exists")
            self.client.create_collection(
                name,
                vectors_config={DENSE: models.VectorParams(size=dimensions,
                                                           distance=models.Distance.COSINE)},
                sparse_vectors_config={SPARSE: models.SparseVectorParams(
                    modifier=models.Modifier.IDF)},
                metadata=meta)
            self.ensure_indexes(name, indexes)
            self._keeper.created(name, dimensions)

    def update_meta(self, name: str, meta: dict[str, Any]) -> None:
        with self._named(name):
            self.client.update_collection(name, metadata=meta)

    def drop(self, name: str) -> bool:
        with self.lock:
            if not self.client.collection_exists(name):
                return False
            self._keeper.forget(name)
            self.client.delete_collection(name)
            return True

    def ensure_indexes(self, name: str, fields: dict[str, IndexKind]) -> None:
        from qdrant_client import models
        if self.local or not fields:
            return
        schema = {"keyword": models.PayloadSchemaType.KEYWORD,
                  "integer": models.PayloadSchemaType.INTEGER,
                  "float": models.PayloadSchemaType.FLOAT,
                  "bool": models.PayloadSchemaType.BOOL, "text": models.PayloadSchemaType.TEXT}
        with self._named(name):
            have = self.client.get_collection(name).payload_schema or {}
            for key, kind in fields.items():
                if key not in have:
                    self.client.create_payload_index(name, key, schema[kind])

    def upsert(self, name: str, points: list[PointData]) -> None:
        from qdrant_client import models
        if not points:
            return
        structs = [models.PointStruct(
            id=engine_id(p.id), payload=p.payload,
            vector={DENSE: p.dense, SPARSE: models.SparseVector(indices=p.sparse.indices,
                                                                values=p.sparse.values)})
            for p in points]
        with self._named(name):
            self._keeper.write(name, [p.id for p in points],
                               lambda: self.client.upsert(name, points=structs, wait=True))

    def delete(self, name: str, ids: list[str]) -> None:
        from qdrant_client import models
        if not ids:
            return
        selector = models.PointIdsList(points=[engine_id(i) for i in ids])
        with self._named(name):
            self._keeper.write(name, ids, lambda: self.client.delete(
                name, points_selector=selector, wait=True), delete=True)

    def scroll(self, name: str, flt: Condition | None, *, limit: int, offset: str | None,
               payload: bool | list[str], vectors: bool) -> tuple[list[Record], str | None]:
        with self._named(name):
            points, nxt = self.client.scroll(name, scroll_filter=to_models(flt), limit=limit,
                                             offset=engine_id(offset) if offset is not None
                                             else None, with_payload=payload,
                                             with_vectors=vectors)
        return [_record(p) for p in points], (str(nxt) if nxt is not None else None)

    def query_batch(self, name: str, queries: list[QuerySpec]) -> list[list[Scored]]:
        if not queries:
            return []
        requests = [_request(q) for q in queries]
        with self._named(name):
            responses = self.client.query_batch_points(name, requests=requests)
        out: list[list[Scored]] = []
        for resp in responses:
            points: list[models.ScoredPoint] = resp.points
            out.append([Scored(str(p.id), float(p.score),
                               dict(p.payload) if p.payload is not None else None)
                        for p in points])
        return out

    def retrieve(self, name: str, ids: list[str], *, payload: bool,
                 vectors: bool | list[str]) -> list[Record]:
        if not ids:
            return []
        with self._named(name):
            points = self.client.retrieve(name, ids=[engine_id(i) for i in ids],
                                          with_payload=payload,
                                          with_vectors=vectors)
        return [_record(p) for p in points]

    def count(self, name: str, flt: Condition | None = None) -> int:
        with self._named(name):
            return int(self.client.count(name, count_filter=to_models(flt), exact=True).count)

    def stats(self, name: str) -> CollectionStats | None:
        with self.lock:
            return self._keeper.stats(name)

    def settle(self, name: str) -> None:
        with self.lock:
            finish = self._keeper.settle(name)
        finish()  # the statistics' records, written without the store's lock

    def repair(self, name: str) -> Repaired:
        """Rebuild the collection's statistics from every point."""
        with self.lock:
            if not self.client.collection_exists(name):
                raise CollectionNotFound(name)
            return self._keeper.repair(name)

    def close(self) -> None:
        with self.lock:
            self.client.close()


def _record(p: Any) -> Record:
    from qdrant_client import models
    vec = p.vector if isinstance(p.vector, dict) else {}
    dense = vec.get(DENSE)
    sparse = vec.get(SPARSE)
    return Record(str(p.id), dict(p.payload or {}),
                  [float(x) for x in dense] if isinstance(dense, list) else None,
                  SparseVec(list(sparse.indices), list(sparse.values))
                  if isinstance(sparse, models.SparseVector) else None)


def _vector(v: list[float] | SparseVec) -> Any:
    from qdrant_client import models
    if isinstance(v, SparseVec):
        return models.SparseVector(indices=v.indices, values=v.values)
    return v


def _request(q: QuerySpec) -> models.QueryRequest:
    from qdrant_client import models
    if isinstance(q, VectorQuery):
        return models.QueryRequest(query=_vector(q.vector), using=q.using,
                                   filter=to_models(q.filter), limit=q.limit,
                                   with_payload=q.with_payload)
    prefetch = [models.Prefetch(query=_vector(p.vector), using=p.using, limit=p.limit,
                                filter=to_models(p.filter)) for p in q.prefetch]
    if isinstance(q, RescoreQuery):
        return models.QueryRequest(prefetch=prefetch, query=_vector(q.vector), using=q.using,
                                   limit=q.limit, with_payload=False)
    query: Any = (models.RrfQuery(rrf=models.Rrf(k=q.rrf_k, weights=list(q.weights)
                                                 if q.weights else None))
                  if q.fusion == "rrf" else models.FusionQuery(fusion=models.Fusion.DBSF))
    return models.QueryRequest(prefetch=prefetch, query=query, limit=q.limit,
                               with_payload=q.with_payload)


def to_models(c: Condition | None) -> models.Filter | None:
    """The qdrant-client filter of a :mod:`agent_search.kb._store._filters` condition."""
    from qdrant_client import models
    if c is None:
        return None
    out = _condition(c)
    return out if isinstance(out, models.Filter) else models.Filter(must=[out])


def _condition(c: Condition) -> Any:
    translate = _translations().get(type(c))
    if translate is None:
        raise TypeError(f"unknown filter condition {c!r}")
    return translate(c)


@functools.cache
def _translations() -> dict[type, Callable[[Any], Any]]:
    """qdrant-client's form of each kind of condition (built on first use: the client's
    models are imported only by a store that talks to a server)."""
    from qdrant_client import models

    def key(c: Any) -> Any:
        return models.PayloadField(key=c.key)

    return {
        Group: lambda c: models.Filter(must=[_condition(x) for x in c.must] or None,
                                       should=[_condition(x) for x in c.should] or None,
                                       must_not=[_condition(x) for x in c.must_not] or None),
        Match: lambda c: models.FieldCondition(key=c.key,
                                               match=models.MatchValue(value=c.value)),
        MatchAny: lambda c: models.FieldCondition(key=c.key,
                                                  match=models.MatchAny(any=list(c.values))),
        MatchExcept: lambda c: models.FieldCondition(key=c.key, match=models.MatchExcept(
            **{"except": list(c.values)})),
        Range: lambda c: models.FieldCondition(key=c.key, range=models.Range(
            gt=c.gt, gte=c.gte, lt=c.lt, lte=c.lte)),
        MatchText: lambda c: models.FieldCondition(key=c.key,
                                                   match=models.MatchText(text=c.text)),
        IsNull: lambda c: models.IsNullCondition(is_null=key(c)),
        IsEmpty: lambda c: models.IsEmptyCondition(is_empty=key(c)),
        HasId: lambda c: models.HasIdCondition(has_id=[engine_id(i) for i in c.ids]),
    }
