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

Scores are in 0..1, and ``threshold`` applies to them:

* dense: cosine similarity, clipped at 0;
* sparse: the BM25 score divided by the best score the query could get
  (Σ over query terms of idf·(k1+1)), i.e. the fraction of the query's possible weight;
* hybrid ``zscore`` (the default): each branch's scores are standardised over the whole
  collection ((x − mean) / std for this query), combined as a weighted mean z, and shown
  as z / (z + 5) — 0.5 means five standard deviations above the collection's mean. With a
  Qdrant server, whose API does not expose collection-wide score statistics, ``zscore``
  falls back to Qdrant's ``dbsf``;
* hybrid ``dbsf``: each branch normalised by the score distribution of its top
  ``prefetch`` candidates (mean ± 3σ → 0..1), combined as a weighted mean, clipped;
* hybrid ``rrf``: Σ wᵢ/(k + rankᵢ) divided by its maximum (ranked first by both).
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
        return [(i, max(0.0, s)) for i, s in branches[0][:plan.limit]]
    bound = sparse.bound if sparse is not None else 1.0
    return [(i, min(1.0, s / bound)) for i, s in branches[0][:plan.limit]]


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
    with store.lock:
        if plan.mode == "dense" or (plan.mode == "hybrid" and sparse_q is None):
            if dense_q is None:
                return []
            resp = store.client.query_points(collection, query=dense_q, using=DENSE,
                                             query_filter=query_filter, limit=plan.limit,
                                             with_payload=True)
            return [Hit(str(p.id), max(0.0, float(p.score)), dict(p.payload or {}))
                    for p in resp.points]
        if plan.mode == "sparse":
            if sparse_q is None:
                return []
            resp = store.client.query_points(collection, query=sparse_q, using=SPARSE,
                                             query_filter=query_filter, limit=plan.limit,
                                             with_payload=True)
            # the server does not expose IDF; bound each term's idf by ln(1 + N)
            bound = len(sparse_q.indices) * math.log(1.0 + max(points, 1)) * (plan.k1 + 1.0)
            return [Hit(str(p.id), min(1.0, float(p.score) / bound), dict(p.payload or {}))
                    for p in resp.points]
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
