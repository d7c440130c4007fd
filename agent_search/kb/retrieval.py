"""Dense, sparse (BM25) and hybrid retrieval over one collection.

Two paths give the same ranking:

* **Qdrant** ``query_points``: one named vector, or a prefetch of both fused by Qdrant
  (``rrf`` with weights, or ``dbsf``, which takes no weights there). Used with a Qdrant
  server, and in local mode when the request has metadata filters.
* **In-process index** (local mode, no filters): Qdrant's local mode scores sparse vectors
  in a pure-Python loop (about a second per query on 5,000 chunks) and dense ones with
  per-point overhead, so the kb keeps a numpy copy of a collection's vectors — a dense
  matrix and an inverted index of the BM25 weights — built from the store on first use and
  rebuilt when this process writes to the collection (in local mode it is the only writer).
  It holds the payloads too, so a hit costs no copy out of the store.
  The scores are those Qdrant computes (cosine; BM25 with Qdrant's IDF), and the fusions
  are the same formulas, with weights for both.

Scores are in 0..1, and ``threshold`` (``kb.threshold``) applies to them.

**The default scale is calibrated**: a score is the estimated probability that the
chunk's document is relevant to the query, ~0.5 meaning "probably relevant", fitted by
:mod:`agent_search.kb.calibrate` on SciFact's 505 non-test claims with evidence (the
``dev`` split of ``bench/bench_kb.py``: each claim against the top 100 chunks of each
branch plus its evidence; label = the chunk's document is evidence) — never on the test
split. Constants: :data:`CALIBRATION`. Features of a chunk for a query:

* the dense cosine similarity ``d`` (the embedding model's own scale);
* the sparse *coverage* ``c``: the BM25 score divided by the best the query could get
  (Σ over query terms of idf·(k1+1)), the share of the query's weight the chunk matches.

``dense = σ(α0 + α1·d)`` and ``sparse = σ(γ0 + γ1·c)`` are absolute: they do not depend on
the other chunks (BM25's length normalisation still uses the collection's average chunk
length, recorded when it was created). ``hybrid`` (fusion ``calibrated``, the default)
keeps the quality of the z-score fusion: it *ranks* by each feature standardised per
query with the collection's mean and variance *pooled with reference statistics* (the
calibration queries' average, weighted as :attr:`Calibration.prior_chunks` = 100 chunks),
combined 0.75 : 0.25 (a large collection uses essentially its own statistics: SciFact
test nDCG@10 as the z-score fusion), and it *scores* each ranked chunk as ``σ(a + b·z)``
with ``z`` standardised by the reference statistics only, capped by the score of the chunk
ranked above it. The score is absolute: it does not depend on the collection at all, so a
one-chunk collection (whose own statistics are degenerate: an exact match scored 0.000
there before) and a small topical one (whose own statistics make its best match look
ordinary: 0.03 for the right chunk of this project's docs) score like any other.
Ranking by the reference statistics alone would cost SciFact test nDCG@10 0.7425 → 0.7311.
The calibration is for the default model (all-MiniLM-L6-v2); other embedding models use
the same constants, which is only an approximation for them.

With a Qdrant server, and for filtered searches in local mode, the dense and sparse lists
come from ``query_points``: hybrid uses the reference statistics only (no collection-wide
statistics there); a candidate found by one branch only gets its missing cosine computed
from its vector, and its missing coverage is 0 when the sparse list was not full (it
matches no term) else the list's lowest. On a server the idf bound of the coverage is
ln(1 + N) per term (document frequencies are not exposed), so sparse scores run lower.

Other fusions, for comparison (``options.fusion``), give *relative* scores that depend on
the collection and the candidates:

* ``zscore``: each branch's scores standardised over the whole collection, combined as a
  weighted mean z and shown as z / (z + 5). With a server it falls back to ``dbsf``;
* ``dbsf``: each branch normalised by the score distribution of its top ``prefetch``
  candidates (mean ± 3σ → 0..1), combined as a weighted mean, clipped;
* ``rrf``: Σ wᵢ/(k + rankᵢ) divided by its maximum (ranked first by both).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from agent_search.kb.settings import KBSettings
from agent_search.kb.sparse import SparseVec
from agent_search.kb.store import DENSE, SPARSE, KBStore

if TYPE_CHECKING:  # qdrant-client is imported where it is used: it takes ~1 s
    from qdrant_client import models


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


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0


def calibrated_dense(cosine: float) -> float:
    a0, a1 = CALIBRATION.dense
    return sigmoid(a0 + a1 * cosine)


def calibrated_sparse(coverage: float) -> float:
    g0, g1 = CALIBRATION.sparse
    return sigmoid(g0 + g1 * coverage) if coverage > 0 else 0.0


def calibrated_fused(z: float) -> float:
    a, b = CALIBRATION.zscore
    return sigmoid(a + b * z)


def _shrunk_standard(x: NDArray[np.float32], n: int, mean_ref: float,
                     var_ref: float) -> NDArray[np.float32]:
    """(x − mean) / std with the collection's statistics for this query pooled with the
    reference statistics (weight :attr:`Calibration.prior_chunks`): a large collection
    uses its own, a one-chunk collection the reference's."""
    n0 = CALIBRATION.prior_chunks
    mean = (n * float(x.mean()) + n0 * mean_ref) / (n + n0) if n else mean_ref
    var = (n * float(x.var()) + n0 * var_ref) / (n + n0) if n else var_ref
    out: NDArray[np.float32] = ((x - np.float32(mean))
                                / np.float32(math.sqrt(max(var, 1e-12)))).astype(np.float32)
    return out


