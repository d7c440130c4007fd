"""Dense, sparse (BM25) and hybrid retrieval over one collection, written once as Qdrant
queries for both stores (:mod:`agent_search.kb._store._open`): Qdrant Edge embedded, or a server.

* ``dense`` / ``sparse``: one query on the named vector.
* ``hybrid`` ``calibrated`` (default) and ``zscore``: two engine calls. One batch of two
  queries (the top ``prefetch`` of each branch, filter applied in the engine); then, for
  the candidates that can still reach the top ``limit`` (bounds from each list's last
  score), one batch that scores those found by one branch only
  on the other branch (a ``has_id`` filter, ANDed with the request's: exact cosine and
  BM25, 0 when no term matches). Both features are fused in Python with the collection's
  per-query moments (:mod:`agent_search.kb._store._stats`), exactly as if the whole union had
  been scored. A chunk outside both top-``prefetch`` lists is not a candidate (SciFact
  nDCG@10 is unchanged by this at ``prefetch`` 100). The hits returned get their payloads
  last, read by id (converting ~50 candidates' payloads took ~0.6 ms a search).
* ``hybrid`` ``rrf`` / ``dbsf``: the engine's own fusion of both prefetches.

Scores are in 0..1, and ``threshold`` (``kb.threshold``) applies to them.

**The default scale is evidence over the query's background** (``kb.score_scale:
background``; ``docs/kb-scores.md``): how far a chunk's cosine and BM25 coverage stand
above what unrelated text gets for this query and this embedding model
(:mod:`agent_search.kb._retrieval._background`,
:mod:`agent_search.kb._retrieval._evidence`), the same unit at
any collection size. The hybrid ranks by each feature standardised per query with the
collection's moments pooled with the background's (weighted as
:attr:`Calibration.prior_chunks` = 100 chunks), combined 0.75 : 0.25 with each branch's
weight scaled by how far its best candidate stands out for this query, and scores each
hit by its evidence, capped by the score of the hit ranked above it.

``kb.score_scale: reference`` keeps the earlier scale: the probability that the chunk's
document is relevant, fitted by :mod:`agent_search.kb.calibrate` on SciFact's 505
non-test claims (:data:`CALIBRATION`; ``dense = σ(α0 + α1·d)``, ``sparse = σ(γ0 +
γ1·c)``, hybrid ``σ(a + b·z)`` with ``z`` standardised by SciFact's average moments). It
hid the right note of a five-note collection under the floor (issue 24).

The collection's moments come from the embedded store's aggregates; a Qdrant server does
not expose them, so there the hybrid standardises with the reference statistics only, and
the idf bound of the coverage is ln(1 + N) per term, so sparse scores run lower.

Other fusions, for comparison (``options.fusion``), give *relative* scores that depend on
the collection and the candidates:

* ``zscore``: each branch's scores standardised with the collection's moments, combined
  as a weighted mean z and shown as z / (z + 5). With a server it falls back to ``dbsf``;
* ``dbsf``: the engine's: each branch normalised by the score distribution of its top
  ``prefetch`` candidates (mean ± 3σ → 0..1), summed (no weights), halved;
* ``rrf``: Σ wᵢ/(k + rankᵢ) divided by its maximum (ranked first by both).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np
from numpy.typing import NDArray

from agent_search.kb._retrieval import _feedback
from agent_search.kb._retrieval._background import Null
from agent_search.kb._retrieval._evidence import (
    CALIBRATION,
    EVIDENCE,
    calibrated_dense,
    calibrated_fused,
    calibrated_sparse,
    dense_evidence_score,
    evidence_score,
    reliability,
    single_word_shares,
    sparse_evidence_score,
)
from agent_search.kb._retrieval._foreign import FOREIGN
from agent_search.kb._retrieval._hits import Hit as Hit  # re-exported: the handler and tests use it
from agent_search.kb._retrieval._hits import (
    diversified,
    heading_keys,
    heading_path,
    reranked,
    with_payloads,
)
from agent_search.kb._store import (
    DENSE,
    SPARSE,
    CollectionStats,
    FusionQuery,
    Group,
    HasId,
    KBStore,
    Moments,
    QuerySpec,
    Scored,
    SparseVec,
    VectorQuery,
    all_of,
    ln_bound,
)
from agent_search.kb.settings import KBSettings


def _standard(x: NDArray[np.float32], n: int, mean: float, var: float, mean_ref: float,
              var_ref: float, prior: float) -> NDArray[np.float32]:
    """(x − mean) / std with the collection's moments over ``n`` chunks pooled with the
    reference moments (weight ``prior`` chunks): a large collection uses its own, a
    one-chunk collection (or a store without moments, n = 0) the reference's."""
    if n + prior <= 0:
        return np.zeros_like(x)
    m = (n * mean + prior * mean_ref) / (n + prior)
    v = (n * var + prior * var_ref) / (n + prior)
    out: NDArray[np.float32] = ((x - np.float32(m))
                                / np.float32(math.sqrt(max(v, 1e-12)))).astype(np.float32)
    return out


