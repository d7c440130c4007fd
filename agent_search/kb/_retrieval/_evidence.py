"""Scores as evidence over the query's background (:mod:`agent_search.kb._retrieval._background`):
how far a chunk stands above what unrelated text gets for this query and this model, per
branch, and how much each branch of the hybrid is trusted for one query. See
``docs/kb-scores.md``. Also the earlier scale (``kb.score_scale: reference``), the
probability of relevance fitted on SciFact (:data:`CALIBRATION`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from agent_search.kb._retrieval._background import Null
from agent_search.kb._store import SPARSE, KBStore, SparseVec


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0


@dataclass(frozen=True, slots=True)
class Calibration:
    """Constants of :mod:`agent_search.kb.calibrate` (logistic weights intercept first)."""

    dense: tuple[float, float]  # α0, α1 on the cosine
    sparse: tuple[float, float]  # γ0, γ1 on the coverage
    zscore: tuple[float, float]  # a, b on the fused standard score
    # per-query mean and variance of the cosine and the coverage over a collection,
    # averaged over the calibration queries: the statistics a small collection borrows
    reference: tuple[float, float, float, float]
    prior_chunks: float  # how many chunks' worth of weight the reference statistics get


CALIBRATION = Calibration(
    dense=(-14.1229, 19.9369), sparse=(-9.3541, 18.7246), zscore=(-10.0648, 1.3292),
    reference=(0.11021, 0.010959, 0.02299, 0.001266), prior_chunks=100.0)
"""Fitted on SciFact dev (505 non-test claims; 84,465 claim-chunk pairs, 685 of them
relevant) by ``python -m agent_search.kb.calibrate <scifact-dev> --split dev``. There the
calibrated hybrid ranks with nDCG@10 0.8965 (z-score fusion 0.8966; reference statistics
only, as on a server, 0.8949), and of the pairs it scores 0.5-0.6, 50% are relevant
(0.4-0.5: 42%, 0.8-0.9: 72%, 0.9-1: 89%, below 0.1: 0.2%). SciFact test nDCG@10: 0.7425."""


def calibrated_dense(cosine: float) -> float:
    a0, a1 = CALIBRATION.dense
    return sigmoid(a0 + a1 * cosine)


def calibrated_sparse(coverage: float) -> float:
    g0, g1 = CALIBRATION.sparse
    return sigmoid(g0 + g1 * coverage) if coverage > 0 else 0.0


def calibrated_fused(z: float) -> float:
    a, b = CALIBRATION.zscore
    return sigmoid(a + b * z)


@dataclass(frozen=True, slots=True)
class Evidence:
    """How a chunk's evidence over the background (:mod:`agent_search.kb._retrieval._background`) is
    scored: per branch, ``σ(slope · (z − middle))`` with ``z`` the chunk's cosine or
    coverage in background standard deviations above the query's background mean; and
    how much a branch's weight in the fusion is trusted for one query (``weak``: the
    evidence of the branch's best candidate, as a share of the branch's ``middle``, at
    which the branch is given no weight)."""

    dense: tuple[float, float]  # middle, slope
    sparse: tuple[float, float]
    weak: float


EVIDENCE = Evidence(dense=(9.0, 1.0), sparse=(13.0, 0.5), weak=0.2)
"""Chosen on small collections (5, 20 and 100 documents) sampled from SciFact's non-test
claims, half of ArguAna's queries and half of zh-rgb's, with off-topic questions in both
languages (``bench/bench_floors.py``): with the default floor ``kb.min_score`` 0.02 a
chunk is kept when its cosine is ≥ 5.1 background deviations above unrelated text, or its
coverage *beyond its best single word* ≥ 5.2 (the coverage's spread is the one of chance
matches of the query's words, see
:meth:`agent_search.kb._retrieval._background._SparseBackground.moments`; one shared word is never
evidence on its own, see :func:`single_word_shares`). On those collections
the relevant documents stood 7-15 deviations above the background by their cosine
(English; Chinese with the English model: 0.5-2.5, so only BM25 carries it) and
off-topic questions' best matches −0.5-2.4."""


def dense_evidence_score(null: Null, cosine: float) -> float:
    middle, slope = EVIDENCE.dense
    return sigmoid(slope * (null.dense_evidence(cosine) - middle))


def sparse_evidence_score(null: Null, coverage: float, single: float = 0.0) -> float:
    """``single``: the part of ``coverage`` the chunk's best-matching query word gives;
    only what the chunk matches beyond it counts (a coincidence of one word — "yolk" in
    a cytometry abstract for a question about boiling eggs — is no evidence)."""
    beyond = coverage - single
    middle, slope = EVIDENCE.sparse
    return sigmoid(slope * (null.sparse_evidence(beyond) - middle)) if beyond > 0 else 0.0


def evidence_score(null: Null, cosine: float | None, coverage: float | None,
                   single: float = 0.0) -> float:
    """A hybrid hit's score: the chance that at least one branch's evidence is real
    (noisy-or of both branch scores), so a weak branch never drags a strong one down."""
    d = dense_evidence_score(null, cosine) if cosine is not None else 0.0
    s = sparse_evidence_score(null, coverage, single) if coverage is not None else 0.0
    return d + s - d * s


def reliability(evidence: float, middle: float) -> float:
    """How far a branch's best candidate stands out, as a weight factor in 0..1: 0 at or
    under :attr:`Evidence.weak` of the branch's ``middle`` (the branch finds nothing
    unrelated text would not give), 1 from the middle up."""
    share = evidence / middle
    return min(1.0, max(0.0, (share - EVIDENCE.weak) / (1.0 - EVIDENCE.weak)))


NAMED = 0.8
"""A query term that carries at least this share of the query's BM25 weight *is* what the
query asks about (a one-word query: a surname, a product code, an identifier)."""


def single_word_shares(store: KBStore, collection: str, ids: list[str],
                        sparse: SparseVec, idf: NDArray[np.float64], bound: float,
                        rare_idf: float = math.inf) -> dict[str, float]:
    """Per chunk, the largest part of its coverage one query word gives (read from the
    chunks' stored BM25 vectors: one call for the hits being scored).

    Except a term that is the query (:data:`NAMED` of its weight) and rare in the
    collection (idf at least ``rare_idf``: a few chunks hold it): a chunk holding it
    exactly is what was asked for, not a coincidence of one shared word among several,
    so its part is not discounted. "Raghunathan" alone finds the one page naming her;
    "how long to boil an egg for a soft yolk" still gets nothing from a cytometry
    abstract's "yolk"."""
    if not ids:
        return {}
    idfs = idf.tolist()
    weight = {t: float(i) * v for t, i, v in zip(sparse.indices, idfs, sparse.values,
                                                 strict=True)}
    total = sum(weight.values())
    named = {t for t, i in zip(sparse.indices, idfs, strict=True)
             if total > 0 and weight[t] >= NAMED * total and i >= rare_idf}
    out: dict[str, float] = {}
    # the BM25 vectors only: the dense ones would be read and converted for nothing
    for rec in store.retrieve(collection, ids, payload=False, vectors=[SPARSE]):
        vec = rec.sparse
        if vec is None:
            continue
        out[rec.id] = max((weight[t] * w for t, w in zip(vec.indices, vec.values, strict=True)
                           if t in weight and t not in named), default=0.0) / bound
    return out
