"""What a query gets from unrelated text: the null its matches are judged against.

A cosine of 0.45 is a strong match for one embedding model and noise for another (or for
the same model on another language: all-MiniLM-L6-v2 gives any two Chinese texts ~0.4),
and a BM25 coverage of 0.1 is a good match for a ten-word argument and a chance hit of
one common word for a three-word question. Collection statistics cannot say which: a
collection of five notes has no statistics worth the name, and a topical one calls its
best match ordinary. So every query is also scored against a fixed *background*: short
passages on everyday topics in English and Chinese (:mod:`._background_texts`), embedded
once per embedding model (cached under ``$AGENT_SEARCH_HOME/background/``) and analysed
once per BM25 setting. The query's similarities to them are what this model, for this
query, gives text that is unrelated to it; their mean and spread (:class:`Null`) turn a
chunk's cosine and coverage into *evidence*: how many background standard deviations the
chunk stands above unrelated text. That is the same unit for a 5-chunk collection and a
5-million one, for any model and language the background holds
(:mod:`agent_search.kb._retrieval._search` maps it to scores).

Cost per query: one 180 × d matrix-vector product and a look-up of the query's terms in
the background's postings (~0.05 ms).
"""

from __future__ import annotations

import hashlib
import math
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from agent_search._locations import default_home
from agent_search.embedding import CJK_SHARE, Embedder, cjk_share
from agent_search.kb._retrieval._background_texts import ENGLISH, TEXTS
from agent_search.kb._store import BM25, SparseVec, TermCounts

COVERAGE_STD_MIN = 0.01
"""The least spread a query's background coverage is given (1% of the query's weight): a
query none of whose terms occur in the background has no spread of its own."""


@dataclass(frozen=True, slots=True)
class Null:
    """A query's similarity to unrelated text: mean and standard deviation of its cosine
    and of its BM25 coverage over the background passages."""

    dense_mean: float
    dense_std: float
    coverage_mean: float
    coverage_std: float

    def dense_evidence(self, cosine: float) -> float:
        return (cosine - self.dense_mean) / self.dense_std

    def sparse_evidence(self, coverage: float) -> float:
        return (coverage - self.coverage_mean) / self.coverage_std

    @property
    def reference(self) -> tuple[float, float, float, float]:
        """As :data:`~agent_search.kb._retrieval._evidence.Calibration.reference`: the moments
        a small collection's own are pooled with."""
        return (self.dense_mean, self.dense_std ** 2, self.coverage_mean,
                self.coverage_std ** 2)


class _SparseBackground:
    """The background passages as BM25 postings (one BM25 setting), with their idf."""

    def __init__(self, bm25: BM25, home: Path) -> None:
        counts = _passage_terms(bm25, home)
        avgdl = sum(c.length for c in counts) / max(len(counts), 1)
        self.k1 = bm25.k1
        self.n = len(counts)
        postings: dict[int, tuple[list[int], list[float]]] = {}
        for i, c in enumerate(counts):
            vec = bm25.vector_of(c, avgdl)
            for t, w in zip(vec.indices, vec.values, strict=True):
                docs, weights = postings.setdefault(t, ([], []))
                docs.append(i)
                weights.append(w)
        self.postings = {t: (np.asarray(d, dtype=np.int64), np.asarray(w, dtype=np.float64))
                         for t, (d, w) in postings.items()}

    def moments(self, query: SparseVec) -> tuple[float, float]:
        """Mean and standard deviation of the query's coverage over the passages, with the
        background's own idf (so a word common in any text counts little).

        180 passages cannot show how often a rarer word turns up in unrelated text, so
        the spread is at least the one of chance matches: each query term found in an
        unrelated text with the add-one estimate of its frequency in the background,
        ``p = (df + 1) / (N + 2)``, adding its share of the query's weight (at its mean
        BM25 weight there, 1 for a word the background lacks); terms independent. A
        three-word question whose one rare word a chunk holds then shows ~10 deviations,
        not the 33 of the least spread alone: one shared word is weak evidence."""
        if not query.indices:
            return 0.0, COVERAGE_STD_MIN
        scores = np.zeros(self.n, dtype=np.float64)
        idfs, means, chance = [], [], []
        for term, qw in zip(query.indices, query.values, strict=True):
            docs, weights = self.postings.get(term, (None, None))
            df = 0 if docs is None else len(docs)
            idf = math.log1p((self.n - df + 0.5) / (df + 0.5)) * qw
            idfs.append(idf)
            means.append(1.0 if weights is None else float(weights.mean()))
            chance.append((df + 1.0) / (self.n + 2.0))
            if docs is not None and weights is not None:
                np.add.at(scores, docs, weights * idf)
        bound = max(sum(idfs) * (self.k1 + 1.0), 1e-9)
        scores /= bound
        share = np.asarray(idfs) * np.asarray(means) / bound
        p = np.asarray(chance)
        by_chance = math.sqrt(float((share * share * p * (1.0 - p)).sum()))
        return float(scores.mean()), max(float(scores.std()), by_chance, COVERAGE_STD_MIN)