def fuse(dense: NDArray[np.float32], coverage: NDArray[np.float32], moments: Moments | None,
         dense_weight: float, sparse_weight: float,
         prior: float = CALIBRATION.prior_chunks,
         reference: tuple[float, float, float, float] | None = None) -> NDArray[np.float32]:
    """The weighted mean of both features' standard scores (see :func:`_standard`): the
    ranking key of the ``calibrated`` hybrid (``zscore``: ``prior`` 0, the collection's
    moments only). ``reference``: the moments pooled with the collection's (the query's
    background :class:`Null`; default the SciFact calibration's averages)."""
    dm, dv, cm, cv = reference or CALIBRATION.reference
    mo = moments or Moments(0, 0.0, 0.0, 0.0, 0.0)
    total = (dense_weight + sparse_weight) or 1.0
    out: NDArray[np.float32] = (
        np.float32(dense_weight / total)
        * _standard(dense, mo.points, mo.dense_mean, mo.dense_var, dm, dv, prior)
        + np.float32(sparse_weight / total)
        * _standard(coverage, mo.points, mo.coverage_mean, mo.coverage_var, cm, cv, prior)
    ).astype(np.float32)
    return out


def calibrated_fusion(dense: NDArray[np.float32], coverage: NDArray[np.float32], n: int,
                      dense_weight: float, sparse_weight: float) -> NDArray[np.float32]:
    """:func:`fuse` when ``dense`` and ``coverage`` hold the whole collection (``n`` chunks;
    0 = the reference statistics only) — the calibration tool's form."""
    moments = (Moments(n, float(dense.mean()), float(dense.var()), float(coverage.mean()),
                       float(coverage.var())) if n else None)
    return fuse(dense, coverage, moments, dense_weight, sparse_weight)


def z_to_unit(z: float) -> float:
    """A combined standard score as 0..1: z / (z + 5), so 0.5 is 5 σ above the mean."""
    return z / (z + 5.0) if z > 0 else 0.0


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
    feedback_docs: int = 0
    feedback_weight: float = 0.0
    diversity: float = 0.0
    heading_weight: float = 0.0

    @classmethod
    def of(cls, settings: KBSettings, mode: str, limit: int, k1: float) -> QueryPlan:
        return cls(mode, limit, max(settings.prefetch, limit), settings.fusion,
                   settings.dense_weight, settings.sparse_weight, settings.rrf_k, k1,
                   settings.prf_docs if mode != "sparse" else 0, settings.prf_weight,
                   settings.feedback_docs if mode == "hybrid" else 0,
                   settings.feedback_weight, settings.diversity, settings.heading_weight)


