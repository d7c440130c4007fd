"""The collection statistics as an exact, updatable state: a point's contribution is added
when it is written and taken away when it is replaced or deleted, so an ingest costs what
it writes, not what the collection holds (issue 33: a full rebuild re-read every point).

Every sum is an integer: a unit vector's components are rounded to multiples of
2⁻¹⁸ (:data:`DENSE_SCALE`) and a BM25 weight and its square to multiples of 2⁻²⁰
(:data:`WEIGHT_SCALE`) before they are added, and the products of the dense second moment
are summed as integers too (exact float64 products of integers < 2³⁶, pages small enough
that every partial sum stays under 2⁵³). Integer sums do not depend on the order of the
additions and subtractions, so the state after any sequence of writes is bit for bit the
one a full rebuild from the same points gives (``tests/kb/test_stats_state.py``). The
rounding moves a cosine's mean and variance by under 10⁻⁵ — nothing the fusion can see.

Each point holds a *slot* (the lowest free one); slots are grouped in blocks of
:data:`BLOCK` and each block keeps its slots' point ids and the postings (term, slot,
weight) of its points, sorted by term and slot. A write touches the blocks of the slots it
frees or fills, so what is saved after an ingest is the head (the dense moments and the
per-term sums: ~1.2 MB + 32 bytes a term) and those blocks, whatever the collection's size.
The query-time view (:class:`~agent_search.kb._store._stats.CollectionStats`) shares the blocks.
"""

from __future__ import annotations

import heapq
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agent_search.errors import RunError
from agent_search.kb._store._stats import CollectionStats, Postings

DENSE_SCALE = float(2 ** 18)
WEIGHT_SCALE = float(2 ** 20)
BLOCK = 2048
_PAGE = 1024  # dense rows summed per exact float64 product (< 2⁵³ / 2³⁶ rows)
_EMPTY = Postings(np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int32),
                  np.zeros(0, np.float32))


@dataclass(frozen=True, slots=True)
class Repaired:
    """What a rebuild of the statistics (``kb repair``) found."""

    points: int
    terms: int
    seconds: float


class StateError(RunError):
    """The state and the points disagree (a point it does not know, a negative count):
    the statistics must be rebuilt from the points."""


@dataclass(frozen=True, slots=True)
class Vectors:
    """A point as stored: its id, unit dense vector (as the engine keeps it) and BM25
    weights."""

    id: str
    dense: Sequence[float] | None
    indices: Sequence[int]
    values: Sequence[float]


@dataclass(slots=True)
class _Terms:
    """Per-term integer sums of a batch of points (sorted terms)."""

    terms: NDArray[np.int64]
    df: NDArray[np.int64]
    wsum: NDArray[np.int64]
    wsq: NDArray[np.int64]


@dataclass(slots=True)
class _Block:
    ids: list[str]  # per slot of the block ('' when free)
    postings: Postings