def calibrated_fusion(dense: NDArray[np.float32], coverage: NDArray[np.float32], n: int,
                      dense_weight: float, sparse_weight: float) -> NDArray[np.float32]:
    """The weighted mean of both branches' (shrunk) standard scores over ``n`` chunks:
    the ranking key of the ``calibrated`` hybrid; :func:`calibrated_fused` maps it to
    the probability scale."""
    dm, dv, cm, cv = CALIBRATION.reference
    total = (dense_weight + sparse_weight) or 1.0
    out: NDArray[np.float32] = (
        np.float32(dense_weight / total) * _shrunk_standard(dense, n, dm, dv)
        + np.float32(sparse_weight / total) * _shrunk_standard(coverage, n, cm, cv)
    ).astype(np.float32)
    return out


@dataclass(slots=True)
class Hit:
    point_id: str
    score: float
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class QueryPlan:
    mode: str
    limit: int
    prefetch: int
    fusion: str
    dense_weight: float
    sparse_weight: float
    rrf_k: int
    k1: float
    prf_docs: int = 0
    prf_weight: float = 0.5

    @classmethod
    def of(cls, settings: KBSettings, mode: str, limit: int, k1: float) -> QueryPlan:
        return cls(mode, limit, max(settings.prefetch, limit), settings.fusion,
                   settings.dense_weight, settings.sparse_weight, settings.rrf_k, k1,
                   settings.prf_docs if mode != "sparse" else 0, settings.prf_weight)