def search(store: KBStore, collection: str, plan: QueryPlan,
           dense: NDArray[np.float32] | None, sparse: SparseVec | None,
           flt: Group | None, points: int, null: Null | None = None,
           headings: Callable[[list[str]], NDArray[np.float32]] | None = None) -> list[Hit]:
    """Search one collection (``flt``: the request's filter AND the caller's visibility);
    with pseudo-relevance feedback, a second round with the moved query vector; with
    ``plan.diversity``, each document's best chunk before further chunks of documents
    already listed, from the top :data:`~._feedback.DEPTH` candidates
    (:func:`~agent_search.kb._retrieval._hits.diversified`).

    ``null``: the query's similarity to unrelated text
    (:mod:`agent_search.kb._retrieval._background`);
    with it, scores are evidence over that background and the hybrid weighs each branch by
    how far its best candidate stands out (see :data:`EVIDENCE`); without it (a caller
    that has no background), the SciFact calibration's constants.

    ``headings``: embeds heading paths (one row each); with it and
    ``plan.heading_weight``, the candidates are ranked again with their heading's
    similarity to the question (:func:`_heading_ranked`), before each document's best
    chunk is brought first."""
    sparse = sparse if sparse is not None and sparse.indices else None
    stats = _stats_for(store, collection, plan, sparse)
    neighbours = _neighbours(plan, dense, points)
    limit = plan.limit
    # feedback ranks the branches' top candidates again with the top ones' centre, and
    # the documents' best chunks come first from among them: both need more than limit
    deep = max(limit, min(plan.prefetch, _feedback.DEPTH))
    by_heading = _heading_step(plan, dense, points, headings, null)
    pool = deep if plan.diversity > 0.0 or by_heading is not None else limit
    plan = replace(plan, limit=deep if neighbours else pool)
    hits = _search(store, collection, plan, dense, sparse, flt, points, stats, null)
    if neighbours:
        hits = reranked(hits, _feedback.keys_with_feedback(
            store, collection, [h.point_id for h in hits], [h.key for h in hits],
            plan.feedback_docs, plan.feedback_weight, flt, stats), pool)
        plan = replace(plan, limit=pool)
    if plan.prf_docs and dense is not None and hits:
        hits = _second_round(store, collection, plan, dense, sparse, flt, points, stats,
                             null, hits)
    hits = with_payloads(store, collection, hits)  # one exit: every path's hits get them
    if by_heading is not None:
        hits = by_heading(hits)
    return diversified(hits, plan.diversity, limit)


def _neighbours(plan: QueryPlan, dense: NDArray[np.float32] | None, points: int) -> bool:
    """Whether the top candidates' centre ranks them again (:mod:`._feedback`): the
    standardised hybrid with a dense query, in a collection large enough to tell."""
    return (dense is not None and plan.fusion in ("calibrated", "zscore")
            and _feedback.applies(points, plan.feedback_docs))


def _stats_for(store: KBStore, collection: str, plan: QueryPlan,
               sparse: SparseVec | None) -> CollectionStats | None:
    """The collection's statistics when a sparse branch or the standardised hybrid reads
    them (never for the dense branch alone)."""
    needs = sparse is not None or (plan.mode == "hybrid"
                                   and plan.fusion in ("calibrated", "zscore"))
    return store.stats(collection) if needs and plan.mode != "dense" else None


def _heading_step(plan: QueryPlan, dense: NDArray[np.float32] | None, points: int,
                  headings: Callable[[list[str]], NDArray[np.float32]] | None,
                  null: Null | None) -> Callable[[list[Hit]], list[Hit]] | None:
    """The step that ranks the candidates again by their heading's evidence
    (:func:`_heading_ranked`), or ``None`` when it does not apply: only the calibrated
    hybrid with a dense query and an embedder for headings, and only when the candidates
    are a small part of the collection (as for feedback): in five notes every note's
    chunks are candidates, and their standing among them says nothing."""
    if dense is None or headings is None or not (
            plan.mode == "hybrid" and plan.fusion == "calibrated"
            and points >= _feedback.MIN_SHARE * plan.limit and plan.heading_weight > 0.0):
        return None
    return partial(_heading_ranked, weight=plan.heading_weight, dense=dense,
                   headings=headings, spread=null.dense_std if null is not None else 0.0)


def _second_round(store: KBStore, collection: str, plan: QueryPlan,
                  dense: NDArray[np.float32], sparse: SparseVec | None, flt: Group | None,
                  points: int, stats: CollectionStats | None, null: Null | None,
                  hits: list[Hit]) -> list[Hit]:
    """Pseudo-relevance feedback's round with the moved query; the first round's hits
    when the top ones have no vectors."""
    moved = _moved_query(store, collection, plan, dense, hits)
    if moved is None:
        return hits
    return _search(store, collection, plan, moved, sparse, flt, points, stats, null)


def _heading_ranked(hits: list[Hit], weight: float, dense: NDArray[np.float32],
                    headings: Callable[[list[str]], NDArray[np.float32]],
                    spread: float = 0.0) -> list[Hit]:
    """The candidates after the first ranked again by their keys plus their heading's
    evidence (:func:`~agent_search.kb._retrieval._hits.heading_keys`); scores stay their
    own, capped by the hit ranked above. The first hit never moves: a heading that put a
    weaker chunk first would lower the first score, and a floor could then drop an
    answer the hybrid had kept."""
    if len(hits) <= 1:
        return hits
    rows = np.asarray(headings([heading_path(h) for h in hits]), dtype=np.float64)
    rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    q = np.asarray(dense, dtype=np.float64)
    q /= max(float(np.linalg.norm(q)), 1e-12)
    keys = heading_keys([h.key for h in hits], (rows @ q).tolist(), weight, spread)
    # the first hit stays (as with each document's best chunk first): whether anything
    # clears a floor is the hybrid's evidence, not the heading's
    keys[0] = max(keys) + 1.0
    return reranked(hits, keys, len(hits))


