"""Fitting the kb's score calibration (see :mod:`agent_search.kb._retrieval._search`).

    python -m agent_search.kb.calibrate BEIR_FOLDER --split dev [--compare]

Ingests the corpus like ``eval retrieval`` (passages; the cached ``eval-…`` collection is
reused), then for every query of the split takes the top 100 chunks of the dense and of
the sparse branch plus every chunk of a relevant document, and records per chunk the dense
cosine, the sparse *coverage* (the BM25 score as a fraction of the best the query could
get), the z-score fusion of both over the collection, and the label "its document is
relevant". It fits logistic regressions for dense (on the cosine), sparse (on the
coverage) and hybrid (on the fused standard score), and averages each query's mean and
variance of cosine and coverage over the collection into the *reference statistics* that
small collections borrow; it prints them as the constants of
:data:`agent_search.kb._retrieval._evidence.CALIBRATION`. ``--compare`` also prints nDCG@10 of the
calibrated fusion (with the collection's statistics, and with the reference's only, as a
Qdrant server gets) against the plain z-score fusion, and a reliability table.

The shipped constants were fitted on SciFact's 505 non-test claims with evidence (the
``dev`` split that ``bench/bench_kb.py`` builds from ``queries.jsonl``), never on the test
split. This is a development tool: it holds the collection's vectors in memory.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import anyio
import numpy as np
from numpy.typing import NDArray

from agent_search.config import SearchConfig
from agent_search.embedding import embedder_for_collection
from agent_search.kb._store import KBStore, SparseVec, bm25_of, get_store, scroll_all
from agent_search.kb.evaluation import ensure_ingested, load_dataset, ndcg_at, passage_config
from agent_search.kb.settings import KBSettings
from agent_search.loader import load_config

CANDIDATES = 100


def standard_scores(scores: NDArray[np.float32]) -> NDArray[np.float32]:
    """(x − mean) / std over the whole collection; zeros when all scores are equal."""
    std = float(scores.std())
    if std <= 0.0:
        return np.zeros_like(scores)
    out: NDArray[np.float32] = ((scores - float(scores.mean())) / std).astype(np.float32)
    return out


def zscore_fusion(dense: NDArray[np.float32] | None, sparse: NDArray[np.float32] | None,
                  dense_weight: float, sparse_weight: float) -> NDArray[np.float32]:
    """Weighted mean of each branch's standard scores over the whole collection (the
    calibration tool's reference fusion)."""
    parts = [(standard_scores(x), w) for x, w in ((dense, dense_weight),
                                                  (sparse, sparse_weight)) if x is not None]
    total = sum(w for _, w in parts) or 1.0
    fused = np.zeros_like(parts[0][0])
    for z, w in parts:
        fused += z * np.float32(w / total)
    return fused


class FullIndex:
    """Every chunk's vectors in numpy, to score a query against the whole collection (the
    moments and the candidates of the fit); a development tool's copy, never the kb's."""

    def __init__(self, store: KBStore, name: str) -> None:
        self.payloads: list[dict[str, Any]] = []
        rows: list[list[float]] = []
        postings: dict[int, tuple[list[int], list[float]]] = {}
        for i, rec in enumerate(scroll_all(store, name, payload=True, vectors=True)):
            self.payloads.append(rec.payload)
            rows.append(rec.dense or [])
            if rec.sparse is not None:
                for t, w in zip(rec.sparse.indices, rec.sparse.values, strict=True):
                    owners, weights = postings.setdefault(t, ([], []))
                    owners.append(i)
                    weights.append(w)
        dense = np.asarray(rows, dtype=np.float32)
        self.dense = dense / np.maximum(np.linalg.norm(dense, axis=1, keepdims=True), 1e-12)
        self.postings = {t: (np.asarray(o, dtype=np.int64), np.asarray(w, dtype=np.float32))
                         for t, (o, w) in postings.items()}

    def idf(self, term: int) -> float:
        n = len(self.postings[term][0]) if term in self.postings else 0
        return float(np.log1p((len(self.payloads) - n + 0.5) / (n + 0.5)))

    def dense_scores(self, query: NDArray[np.float32]) -> NDArray[np.float32]:
        q = query / max(float(np.linalg.norm(query)), 1e-12)
        return np.asarray(self.dense @ q, dtype=np.float32)

    def sparse_scores(self, query: SparseVec) -> NDArray[np.float32]:
        scores = np.zeros(len(self.payloads), dtype=np.float32)
        for term, qw in zip(query.indices, query.values, strict=True):
            if term in self.postings:
                owners, weights = self.postings[term]
                np.add.at(scores, owners, weights * np.float32(self.idf(term) * qw))
        return scores

    def max_sparse(self, query: SparseVec, k1: float) -> float:
        return sum(self.idf(t) * v for t, v in zip(query.indices, query.values, strict=True)) \
            * (k1 + 1.0)


def fit_logistic(x: NDArray[np.float64], y: NDArray[np.float64],
                 l2: float = 1e-3) -> NDArray[np.float64]:
    """Weights (intercept first) of a logistic regression by Newton's method."""
    design = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(design.shape[1])
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(design @ w)))
        grad = design.T @ (p - y) + l2 * w
        hess = (design * (p * (1 - p))[:, None]).T @ design + l2 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-9:
            break
    return w