class LocalIndex:
    """A numpy copy of one collection's vectors, for fast exact search in local mode."""

    def __init__(self, ids: list[str], dense: NDArray[np.float32],
                 postings: dict[int, tuple[NDArray[np.int64], NDArray[np.float32]]],
                 payloads: list[dict[str, Any]] | None = None) -> None:
        self.ids = ids
        self.payloads = payloads if payloads is not None else [{} for _ in ids]
        self.dense = dense
        self.postings = postings

    @classmethod
    def build(cls, records: list[models.Record]) -> LocalIndex:
        from qdrant_client import models
        ids: list[str] = []
        payloads: list[dict[str, Any]] = []
        rows: list[list[float]] = []
        terms: list[NDArray[np.int64]] = []
        weights: list[NDArray[np.float32]] = []
        owners: list[NDArray[np.int64]] = []
        for i, rec in enumerate(records):
            vec = rec.vector if isinstance(rec.vector, dict) else {}
            dense = vec.get(DENSE)
            sparse = vec.get(SPARSE)
            ids.append(str(rec.id))
            payloads.append(dict(rec.payload or {}))
            rows.append([float(x) for x in dense] if isinstance(dense, list) else [])  # type: ignore[arg-type]
            if isinstance(sparse, models.SparseVector) and sparse.indices:
                terms.append(np.asarray(sparse.indices, dtype=np.int64))
                weights.append(np.asarray(sparse.values, dtype=np.float32))
                owners.append(np.full(len(sparse.indices), i, dtype=np.int64))
        dim = max((len(r) for r in rows), default=0)
        matrix = np.zeros((len(rows), dim), dtype=np.float32)
        for i, r in enumerate(rows):
            if r:
                matrix[i] = r
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix /= np.maximum(norms, 1e-12)
        postings: dict[int, tuple[NDArray[np.int64], NDArray[np.float32]]] = {}
        if terms:
            t = np.concatenate(terms)
            w = np.concatenate(weights)
            o = np.concatenate(owners)
            order = np.argsort(t, kind="stable")
            t, w, o = t[order], w[order], o[order]
            uniq, starts = np.unique(t, return_index=True)
            ends = np.append(starts[1:], len(t))
            for term, s, e in zip(uniq.tolist(), starts.tolist(), ends.tolist(), strict=True):
                postings[int(term)] = (o[s:e], w[s:e])
        return cls(ids, matrix, postings, payloads)

    def idf(self, term: int) -> float:
        """Qdrant's IDF: ln(1 + (N − n + 0.5) / (n + 0.5))."""
        n = len(self.postings[term][0]) if term in self.postings else 0
        total = len(self.ids)
        return math.log(1.0 + (total - n + 0.5) / (n + 0.5))

    def dense_scores(self, query: NDArray[np.float32]) -> NDArray[np.float32]:
        if not len(self.ids) or self.dense.shape[1] != query.shape[0]:
            return np.zeros(len(self.ids), dtype=np.float32)
        q = query / max(float(np.linalg.norm(query)), 1e-12)
        return np.asarray(self.dense @ q, dtype=np.float32)

    def sparse_scores(self, query: SparseVec) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
        scores = np.zeros(len(self.ids), dtype=np.float32)
        hit = np.zeros(len(self.ids), dtype=bool)
        for term, qw in zip(query.indices, query.values, strict=True):
            posting = self.postings.get(term)
            if posting is None:
                continue
            owners, weights = posting
            np.add.at(scores, owners, weights * np.float32(self.idf(term) * qw))
            hit[owners] = True
        return scores, hit

    def max_sparse(self, query: SparseVec, k1: float) -> float:
        return sum(self.idf(t) * v for t, v in zip(query.indices, query.values, strict=True)) \
            * (k1 + 1.0)


def _top(scores: NDArray[np.float32], mask: NDArray[np.bool_] | None,
         k: int) -> list[tuple[int, float]]:
    idx = np.arange(len(scores)) if mask is None else np.flatnonzero(mask)
    if not len(idx):
        return []
    sub = scores[idx]
    if len(idx) > k:
        part = np.argpartition(-sub, k - 1)[:k]
        idx, sub = idx[part], sub[part]
    order = np.argsort(-sub, kind="stable")
    return [(int(idx[i]), float(sub[i])) for i in order]


def dbsf(branches: list[list[tuple[Any, float]]], weights: list[float]) -> dict[Any, float]:
    """Distribution-based score fusion (as Qdrant's), with branch weights: each branch's
    scores are mapped by mean ± 3σ to 0..1, then combined as a weighted mean."""
    fused: dict[Any, float] = {}
    total_w = sum(w for w, b in zip(weights, branches, strict=True) if b) or 1.0
    for branch, w in zip(branches, weights, strict=True):
        if not branch:
            continue
        vals = [s for _, s in branch]
        if len(vals) == 1:
            norm = [0.5]
        else:
            mean = sum(vals) / len(vals)
            var = sum((v - mean) ** 2 for v in vals) / (len(vals) - 1)
            if var == 0:
                norm = [0.5] * len(vals)
            else:
                low, high = mean - 3 * math.sqrt(var), mean + 3 * math.sqrt(var)
                norm = [(v - low) / (high - low) for v in vals]
        for (key, _), n in zip(branch, norm, strict=True):
            fused[key] = fused.get(key, 0.0) + w * n / total_w
    return {k: min(1.0, max(0.0, v)) for k, v in fused.items()}


def rrf(branches: list[list[tuple[Any, float]]], weights: list[float], k: int) -> dict[Any, float]:
    """Weighted reciprocal rank fusion (Qdrant's formula), scaled so first-in-all is 1."""
    def term(pos: int, w: float) -> float:
        return 0.0 if w <= 0 else 1.0 / ((pos + 1.0) / w + k - 1.0)

    best = sum(term(0, w) for w in weights) or 1.0
    fused: dict[Any, float] = {}
    for branch, w in zip(branches, weights, strict=True):
        for pos, (key, _) in enumerate(branch):
            fused[key] = fused.get(key, 0.0) + term(pos, w) / best
    return fused