def _moved_query(store: KBStore, collection: str, plan: QueryPlan,
                 dense: NDArray[np.float32], hits: list[Hit]) -> NDArray[np.float32] | None:
    """Pseudo-relevance feedback: the dense query moved towards the vectors of the top
    ``plan.prf_docs`` hits (Rocchio); ``None`` when they have none."""
    records = store.retrieve(collection, [h.point_id for h in hits[:plan.prf_docs]],
                             payload=False, vectors=True)
    rows = [r.dense for r in records if r.dense]
    if not rows:
        return None
    feedback = np.asarray(rows, dtype=np.float32)
    feedback /= np.maximum(np.linalg.norm(feedback, axis=1, keepdims=True), 1e-12)
    return _feedback.rocchio(dense, feedback, plan.prf_weight)


def _search(store: KBStore, collection: str, plan: QueryPlan,
            dense: NDArray[np.float32] | None, sparse: SparseVec | None, flt: Group | None,
            points: int, stats: CollectionStats | None, null: Null | None) -> list[Hit]:
    """One round of retrieval in ``plan.mode``: a branch alone, the standardised hybrid
    (``calibrated``, or ``zscore`` with the collection's statistics), or the engine's."""
    dense_q = dense.tolist() if dense is not None else None
    bound = _sparse_bound(sparse, stats, points, plan.k1)
    singles = partial(_singles, store, collection, sparse, stats, points, bound)
    if plan.mode == "dense" or (plan.mode == "hybrid" and sparse is None
                                and plan.fusion in ("rrf", "dbsf")):
        return _dense_hits(store, collection, plan, dense_q, flt, null)
    if plan.mode == "sparse":
        return _sparse_hits(store, collection, plan, sparse, bound, flt, null, singles)
    if plan.fusion == "calibrated" or (plan.fusion == "zscore" and stats is not None):
        return _standardised(store, collection, plan, dense, dense_q, sparse, bound, flt,
                             stats, null, singles)
    return _engine_fusion(store, collection, plan, dense_q, sparse, flt)


def _sparse_bound(sparse: SparseVec | None, stats: CollectionStats | None, points: int,
                  k1: float) -> float:
    """The highest BM25 score the query's terms can give (1 without a sparse part):
    exact from the collection's statistics, else the ln(1 + N) bound per term."""
    if sparse is None:
        return 1.0
    return stats.sparse_bound(sparse, k1) if stats is not None else ln_bound(sparse, points, k1)


def _singles(store: KBStore, collection: str, sparse: SparseVec | None,
             stats: CollectionStats | None, points: int, bound: float,
             ids: list[str]) -> dict[str, float]:
    """The share of each candidate's coverage that one query word gives
    (:func:`single_word_shares`); none without a sparse part."""
    if sparse is None:
        return {}
    idf = (stats.idf(sparse.indices) if stats is not None
           else np.full(len(sparse.indices), math.log1p(max(points, 1))))
    # rare: as the foreign-word rule counts it, a share of the largest idf the
    # collection can give (only with its statistics: a server's idf is a guess)
    rare = (FOREIGN.rare * math.log1p((stats.points + 0.5) / 0.5)
            if stats is not None and stats.points > 0 else math.inf)
    return single_word_shares(store, collection, ids, sparse, idf, bound, rare)


def _branch_queries(dense_q: list[float] | None, sparse: SparseVec | None, limit: int,
                    flt: Group | None) -> list[VectorQuery]:
    """One query per branch the request has, dense first: the prefetches of both
    hybrids, and the read step's first query."""
    queries = [VectorQuery(DENSE, dense_q, limit, flt)] if dense_q is not None else []
    if sparse is not None:
        queries.append(VectorQuery(SPARSE, sparse, limit, flt))
    return queries