async def _collect(config: SearchConfig, folder: Path, split: str) -> dict[str, Any]:
    config = passage_config(config)
    dataset = await anyio.to_thread.run_sync(load_dataset, folder, split)
    name, _ = await ensure_ingested(config, dataset.corpus)
    settings = KBSettings.from_config(config)
    store = get_store(settings, config.home)
    info = store.info(name)
    index = FullIndex(store, name)
    embedder = embedder_for_collection(info.meta, settings, config.home)
    bm25 = bm25_of(info.meta, settings)
    docs = [str(p.get("document_id")) for p in index.payloads]
    rows: list[tuple[float, float, int, float]] = []
    stats: list[tuple[float, float, float, float]] = []
    per_query: list[tuple[dict[str, int], NDArray[np.float32], NDArray[np.float32],
                          NDArray[np.float32]]] = []
    for qid in sorted(dataset.queries):
        text = dataset.queries[qid]
        dense = index.dense_scores(np.asarray(embedder.embed_query(text), dtype=np.float32))
        query = bm25.query_vector(text)
        raw = index.sparse_scores(query)
        coverage = raw / max(index.max_sparse(query, bm25.k1), 1e-9)
        rels = dataset.qrels[qid]
        stats.append((float(dense.mean()), float(dense.var()), float(coverage.mean()),
                      float(coverage.var())))
        chosen = set(np.argsort(-dense)[:CANDIDATES].tolist())
        chosen |= set(np.argsort(-raw)[:CANDIDATES].tolist())
        chosen |= {i for i, d in enumerate(docs) if rels.get(d, 0) > 0}
        fused = zscore_fusion(dense, raw, settings.dense_weight, settings.sparse_weight)
        rows.extend((float(dense[i]), float(coverage[i]), int(rels.get(docs[i], 0) > 0),
                     float(fused[i])) for i in chosen)
        per_query.append((rels, dense, coverage, fused))
    return {"rows": rows, "per_query": per_query, "docs": docs, "stats": stats}


def _ndcg(per_query: list[Any], docs: list[str], key: Any) -> float:
    total = 0.0
    for rels, dense, coverage, fused in per_query:
        scores = key(dense, coverage, fused)
        ranked: list[str] = []
        for i in np.argsort(-scores)[:100].tolist():
            if docs[i] not in ranked:
                ranked.append(docs[i])
        total += ndcg_at(ranked, rels, 10)
    return total / len(per_query)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--split", default="dev")
    parser.add_argument("--config", type=Path, default=None)
    parser.add_argument("--compare", action="store_true")
    args = parser.parse_args(argv)
    config = load_config(args.config)
    data = anyio.run(_collect, config, args.folder, args.split)
    arr = np.asarray(data["rows"], dtype=np.float64)
    x, y, fused = arr[:, :2], arr[:, 2], arr[:, 3:4]
    zscore = fit_logistic(fused, y)
    reference = np.asarray(data["stats"], dtype=np.float64).mean(axis=0)
    dense = fit_logistic(x[:, :1], y)
    sparse = fit_logistic(x[:, 1:], y)
    out: dict[str, Any] = {
        "pairs": len(y), "positives": int(y.sum()),
        "dense": [round(float(v), 4) for v in dense],
        "sparse": [round(float(v), 4) for v in sparse],
        "zscore": [round(float(v), 4) for v in zscore],
        "reference": {"dense_mean": round(float(reference[0]), 5),
                      "dense_var": round(float(reference[1]), 6),
                      "coverage_mean": round(float(reference[2]), 5),
                      "coverage_var": round(float(reference[3]), 6)},
    }
    if args.compare:
        from agent_search.kb._retrieval import calibrated_fusion

        settings = KBSettings.from_config(config)
        n = len(data["docs"])

        def fusion(size: int) -> Any:
            return lambda d, c, f: calibrated_fusion(d, c, size, settings.dense_weight,
                                                     settings.sparse_weight)

        out["ndcg@10"] = {
            "zscore": round(_ndcg(data["per_query"], data["docs"], lambda d, c, f: f), 4),
            "calibrated": round(_ndcg(data["per_query"], data["docs"], fusion(n)), 4),
            "calibrated, reference statistics only": round(
                _ndcg(data["per_query"], data["docs"], fusion(0)), 4),
        }
        a, b = zscore
        p = 1.0 / (1.0 + np.exp(-(a + b * fused[:, 0])))
        bins = [(lo, hi) for lo, hi in zip(np.linspace(0, 0.9, 10), np.linspace(0.1, 1, 10),
                                           strict=True)]
        out["reliability"] = [
            {"p": f"{lo:.1f}-{hi:.1f}", "n": int(m.sum()),
             "relevant": round(float(y[m].mean()), 3) if m.any() else None}
            for lo, hi in bins for m in [(p >= lo) & (p < hi + (1e-9 if hi >= 1 else 0))]]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