_INDEXES: dict[tuple[int, str], tuple[int, LocalIndex]] = {}
_INDEX_LOCK = threading.Lock()


def local_index(store: KBStore, collection: str) -> LocalIndex:
    """The in-process index of ``collection``, rebuilt after writes through ``store``."""
    key = (id(store), collection)
    with _INDEX_LOCK:
        version = store.version(collection)
        cached = _INDEXES.get(key)
        if cached is not None and cached[0] == version:
            return cached[1]
        index = LocalIndex.build(store.scroll_all(collection))
        _INDEXES[key] = (version, index)
        return index


def rocchio(query: NDArray[np.float32], feedback: NDArray[np.float32],
            weight: float) -> NDArray[np.float32]:
    """The query moved towards the mean of the feedback vectors (unit length again)."""
    q = query / max(float(np.linalg.norm(query)), 1e-12)
    moved = q + weight * feedback.mean(axis=0)
    out: NDArray[np.float32] = (moved / max(float(np.linalg.norm(moved)), 1e-12)).astype(
        np.float32)
    return out


@dataclass(slots=True)
class _SparseScores:
    scores: NDArray[np.float32]
    hit: NDArray[np.bool_]
    bound: float


def search_local(store: KBStore, collection: str, plan: QueryPlan,
                 dense: NDArray[np.float32] | None, sparse: SparseVec | None) -> list[Hit]:
    index = local_index(store, collection)
    sparse_scores: _SparseScores | None = None
    if plan.mode in ("sparse", "hybrid") and sparse is not None:
        scores, hit = index.sparse_scores(sparse)
        sparse_scores = _SparseScores(scores, hit,
                                      max(index.max_sparse(sparse, plan.k1), 1e-9))
    ranked = _rank_local(index, plan, dense, sparse_scores)
    if plan.prf_docs and dense is not None and ranked:
        top = [i for i, _ in ranked[:plan.prf_docs]]
        moved = rocchio(dense, index.dense[top], plan.prf_weight)
        ranked = _rank_local(index, plan, moved, sparse_scores)
    # payloads come from the index's copy (shared, read-only: callers build new objects)
    return [Hit(index.ids[i], score, index.payloads[i]) for i, score in ranked]


def standard_scores(scores: NDArray[np.float32]) -> NDArray[np.float32]:
    """(x − mean) / std over the whole collection; zeros when all scores are equal."""
    std = float(scores.std())
    if std <= 0.0:
        return np.zeros_like(scores)
    out: NDArray[np.float32] = ((scores - float(scores.mean())) / std).astype(np.float32)
    return out


def zscore_fusion(dense: NDArray[np.float32] | None, sparse: NDArray[np.float32] | None,
                  dense_weight: float, sparse_weight: float) -> NDArray[np.float32]:
    """Weighted mean of each branch's standard scores over the whole collection."""
    parts = [(standard_scores(x), w) for x, w in ((dense, dense_weight),
                                                  (sparse, sparse_weight)) if x is not None]
    total = sum(w for _, w in parts) or 1.0
    fused = np.zeros_like(parts[0][0])
    for z, w in parts:
        fused += z * np.float32(w / total)
    return fused


def z_to_unit(z: float) -> float:
    """A combined standard score as 0..1: z / (z + 5), so 0.5 is 5 σ above the mean."""
    return z / (z + 5.0) if z > 0 else 0.0


