"""Neighbour feedback for the hybrid: a chunk that resembles the best results of the
query ranks higher.

Answers to one question come in groups: several passages tell the same event, or the
same finding, in their own words, and one of them often matches the question's wording
better than the others. After the hybrid has ranked, the mean of its top
``feedback_docs`` chunks' vectors (the *centre*; each weighted by how close it ranks to
the best, :data:`GROUP`) is compared with every candidate, and each candidate's ranking
key (its fused standard score) gains ``feedback_weight`` times the group's size times its
standard score of similarity to the centre, standardised by the collection's exact
moments in that direction (:meth:`agent_search.kb._store._stats.CollectionStats.moments`; by
the candidates' own when the store keeps none). Unlike Rocchio feedback
(``kb.prf_docs``), which moves the query and searches again, this adds a third feature to
the same candidates: one engine call, and the query's own evidence is not diluted.

It is used only where the top results can be a small part of what is searched: a
collection of at least :data:`MIN_SHARE` × ``feedback_docs`` chunks. In a collection of
five notes the top five *are* the collection, and their centre says nothing about the
question. Scores stay each hit's own evidence, capped by the hit ranked above, as before.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from agent_search.kb._store import (
    DENSE,
    CollectionStats,
    Group,
    HasId,
    KBStore,
    VectorQuery,
    all_of,
)

DEPTH = 30
"""Candidates ranked again when fewer results are asked for: the hybrid's top 30 (on the
zh-rgb questions, nDCG@10 0.7960 against 0.7966 when all 100 of each branch's are; 30,
not 100, are scored and compared with the centre)."""

MIN_SHARE = 20
"""The top ``feedback_docs`` chunks are taken as a sample of the answer only when they are
at most 1/20 of the collection."""


def applies(points: int, docs: int) -> bool:
    """Whether feedback from the top ``docs`` is used on a collection of ``points``."""
    return docs > 0 and points >= MIN_SHARE * docs


GROUP = 0.5
"""How fast a top hit's share in the centre falls with its distance from the best one, in
units of the fused key (share ``exp(−gap / GROUP)``); the feedback's weight is scaled by
the group's size beyond the first hit (``(Σ shares − 1) / (feedback_docs − 1)``). Chosen
with ``feedback_weight`` 3 on the even-numbered half of zh-rgb's questions, with SciFact's
505 non-test (dev) claims as the check that English does not drop: there the best claim's
abstract often stands alone (the 5th hit ~2.4 units under it, zh-rgb ~1), and feedback
from an unweighted top 5 took SciFact test from 0.743 to 0.705. The default weight is 2,
not 3: with MiniLM's second int8 build, 3 took SciFact test to 0.738 (docs/kb-scores.md)."""


def keys_with_feedback(store: KBStore, collection: str, ids: list[str], keys: list[float],
                       docs: int, weight: float, flt: Group | None,
                       stats: CollectionStats | None) -> list[float] | None:
    """The ranking keys of the candidates ``ids`` (in the hybrid's order, ``keys`` their
    fused standard scores) plus ``weight`` × the top group's size (see :data:`GROUP`) ×
    their standard score of similarity to the centre of the top ``docs``; ``None`` when
    there is nothing to add."""
    if len(ids) <= 1 or weight <= 0.0:
        return None
    top = _top_rows(store, collection, ids[:docs], keys[:docs])
    if top is None:
        return None
    centre, share = _centre(*top, docs)
    weight *= share
    if weight <= 0.0:
        return None
    found = store.query_batch(collection, [VectorQuery(
        DENSE, centre.astype(np.float32).tolist(), len(ids),
        all_of(flt, Group(must=(HasId(tuple(ids)),))))])[0]
    near = {p.id: p.score for p in found}
    mean, std = _moments(stats, centre, list(near.values()))
    if std <= 0.0:
        return None
    return [k + weight * (near.get(i, mean) - mean) / std for i, k in zip(ids, keys,
                                                                         strict=True)]


def _top_rows(store: KBStore, collection: str, ids: list[str], keys: list[float]
              ) -> tuple[NDArray[np.float64], list[float]] | None:
    """The unit dense vectors of the top hits ``ids`` that have one, and their keys;
    ``None`` when none has."""
    records = store.retrieve(collection, ids, payload=False, vectors=[DENSE])
    found_rows = {r.id: r.dense for r in records if r.dense}
    kept = [(i, k) for i, k in zip(ids, keys, strict=True) if i in found_rows]
    if not kept:
        return None
    rows = np.asarray([found_rows[i] for i, _ in kept], dtype=np.float64)
    rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    return rows, [k for _, k in kept]


def _centre(rows: NDArray[np.float64], keys: list[float], docs: int
            ) -> tuple[NDArray[np.float64], float]:
    """The top hits' weighted centre (unit length) and the share of the feedback weight
    their group earns (see :data:`GROUP`)."""
    # each top hit counts by how close it ranks to the best: a group of equally strong
    # results all count, one standout result stands for itself
    gaps = np.asarray([keys[0] - k for k in keys], dtype=np.float64)
    shares = np.exp(-np.maximum(gaps, 0.0) / GROUP)
    # and the feedback counts as much as the group is large: none for a lone first hit
    # (what resembles it already ranks by resembling the query), all for ``docs`` equals
    share = float(shares.sum() - 1.0) / (docs - 1) if docs > 1 else 1.0
    centre = (shares[:, None] * rows).sum(axis=0)
    centre /= max(float(np.linalg.norm(centre)), 1e-12)
    return centre, share


def _moments(stats: CollectionStats | None, centre: NDArray[np.float64],
             near: list[float]) -> tuple[float, float]:
    """Mean and standard deviation of the collection's cosines to ``centre`` (exact from
    the collection's aggregates), else of the candidates'."""
    if stats is not None and stats.points > 1:
        mo = stats.moments(centre.astype(np.float32), None, 1.0)
        if mo.dense_var > 0.0:
            return mo.dense_mean, math.sqrt(mo.dense_var)
    if len(near) < 2:
        return 0.0, 0.0
    return float(np.mean(near)), float(np.std(near))


def rocchio(query: NDArray[np.float32], feedback: NDArray[np.float32],
            weight: float) -> NDArray[np.float32]:
    """The query moved towards the mean of the feedback vectors (unit length again)."""
    q = query / max(float(np.linalg.norm(query)), 1e-12)
    moved = q + weight * feedback.mean(axis=0)
    out: NDArray[np.float32] = (moved / max(float(np.linalg.norm(moved)), 1e-12)).astype(
        np.float32)
    return out