@dataclass(slots=True)
class StatsState:
    """Exact sums over a collection's points (see the module docstring)."""

    dims: int
    points: int = 0
    dense_sum: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    dense_second: NDArray[np.int64] = field(default_factory=lambda: np.zeros((0, 0), np.int64))
    sums: _Terms = field(default_factory=lambda: _Terms(*(np.zeros(0, np.int64),) * 4))
    blocks: dict[int, _Block] = field(default_factory=dict)
    slot_of: dict[str, int] = field(default_factory=dict)
    free: list[int] = field(default_factory=list)  # a heap of free slots under next_slot
    next_slot: int = 0
    touched: set[int] = field(default_factory=set)  # blocks changed since the last save

    def __post_init__(self) -> None:
        if not len(self.dense_sum):
            self.dense_sum = np.zeros(self.dims, np.int64)
            self.dense_second = np.zeros((self.dims, self.dims), np.int64)

    # -- writes ---------------------------------------------------------------------------

    def add(self, points: Sequence[Vectors]) -> None:
        """Add points the state does not hold yet (each takes the lowest free slot)."""
        slots = []
        for p in points:
            if p.id in self.slot_of:
                raise StateError(f"point {p.id} is already counted")
            slot = heapq.heappop(self.free) if self.free else self._append_slot()
            self.slot_of[p.id] = slot
            self._block(slot).ids[slot % BLOCK] = p.id
            slots.append(slot)
        self._apply(points, slots, +1)

    def remove(self, points: Sequence[Vectors]) -> None:
        """Take away points the state holds (as they are stored: the same vectors that
        were added)."""
        slots = []
        for p in points:
            slot = self.slot_of.pop(p.id, None)
            if slot is None:
                raise StateError(f"point {p.id} is not counted")
            self._block(slot).ids[slot % BLOCK] = ""
            heapq.heappush(self.free, slot)
            slots.append(slot)
        self._apply(points, slots, -1)

    def _append_slot(self) -> int:
        self.next_slot += 1
        return self.next_slot - 1

    def _block(self, slot: int) -> _Block:
        b = slot // BLOCK
        block = self.blocks.get(b)
        if block is None:
            block = self.blocks[b] = _Block([""] * BLOCK, _EMPTY)
        return block

    def _apply(self, points: Sequence[Vectors], slots: list[int], sign: int) -> None:
        if not points:
            return
        self.points += sign * len(points)
        s, m = _dense_sums(points, self.dims)
        self.dense_sum += sign * s
        self.dense_second += sign * m
        terms, docs, weights = _flat_postings(points, slots)
        self.sums = _merge(self.sums, _term_sums(terms, weights), sign)
        blocks = np.asarray(slots, np.int64) // BLOCK
        per_posting = docs.astype(np.int64) // BLOCK
        for b in np.unique(blocks).tolist():
            mine = per_posting == b
            block = self.blocks[b]
            if sign > 0:
                block.postings = _with(block.postings, terms[mine], docs[mine], weights[mine])
            else:
                block.postings = _without(block.postings,
                                          np.asarray(slots, np.int32)[blocks == b])
            self.touched.add(b)
        if self.points < 0 or (len(self.sums.df) and int(self.sums.df.min()) < 0):
            raise StateError("the statistics count fewer points than were removed")

    # -- reads ----------------------------------------------------------------------------

    def view(self) -> CollectionStats:
        """The query-time statistics (floats from the exact sums; blocks shared)."""
        n = max(self.points, 1)
        s = self.sums
        return CollectionStats(
            self.points, self.dense_sum / DENSE_SCALE / n,
            self.dense_second / (DENSE_SCALE * DENSE_SCALE) / n, s.terms.copy(),
            s.df.astype(np.float64), s.wsum / WEIGHT_SCALE, s.wsq / WEIGHT_SCALE,
            tuple(self.blocks[b].postings for b in sorted(self.blocks)))

    def postings(self) -> set[tuple[str, int, float]]:
        """Every (point id, term, weight): what the blocks hold, whatever the slots."""
        out: set[tuple[str, int, float]] = set()
        for block in self.blocks.values():
            p = block.postings
            terms = np.repeat(p.terms, np.diff(p.offsets))
            for t, d, w in zip(terms.tolist(), p.docs.tolist(), p.weights.tolist(),
                               strict=True):
                out.add((block.ids[d % BLOCK], t, w))
        return out

    # -- persistence ----------------------------------------------------------------------

    def head_bytes(self, generation: int, block_gens: dict[int, int]) -> bytes:
        ids = sorted(self.blocks)
        return _npz(generation=np.asarray([generation]), points=np.asarray([self.points]),
                    dims=np.asarray([self.dims]), next_slot=np.asarray([self.next_slot]),
                    dense_sum=self.dense_sum, dense_second=self.dense_second,
                    terms=self.sums.terms, df=self.sums.df, wsum=self.sums.wsum,
                    wsq=self.sums.wsq, blocks=np.asarray(ids, np.int64),
                    block_gens=np.asarray([block_gens[b] for b in ids], np.int64))

    def block_bytes(self, b: int, generation: int) -> bytes:
        block = self.blocks[b]
        p = block.postings
        return _npz(generation=np.asarray([generation]), ids=np.asarray(block.ids),
                    terms=p.terms, offsets=p.offsets, docs=p.docs, weights=p.weights)

    @classmethod
    def from_records(cls, head: bytes, blocks: dict[int, bytes]) -> tuple[StatsState, int,
                                                                          dict[int, int]]:
        """A saved state: (state, generation, block → generation it was written at).
        Raises :class:`StateError` when a block is missing or of another generation
        (a save in progress elsewhere)."""
        try:
            return cls._from(_load(head), blocks)
        except (KeyError, IndexError, TypeError) as exc:
            raise StateError(f"incomplete statistics record: {exc}") from exc

    @classmethod
    def _from(cls, h: dict[str, NDArray[np.generic]],
              blocks: dict[int, bytes]) -> tuple[StatsState, int, dict[int, int]]:
        state = cls(int(h["dims"][0]), int(h["points"][0]), _i64(h["dense_sum"]),
                    _i64(h["dense_second"]), _Terms(_i64(h["terms"]), _i64(h["df"]),
                                                    _i64(h["wsum"]), _i64(h["wsq"])),
                    next_slot=int(h["next_slot"][0]))
        gens = dict(zip(h["blocks"].tolist(), h["block_gens"].tolist(), strict=True))
        for b, gen in gens.items():
            raw = blocks.get(b)
            if raw is None:
                raise StateError(f"statistics block {b} is missing")
            data = _load(raw)
            if int(data["generation"][0]) != gen:
                raise StateError(f"statistics block {b} is of another save")
            ids = [str(i) for i in data["ids"].tolist()]
            state.blocks[b] = _Block(ids, Postings(
                _i64(data["terms"]), _i64(data["offsets"]),
                np.asarray(data["docs"], np.int32), np.asarray(data["weights"], np.float32)))
            for i, pid in enumerate(ids):
                if pid:
                    state.slot_of[pid] = b * BLOCK + i
        used = set(state.slot_of.values())
        state.free = [s for s in range(state.next_slot) if s not in used]
        heapq.heapify(state.free)
        if len(state.slot_of) != state.points:
            raise StateError("the statistics' blocks do not hold its points")
        return state, int(h["generation"][0]), gens