def _rank_local(index: LocalIndex, plan: QueryPlan, dense: NDArray[np.float32] | None,
                sparse: _SparseScores | None) -> list[tuple[int, float]]:
    dense_all = (index.dense_scores(dense)
                 if plan.mode in ("dense", "hybrid") and dense is not None else None)
    if plan.mode == "hybrid" and plan.fusion == "calibrated":
        if dense_all is None and sparse is None:
            return []
        zeros = np.zeros(len(index.ids), dtype=np.float32)
        coverage = sparse.scores / np.float32(sparse.bound) if sparse is not None else zeros
        dense_all = dense_all if dense_all is not None else zeros
        fused = calibrated_fusion(dense_all, coverage, len(index.ids), plan.dense_weight,
                                  plan.sparse_weight)
        top = _top(fused, None, plan.limit)
        # rank with the collection's statistics (quality), score with the reference's
        # only (absolute: a topical collection's own statistics would call its best match
        # ordinary); a running minimum keeps the scores in ranking order
        picked = np.array([i for i, _ in top], dtype=np.int64)
        absolute = calibrated_fusion(dense_all[picked], coverage[picked], 0,
                                     plan.dense_weight, plan.sparse_weight)
        ranked: list[tuple[int, float]] = []
        ceiling = 1.0
        for (i, _), z in zip(top, absolute.tolist(), strict=True):
            ceiling = min(ceiling, calibrated_fused(z))
            ranked.append((i, ceiling))
        return ranked
    if plan.mode == "hybrid" and plan.fusion == "zscore":
        if dense_all is None and sparse is None:
            return []
        fused = zscore_fusion(dense_all, sparse.scores if sparse is not None else None,
                              plan.dense_weight, plan.sparse_weight)
        return [(i, z_to_unit(z)) for i, z in _top(fused, None, plan.limit)]
    branches: list[list[tuple[int, float]]] = []
    weights: list[float] = []
    if dense_all is not None:
        branches.append(_top(dense_all, None, plan.prefetch))
        weights.append(plan.dense_weight)
    if sparse is not None:
        branches.append(_top(sparse.scores, sparse.hit, plan.prefetch))
        weights.append(plan.sparse_weight)
    if plan.mode == "hybrid":
        combined = (dbsf(branches, weights) if plan.fusion == "dbsf"
                    else rrf(branches, weights, plan.rrf_k))
        return sorted(combined.items(), key=lambda kv: -kv[1])[:plan.limit]
    if not branches:
        return []
    if plan.mode == "dense":
        return [(i, calibrated_dense(s)) for i, s in branches[0][:plan.limit]]
    bound = sparse.bound if sparse is not None else 1.0
    return [(i, calibrated_sparse(s / bound)) for i, s in branches[0][:plan.limit]]


def search_qdrant(store: KBStore, collection: str, plan: QueryPlan,
                  dense: NDArray[np.float32] | None, sparse: SparseVec | None,
                  query_filter: models.Filter | None, points: int) -> list[Hit]:
    """The same search through Qdrant's ``query_points`` (server, or local with filters);
    with pseudo-relevance feedback, a second round with the moved query vector."""
    hits = _search_qdrant(store, collection, plan, dense, sparse, query_filter, points)
    if not (plan.prf_docs and dense is not None and hits):
        return hits
    top = [h.point_id for h in hits[:plan.prf_docs]]
    with store.lock:
        records = store.client.retrieve(collection, ids=top, with_payload=False,
                                        with_vectors=[DENSE])
    vectors = [r.vector.get(DENSE) for r in records if isinstance(r.vector, dict)]
    feedback = np.asarray([v for v in vectors if isinstance(v, list)], dtype=np.float32)
    if not len(feedback):
        return hits
    feedback /= np.maximum(np.linalg.norm(feedback, axis=1, keepdims=True), 1e-12)
    moved = rocchio(dense, feedback, plan.prf_weight)
    return _search_qdrant(store, collection, plan, moved, sparse, query_filter, points)


def _search_qdrant(store: KBStore, collection: str, plan: QueryPlan,
                   dense: NDArray[np.float32] | None, sparse: SparseVec | None,
                   query_filter: models.Filter | None, points: int) -> list[Hit]:
    from qdrant_client import models
    sparse_q = (models.SparseVector(indices=sparse.indices, values=sparse.values)
                if sparse is not None and sparse.indices else None)
    dense_q = dense.tolist() if dense is not None else None
    bound = _sparse_bound(store, collection, plan, sparse, points)
    if plan.mode == "hybrid" and plan.fusion == "calibrated":
        return _calibrated_qdrant(store, collection, plan, dense, dense_q, sparse_q, bound,
                                  query_filter)
    with store.lock:
        if plan.mode == "dense" or (plan.mode == "hybrid" and sparse_q is None):
            if dense_q is None:
                return []
            resp = store.client.query_points(collection, query=dense_q, using=DENSE,
                                             query_filter=query_filter, limit=plan.limit,
                                             with_payload=True)
            return [Hit(str(p.id), calibrated_dense(float(p.score)), dict(p.payload or {}))
                    for p in resp.points]
        if plan.mode == "sparse":
            if sparse_q is None:
                return []
            resp = store.client.query_points(collection, query=sparse_q, using=SPARSE,
                                             query_filter=query_filter, limit=plan.limit,
                                             with_payload=True)
            return [Hit(str(p.id), calibrated_sparse(float(p.score) / bound),
                        dict(p.payload or {})) for p in resp.points]
        prefetch = [
            models.Prefetch(query=dense_q, using=DENSE, limit=plan.prefetch, filter=query_filter),
            models.Prefetch(query=sparse_q, using=SPARSE, limit=plan.prefetch,
                            filter=query_filter),
        ]
        if plan.fusion in ("dbsf", "zscore"):  # collection-wide statistics are not exposed
            query: Any = models.FusionQuery(fusion=models.Fusion.DBSF)
            scale = 2.0
        else:
            query = models.RrfQuery(rrf=models.Rrf(
                k=plan.rrf_k, weights=[plan.dense_weight, plan.sparse_weight]))
            scale = sum(1.0 / (1.0 / w + plan.rrf_k - 1.0)
                        for w in (plan.dense_weight, plan.sparse_weight) if w > 0) or 1.0
        resp = store.client.query_points(collection, prefetch=prefetch, query=query,
                                         limit=plan.limit, with_payload=True)
    return [Hit(str(p.id), min(1.0, max(0.0, float(p.score) / scale)), dict(p.payload or {}))
            for p in resp.points]