def _dense_hits(store: KBStore, collection: str, plan: QueryPlan,
                dense_q: list[float] | None, flt: Group | None,
                null: Null | None) -> list[Hit]:
    """The dense branch alone: cosines as evidence over the background (or calibrated
    on the reference without one)."""
    if dense_q is None:
        return []
    found = store.query_batch(collection, [VectorQuery(DENSE, dense_q, plan.limit, flt,
                                                       with_payload=True)])[0]
    scale = calibrated_dense if null is None else partial(dense_evidence_score, null)
    return [Hit(p.id, scale(p.score), p.payload or {}) for p in found]


def _sparse_hits(store: KBStore, collection: str, plan: QueryPlan, sparse: SparseVec | None,
                 bound: float, flt: Group | None, null: Null | None,
                 singles: Callable[[list[str]], dict[str, float]]) -> list[Hit]:
    """The BM25 branch alone, its scores over the query's ``bound``."""
    if sparse is None:
        return []
    found = store.query_batch(collection, [VectorQuery(SPARSE, sparse, plan.limit, flt,
                                                       with_payload=True)])[0]
    if null is None:
        return [Hit(p.id, calibrated_sparse(p.score / bound), p.payload or {})
                for p in found]
    # capped by the hit ranked above: the single-word rule must not reorder BM25
    shares = singles([p.id for p in found])
    hits, ceiling = [], 1.0
    for p in found:
        ceiling = min(ceiling, sparse_evidence_score(null, p.score / bound,
                                                     shares.get(p.id, 0.0)))
        hits.append(Hit(p.id, ceiling, p.payload or {}))
    return hits


def _engine_fusion(store: KBStore, collection: str, plan: QueryPlan,
                   dense_q: list[float] | None, sparse: SparseVec | None,
                   flt: Group | None) -> list[Hit]:
    """``rrf`` (weighted) or ``dbsf`` computed by the engine over both prefetches."""
    prefetch = tuple(_branch_queries(dense_q, sparse, plan.prefetch, flt))
    if not prefetch:
        return []
    if plan.fusion == "rrf":
        weights = tuple(plan.dense_weight if q.using == DENSE else plan.sparse_weight
                        for q in prefetch)
        scale = sum(1.0 / (1.0 / w + plan.rrf_k - 1.0) for w in weights if w > 0) or 1.0
        query = FusionQuery(prefetch, "rrf", plan.limit, plan.rrf_k, weights, True)
    else:
        scale = float(len(prefetch))
        query = FusionQuery(prefetch, "dbsf", plan.limit, with_payload=True)
    found = store.query_batch(collection, [query])[0]
    return [Hit(p.id, min(1.0, max(0.0, p.score / scale)), p.payload or {}) for p in found]


@dataclass(slots=True)
class _Pool:
    """The hybrid's candidates: each one's cosine and coverage as far as known, and those
    the read step found (within the request's filter). ``both``: the query has a dense and
    a sparse part."""

    cosines: dict[str, float]
    coverages: dict[str, float]
    both: bool
    found: set[str] = field(default_factory=set)

    def ids(self) -> list[str]:
        """The candidates in the order ties are broken in: the dense list, then the
        sparse-only ones."""
        return [*self.cosines, *(i for i in self.coverages if i not in self.cosines)]

    def caps(self, prefetch: int) -> tuple[float, float]:
        """The highest cosine and coverage a candidate missing from a list can have: a
        full list's last score bounds what it left out, a short list left out nothing;
        without one of the branches its feature is 0 for every chunk."""
        if not self.both:
            return 0.0, 0.0
        return (min(self.cosines.values()) if len(self.cosines) >= prefetch else 1.0,
                min(self.coverages.values()) if len(self.coverages) >= prefetch else 0.0)