def _passage_terms(bm25: BM25, home: Path) -> list[TermCounts]:
    """The background passages' BM25 terms under ``bm25``'s analysis: from the data home
    when analysed before, else analysed now and saved there. Cutting the Chinese passages
    into words loads jieba and its dictionary (~1 s of CPU), which a process whose
    questions are all English would otherwise pay on its first search (issue 31)."""
    path = _terms_path(bm25, home)
    terms = _load_terms(path)
    if terms is None:
        terms = [bm25.doc_counts(t) for t in TEXTS]
        _save_terms(path, terms)
    return terms


def _terms_path(bm25: BM25, home: Path) -> Path:
    """Where the passages' terms are kept: keyed by the analysis (language, CJK cutting
    and the segmenter's version)."""
    import importlib.metadata

    try:
        segmenter = importlib.metadata.version("jieba") if bm25.cjk == "words" else "-"
    except importlib.metadata.PackageNotFoundError:
        segmenter = "?"
    key = _digest(f"terms\0{bm25.language}\0{bm25.cjk}\0{segmenter}")
    return home / "background" / f"terms-{key}.npz"


def _load_terms(path: Path) -> list[TermCounts] | None:
    """The saved terms, one per passage; ``None`` when missing, unreadable or not of
    these passages."""
    import zipfile

    try:
        with np.load(path) as saved:
            ids, counts, ends = saved["ids"], saved["counts"], saved["ends"]
    except (OSError, ValueError, KeyError, zipfile.BadZipFile):
        return None
    if len(ends) != len(TEXTS) or ids.dtype != np.uint32 or counts.dtype != np.uint32:
        return None
    starts = [0, *ends[:-1].tolist()]
    return [TermCounts(ids[a:b], counts[a:b], int(counts[a:b].sum()))
            for a, b in zip(starts, ends.tolist(), strict=True)]


def _save_terms(path: Path, terms: list[TermCounts]) -> None:
    """Save the terms for the next process (written whole, then renamed)."""
    import os

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npz")
        np.savez(tmp, ids=np.concatenate([t.ids for t in terms]),
                 counts=np.concatenate([t.counts for t in terms]),
                 ends=np.cumsum([len(t.ids) for t in terms]))
        tmp.replace(path)
    except OSError:
        pass  # a read-only home: analysed again by the next process


@lru_cache(maxsize=8)
def _sparse_background(k1: float, b: float, language: str, cjk: str,
                       home: Path) -> _SparseBackground:
    return _SparseBackground(BM25(k1, b, language, cjk), home)


_DENSE: dict[str, NDArray[np.float32]] = {}
_LOCK = threading.Lock()


@lru_cache(maxsize=64)
def _digest(model_id: str) -> str:
    """The background's key for a model (remembered: hashing the passages on every query
    cost ~0.5 ms of a search)."""
    h = hashlib.sha256(model_id.encode("utf-8"))
    for text in TEXTS:
        h.update(b"\0" + text.encode("utf-8"))
    return h.hexdigest()[:20]


def dense_background(embedder: Embedder, home: Path) -> NDArray[np.float32]:
    """The background passages embedded by ``embedder`` as unit rows: in memory, else from
    the data home, else embedded now (once per model and set of passages) and saved. An
    offline model's folder is part of the key: a new build of the same model (its folder
    names the build) embeds the background again."""
    folder = getattr(embedder, "model_dir", None)
    key = _digest(embedder.model_id + (f"\0{folder.name}" if isinstance(folder, Path) else ""))
    with _LOCK:
        found = _DENSE.get(key)
        if found is not None:
            return found
        path = home / "background" / f"{key}.npy"
        try:
            matrix = np.asarray(np.load(path), dtype=np.float32)
        except (OSError, ValueError):
            matrix = np.asarray(embedder.embed(list(TEXTS)), dtype=np.float32)
            matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(".tmp.npy")
                np.save(tmp, matrix)
                tmp.replace(path)
            except OSError:
                pass  # a read-only home: recomputed by the next process
        _DENSE[key] = matrix
        return matrix


def null_of(background: NDArray[np.float32] | None, bm25: BM25,
            dense: NDArray[np.float32] | None, sparse: SparseVec | None,
            query: str = "", home: Path | None = None) -> Null:
    """The query's :class:`Null` (a branch the query lacks gets mean 0, spread 1).

    The dense null of a mostly-CJK ``query`` is taken over the background passages in
    CJK only: a multilingual model gives text in the query's script a higher cosine
    than text in another, so a background of both would count that gap as spread and
    squeeze the evidence (multilingual-e5-small on zh-rgb: relevant passages 2.8-3.7
    deviations over the whole background, 6.8-9.3 over its Chinese part; all-MiniLM-L6-v2,
    which matches no Chinese, stays at −1.5-3.1). ``home`` (default: the default data
    home) keeps the passages' analysed terms, as it keeps their vectors."""
    dm, ds = 0.0, 1.0
    if dense is not None and background is not None and background.shape[1] == len(dense):
        if query and background.shape[0] == len(TEXTS) and cjk_share(query) >= CJK_SHARE:
            background = background[len(ENGLISH):]
        q = np.asarray(dense, dtype=np.float32)
        cos = background @ (q / max(float(np.linalg.norm(q)), 1e-12))
        dm, ds = float(cos.mean()), max(float(cos.std()), 1e-6)
    cm, cs = 0.0, COVERAGE_STD_MIN
    if sparse is not None:
        cm, cs = _sparse_background(bm25.k1, bm25.b, bm25.language, bm25.cjk,
                                    home or default_home()).moments(sparse)
    return Null(dm, ds, cm, cs)