def _sparse_bound(store: KBStore, collection: str, plan: QueryPlan,
                  sparse: SparseVec | None, points: int) -> float:
    """The best BM25 score the query could get: exact from the local index (local mode),
    else each term's idf bounded by ln(1 + N) (a server does not expose document counts)."""
    if sparse is None or not sparse.indices:
        return 1.0
    if store.local:
        return max(local_index(store, collection).max_sparse(sparse, plan.k1), 1e-9)
    return len(sparse.indices) * math.log(1.0 + max(points, 1)) * (plan.k1 + 1.0)


def _calibrated_qdrant(store: KBStore, collection: str, plan: QueryPlan,
                       dense: NDArray[np.float32] | None, dense_q: list[float] | None,
                       sparse_q: models.SparseVector | None, bound: float,
                       query_filter: models.Filter | None) -> list[Hit]:
    """Hybrid ``calibrated`` through ``query_points``: both branches' top ``prefetch``,
    the missing feature of a one-branch candidate filled in (see the module docstring),
    ranked by the calibrated score."""
    cosines: dict[str, float] = {}
    coverages: dict[str, float] = {}
    payloads: dict[str, dict[str, Any]] = {}
    sparse_full = False
    with store.lock:
        if dense_q is not None:
            resp = store.client.query_points(collection, query=dense_q, using=DENSE,
                                             query_filter=query_filter, limit=plan.prefetch,
                                             with_payload=True)
            for p in resp.points:
                cosines[str(p.id)] = float(p.score)
                payloads[str(p.id)] = dict(p.payload or {})
        if sparse_q is not None:
            resp = store.client.query_points(collection, query=sparse_q, using=SPARSE,
                                             query_filter=query_filter, limit=plan.prefetch,
                                             with_payload=True)
            sparse_full = len(resp.points) >= plan.prefetch
            for p in resp.points:
                coverages[str(p.id)] = float(p.score) / bound
                payloads.setdefault(str(p.id), dict(p.payload or {}))
        missing = [pid for pid in coverages if pid not in cosines]
        if missing and dense is not None:
            records = store.client.retrieve(collection, ids=missing, with_payload=False,
                                            with_vectors=[DENSE])
            q = dense / max(float(np.linalg.norm(dense)), 1e-12)
            for r in records:
                vec = r.vector.get(DENSE) if isinstance(r.vector, dict) else None
                if isinstance(vec, list):
                    v = np.asarray(vec, dtype=np.float32)
                    cosines[str(r.id)] = float(v @ q / max(float(np.linalg.norm(v)), 1e-12))
    floor = min(coverages.values()) if sparse_full and coverages else 0.0
    ids = list(payloads)
    fused = calibrated_fusion(
        np.asarray([cosines.get(pid, 0.0) for pid in ids], dtype=np.float32),
        np.asarray([coverages.get(pid, floor) for pid in ids], dtype=np.float32),
        0, plan.dense_weight, plan.sparse_weight)  # no collection statistics: the reference
    scored = sorted(zip(ids, fused.tolist(), strict=True), key=lambda kv: -kv[1])
    return [Hit(pid, calibrated_fused(z), payloads[pid]) for pid, z in scored[:plan.limit]]