def _standardised(store: KBStore, collection: str, plan: QueryPlan,
                  dense: NDArray[np.float32] | None, dense_q: list[float] | None,
                  sparse: SparseVec | None, bound: float, flt: Group | None,
                  stats: CollectionStats | None, null: Null | None = None,
                  singles: Callable[[list[str]], dict[str, float]] | None = None
                  ) -> list[Hit]:
    """Hybrid ``calibrated`` / ``zscore`` over the union of both branches' candidates,
    in two engine calls, as four steps:

    1. :func:`_gather`: one batch of the two branches' top ``prefetch`` (the request's
       filter applied);
    2. :func:`_prune`: the candidates that can still rank in the top ``limit`` (bounds);
    3. :func:`_read`: one batch that reads their payloads and scores those found by one
       branch only on the other feature (a ``has_id`` filter: exact cosine; BM25, or 0
       when no query term matches);
    4. :func:`_calibrate`: rank by the fused standard score and give each hit its score.

    The result is the one of scoring the whole union (see :func:`_prune`). With the
    query's background ``null`` (``calibrated`` only), each branch's weight is scaled by
    its :func:`reliability` for this query (from its best candidate, known after step 1),
    and small collections pool their moments with the background's."""
    first = _branch_queries(dense_q, sparse, plan.prefetch, flt)
    if not first:
        return []
    pool = _gather(store, collection, first, bound, both=dense_q is not None
                   and sparse is not None)
    moments = stats.moments(dense, sparse, plan.k1) if stats is not None else None
    prior = 0.0 if plan.fusion == "zscore" else CALIBRATION.prior_chunks
    null = null if plan.fusion == "calibrated" else None
    weights = _weights(pool, plan, null)
    reference = null.reference if null is not None else None

    def fused_of(cos: list[float], cov: list[float]) -> NDArray[np.float32]:
        return fuse(np.asarray(cos, dtype=np.float32), np.asarray(cov, dtype=np.float32),
                    moments, *weights, prior=prior, reference=reference)

    ids = _prune(pool, plan, fused_of)
    ids = _read(store, collection, pool, ids, dense_q, sparse, bound, flt)
    return _calibrate(pool, ids, plan, fused_of, null, singles)


def _weights(pool: _Pool, plan: QueryPlan, null: Null | None) -> tuple[float, float]:
    """The branch weights for this query: the configured ones, each scaled by the
    branch's :func:`reliability` (its best candidate's evidence over the background). A
    branch that finds nothing unrelated text would not give (all-MiniLM-L6-v2 on Chinese)
    then stops diluting the other; when neither stands out, the configured weights."""
    if null is None or not pool.both:
        return plan.dense_weight, plan.sparse_weight
    dense = plan.dense_weight * reliability(
        null.dense_evidence(max(pool.cosines.values(), default=-1.0)), EVIDENCE.dense[0])
    sparse = plan.sparse_weight * reliability(
        null.sparse_evidence(max(pool.coverages.values(), default=0.0)), EVIDENCE.sparse[0])
    if dense + sparse <= 0.0:
        return plan.dense_weight, plan.sparse_weight
    return dense, sparse


def _gather(store: KBStore, collection: str, first: list[VectorQuery], bound: float, *,
            both: bool) -> _Pool:
    """Step 1: each branch's top ``prefetch`` in one batch."""
    pool = _Pool({}, {}, both)
    for query, points in zip(first, store.query_batch(collection, [*first]), strict=True):
        for p in points:
            if query.using == DENSE:
                pool.cosines[p.id] = p.score
            else:
                pool.coverages[p.id] = p.score / bound
    return pool


def _prune(pool: _Pool, plan: QueryPlan,
           fused_of: Callable[[list[float], list[float]], NDArray[np.float32]]) -> list[str]:
    """Step 2: the candidates that can still rank in the top ``limit``, in tie order.

    A chunk missing from one list scores at most that list's last score there (its cosine
    ≥ −1, its coverage ≥ 0), and :func:`fuse` increases with both features, also in
    float32 rounding. A chunk whose best case is below the ``limit``-th best worst case
    cannot rank; the others are ranked exactly as if every candidate had been scored
    (same values, same order of ties)."""
    ids = pool.ids()
    if len(ids) <= plan.limit:
        return ids
    cosines, coverages, both = pool.cosines, pool.coverages, pool.both
    cos_cap, cov_cap = pool.caps(plan.prefetch)
    # one call for both bounds: worst cases first, then best cases
    bounds = fused_of([*(cosines.get(i, -1.0 if both else 0.0) for i in ids),
                       *(cosines.get(i, cos_cap) for i in ids)],
                      [*(coverages.get(i, 0.0) for i in ids),
                       *(coverages.get(i, cov_cap) for i in ids)])
    worst, best = bounds[:len(ids)], bounds[len(ids):]
    floor = np.partition(worst, len(ids) - plan.limit)[len(ids) - plan.limit]
    return [ids[i] for i in np.flatnonzero(best >= floor).tolist()]