def build(points: Iterable[Vectors], dims: int, page: int = 1024) -> StatsState:
    """The state of a collection from all its points (the repair, and the first time)."""
    state = StatsState(dims)
    batch: list[Vectors] = []
    for p in points:
        batch.append(p)
        if len(batch) >= page:
            state.add(batch)
            batch = []
    state.add(batch)
    return state


def _dense_sums(points: Sequence[Vectors],
                dims: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    rows = [p.dense for p in points if p.dense is not None and len(p.dense) == dims]
    total = np.zeros(dims, np.int64)
    second = np.zeros((dims, dims), np.int64)
    for lo in range(0, len(rows), _PAGE):
        m = np.asarray(rows[lo:lo + _PAGE], dtype=np.float64)
        norms = np.sqrt((m * m).sum(axis=1, keepdims=True))
        q = np.rint(m / np.maximum(norms, 1e-12) * DENSE_SCALE)
        total += q.sum(axis=0).astype(np.int64)
        second += np.rint(q.T @ q).astype(np.int64)  # exact: integers under 2⁵³
    return total, second


def _flat_postings(points: Sequence[Vectors], slots: list[int]) -> tuple[
        NDArray[np.int64], NDArray[np.int32], NDArray[np.float32]]:
    sizes = [len(p.indices) for p in points]
    terms = np.fromiter((t for p in points for t in p.indices), np.int64, sum(sizes))
    weights = np.fromiter((w for p in points for w in p.values), np.float32, sum(sizes))
    docs = np.repeat(np.asarray(slots, np.int32), sizes)
    kept = weights != 0.0
    return terms[kept], docs[kept], weights[kept]


def _term_sums(terms: NDArray[np.int64], weights: NDArray[np.float32]) -> _Terms:
    uniq, inverse = np.unique(terms, return_inverse=True)
    inverse = inverse.reshape(-1)
    w = weights.astype(np.float64)
    out = _Terms(uniq, np.bincount(inverse, minlength=len(uniq)).astype(np.int64),
                 np.zeros(len(uniq), np.int64), np.zeros(len(uniq), np.int64))
    np.add.at(out.wsum, inverse, np.rint(w * WEIGHT_SCALE).astype(np.int64))
    np.add.at(out.wsq, inverse, np.rint(w * w * WEIGHT_SCALE).astype(np.int64))
    return out


def _merge(a: _Terms, b: _Terms, sign: int) -> _Terms:
    """``a + sign·b`` per term; terms left in no point are dropped (as a rebuild has
    none of them)."""
    terms = np.union1d(a.terms, b.terms)
    ia = np.searchsorted(terms, a.terms)
    ib = np.searchsorted(terms, b.terms)
    out = []
    for x, y in ((a.df, b.df), (a.wsum, b.wsum), (a.wsq, b.wsq)):
        v = np.zeros(len(terms), np.int64)
        v[ia] = x
        v[ib] += sign * y
        out.append(v)
    keep = out[0] != 0
    return _Terms(terms[keep], out[0][keep], out[1][keep], out[2][keep])


def _csr(terms: NDArray[np.int64], docs: NDArray[np.int32],
         weights: NDArray[np.float32]) -> Postings:
    order = np.lexsort((docs, terms))  # by term, then slot: one layout for one content
    terms, docs, weights = terms[order], docs[order], weights[order]
    uniq, starts = np.unique(terms, return_index=True)
    return Postings(uniq.astype(np.int64), np.append(starts, len(terms)).astype(np.int64),
                    docs.astype(np.int32), weights.astype(np.float32))


def _flat(p: Postings) -> NDArray[np.int64]:
    return np.repeat(p.terms, np.diff(p.offsets))


def _with(p: Postings, terms: NDArray[np.int64], docs: NDArray[np.int32],
          weights: NDArray[np.float32]) -> Postings:
    return _csr(np.concatenate([_flat(p), terms]), np.concatenate([p.docs, docs]),
                np.concatenate([p.weights, weights]))


def _without(p: Postings, slots: NDArray[np.int32]) -> Postings:
    keep = ~np.isin(p.docs, slots)
    return _csr(_flat(p)[keep], p.docs[keep], p.weights[keep])


def _i64(a: NDArray[np.generic]) -> NDArray[np.int64]:
    return np.asarray(a, np.int64)


def head_generation(raw: bytes) -> int:
    """The generation a saved head was written at."""
    try:
        return int(_load(raw)["generation"][0])
    except KeyError as exc:
        raise StateError("the statistics head has no generation") from exc


def _npz(**arrays: Any) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _load(raw: bytes) -> dict[str, NDArray[np.generic]]:
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, KeyError) as exc:
        raise StateError(f"unreadable statistics record: {exc}") from exc
