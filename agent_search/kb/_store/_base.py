"""What a knowledge-base store is: the requests, records and errors both backends share,
and the :class:`KBStore` protocol they implement. The backends
(:mod:`agent_search.kb._store._edge`, :mod:`agent_search.kb._store._server`) and the
migration import this module; :mod:`agent_search.kb._store._open` opens them (so nothing
here imports a backend: no import circle). The overview is in :mod:`agent_search.kb._store._open`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from agent_search.errors import RunError
from agent_search.kb._store._filters import Condition, Group, IndexKind
from agent_search.kb._store._sparse import SparseVec
from agent_search.kb._store._stats import CollectionStats
from agent_search.kb._store._stats_state import Repaired

DENSE = "dense"
SPARSE = "bm25"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
EVAL_PREFIX = "eval-"


def is_eval_collection(name: str) -> bool:
    """True for the collections of ``eval retrieval`` (case-insensitive prefix)."""
    return name[:len(EVAL_PREFIX)].lower() == EVAL_PREFIX


class StoreError(RunError):
    """The knowledge-base store cannot be used; the message says why and what to do."""


class StoreLockedError(StoreError):
    """Another process holds the data home's knowledge base."""


class CollectionNotFound(StoreError):
    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"collection {name!r} not found")


def check_collection_name(name: str) -> str:
    if not _NAME.fullmatch(name or ""):
        raise ValueError(
            f"invalid collection name {name!r}: use letters, digits, '_', '-', '.' "
            "(starting with a letter or digit, at most 128 characters)"
        )
    return name


def engine_id(point_id: str) -> int | str:
    """A point id as the engines take it. Ids are strings in this package: a decimal
    number for integer ids (:data:`agent_search.kb._store._schema.POINT_IDS`), a UUID (always
    with hyphens, so never all digits) for older collections."""
    return int(point_id) if point_id.isdecimal() and point_id.isascii() else point_id


@dataclass(frozen=True, slots=True)
class CollectionInfo:
    name: str
    points: int
    meta: dict[str, Any]


@dataclass(frozen=True, slots=True)
class PointData:
    """A point to write: named dense and sparse vectors and its payload."""

    id: str
    dense: list[float]
    sparse: SparseVec
    payload: dict[str, Any]


@dataclass(slots=True)
class Record:
    """A stored point as read back (vectors only when asked for)."""

    id: str
    payload: dict[str, Any]
    dense: list[float] | None = None
    sparse: SparseVec | None = None


@dataclass(slots=True)
class Scored:
    id: str
    score: float
    payload: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class VectorQuery:
    """Nearest points by one named vector (``DENSE`` or ``SPARSE``)."""

    using: str
    vector: list[float] | SparseVec
    limit: int
    filter: Group | None = None
    with_payload: bool = False


@dataclass(frozen=True, slots=True)
class RescoreQuery:
    """The union of the prefetched lists, scored by one named vector (exact, for every
    candidate of either list; a sparse vector scores only the points it matches)."""

    prefetch: tuple[VectorQuery, ...]
    using: str
    vector: list[float] | SparseVec
    limit: int


@dataclass(frozen=True, slots=True)
class FusionQuery:
    """The engine's fusion (``rrf`` with weights, or ``dbsf``) of prefetched lists."""

    prefetch: tuple[VectorQuery, ...]
    fusion: str
    limit: int
    rrf_k: int = 60
    weights: tuple[float, ...] | None = None
    with_payload: bool = False


QuerySpec = VectorQuery | RescoreQuery | FusionQuery


class KBStore(Protocol):
    """What the kb needs of a store (both backends implement it)."""

    location: str

    def collections(self) -> list[str]: ...
    def exists(self, name: str) -> bool: ...
    def info(self, name: str) -> CollectionInfo: ...
    def create(self, name: str, dimensions: int, meta: dict[str, Any],
               indexes: dict[str, IndexKind]) -> None: ...
    def update_meta(self, name: str, meta: dict[str, Any]) -> None: ...
    def drop(self, name: str) -> bool: ...
    def ensure_indexes(self, name: str, fields: dict[str, IndexKind]) -> None: ...
    def upsert(self, name: str, points: list[PointData]) -> None: ...
    def delete(self, name: str, ids: list[str]) -> None: ...
    def scroll(self, name: str, flt: Condition | None, *, limit: int, offset: str | None,
               payload: bool | list[str], vectors: bool) -> tuple[list[Record], str | None]: ...
    def query_batch(self, name: str, queries: list[QuerySpec]) -> list[list[Scored]]: ...
    def retrieve(self, name: str, ids: list[str], *, payload: bool,
                 vectors: bool | list[str]) -> list[Record]: ...
    def count(self, name: str, flt: Condition | None = None) -> int: ...
    def stats(self, name: str) -> CollectionStats | None: ...
    def settle(self, name: str) -> None: ...
    def repair(self, name: str) -> Repaired: ...
    def close(self) -> None: ...


def scroll_all(store: KBStore, name: str, flt: Condition | None = None, *,
               payload: bool | list[str] = True, vectors: bool = False,
               page: int = 1024) -> Iterator[Record]:
    """Every point matching ``flt``, a page at a time."""
    offset: str | None = None
    while True:
        records, offset = store.scroll(name, flt, limit=page, offset=offset, payload=payload,
                                       vectors=vectors)
        yield from records
        if offset is None:
            return


def edge_root(home: Path) -> Path:
    """Where the embedded store keeps its collections."""
    return home / "kb" / "collections"