def _read(store: KBStore, collection: str, pool: _Pool, ids: list[str],
          dense_q: list[float] | None, sparse: SparseVec | None,
          bound: float, flt: Group | None) -> list[str]:
    """Step 3: one batch that reads the missing cosines of every candidate left and the
    missing coverages; both keep the request's filter. Returns the candidates found, in
    tie order (the sparse-only ones last, in the order of their cosines). No payloads:
    converting one from the engine's form costs more than its scores, and only the hits
    returned need theirs (:func:`~agent_search.kb._retrieval._hits.with_payloads`)."""
    kept = all_of(flt, Group(must=(HasId(tuple(ids)),)))
    # the first branch (dense when there is one) reads every candidate left
    reads: list[QuerySpec] = [_branch_queries(dense_q, sparse, len(ids), kept)[0]]
    # with both branches, the sparse one scores those the BM25 list left out
    no_cov = tuple(i for i in ids if i not in pool.coverages) if pool.both else ()
    if sparse is not None and no_cov:
        reads.append(VectorQuery(SPARSE, sparse, len(no_cov),
                                 all_of(flt, Group(must=(HasId(no_cov),)))))
    found = store.query_batch(collection, reads)
    pool.found = {p.id for p in found[0]}
    return _merged(pool, ids, found, bound) if pool.both else ids


def _merged(pool: _Pool, ids: list[str], found: list[list[Scored]],
            bound: float) -> list[str]:
    """The read step's scores added to the pool (the dense read first, the sparse read
    when there was one); the candidates found, in tie order."""
    listed = [i for i in ids if i in pool.cosines]
    sparse_only = [p.id for p in found[0] if p.id not in pool.cosines]
    for p in found[0]:
        pool.cosines.setdefault(p.id, p.score)
    for p in found[1] if len(found) > 1 else ():
        pool.coverages[p.id] = p.score / bound
    return [*listed, *sparse_only]


def _calibrate(pool: _Pool, ids: list[str], plan: QueryPlan,
               fused_of: Callable[[list[float], list[float]], NDArray[np.float32]],
               null: Null | None = None,
               singles: Callable[[list[str]], dict[str, float]] | None = None
               ) -> list[Hit]:
    """Step 4: rank by the fused standard score; ``zscore`` shows it as z / (z + 5),
    ``calibrated`` scores it on the absolute scale: :func:`evidence_score` over the
    query's background, or without one the SciFact calibration's ``σ(a + b·z)``."""
    cos = [pool.cosines.get(i, 0.0) for i in ids]
    cov = [pool.coverages.get(i, 0.0) for i in ids]
    fused = fused_of(cos, cov)
    order = np.argsort(-fused, kind="stable")[:plan.limit].tolist()
    ranked = [ids[i] for i in order]
    if plan.fusion == "zscore":
        hits = [Hit(ids[i], z_to_unit(float(fused[i])), {}) for i in order]
    elif null is not None:
        hits = _capped(ranked, _evidence_owns(pool, ranked, null, singles))
    else:
        # rank with the collection's moments (quality), score with the reference's only
        # (absolute: a topical collection's own moments would call its best match
        # ordinary)
        absolute = fuse(np.asarray([cos[i] for i in order], dtype=np.float32),
                        np.asarray([cov[i] for i in order], dtype=np.float32), None,
                        plan.dense_weight, plan.sparse_weight)
        hits = _capped(ranked, [calibrated_fused(z) for z in absolute.tolist()])
    for hit, i in zip(hits, order, strict=True):
        hit.key = float(fused[i])
    return [h for h in hits if h.point_id in pool.found]


def _capped(ids: list[str], owns: list[float]) -> list[Hit]:
    """Hits in ranking order, each scored by its own evidence capped by the hit ranked
    above it: a running minimum keeps the scores in ranking order."""
    hits, ceiling = [], 1.0
    for point_id, own in zip(ids, owns, strict=True):
        ceiling = min(ceiling, own)
        hits.append(Hit(point_id, ceiling, {}, own=own))
    return hits


def _evidence_owns(pool: _Pool, ranked: list[str], null: Null,
                   singles: Callable[[list[str]], dict[str, float]] | None) -> list[float]:
    """Each ranked candidate's :func:`evidence_score` over the query's background (a
    branch the query lacks counts as absent, not as 0)."""
    shares = singles(ranked) if singles and pool.coverages else {}
    return [evidence_score(null, pool.cosines.get(i) if pool.cosines else None,
                           pool.coverages.get(i, 0.0) if pool.coverages else None,
                           shares.get(i, 0.0)) for i in ranked]
