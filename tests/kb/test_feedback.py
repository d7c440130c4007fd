"""Neighbour feedback (:mod:`agent_search.kb._retrieval._feedback`): a candidate like the top group
rises, a standout top hit adds nothing, small collections are left alone, and the scores
still follow the new ranking."""

from __future__ import annotations

from typing import Any

import numpy as np

from agent_search.kb._retrieval import Hit
from agent_search.kb._retrieval._feedback import applies, keys_with_feedback
from agent_search.kb._retrieval._hits import reranked, with_payloads
from agent_search.kb._store import Record, Scored, VectorQuery


class _Vectors:
    """The two store calls feedback makes, over a few fixed vectors."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = {k: np.asarray(v, dtype=np.float64) / np.linalg.norm(v)
                        for k, v in vectors.items()}

    def retrieve(self, collection: str, ids: list[str], *, payload: bool,
                 vectors: Any) -> list[Record]:
        return [Record(i, {}, self.vectors[i].tolist()) for i in ids if i in self.vectors]

    def query_batch(self, collection: str, queries: list[VectorQuery]) -> list[list[Scored]]:
        centre = np.asarray(queries[0].vector, dtype=np.float64)
        return [[Scored(i, float(v @ centre)) for i, v in self.vectors.items()]]


def _keys(store: _Vectors, ids: list[str], keys: list[float]) -> list[float] | None:
    return keys_with_feedback(store, "c", ids, keys, 3, 2.0, None, None)  # type: ignore[arg-type]


def test_a_candidate_like_the_top_group_rises_above_an_unlike_one() -> None:
    store = _Vectors({"a1": [1, 0.1, 0, 0], "a2": [1, 0, 0.1, 0], "x": [0, 0, 1, 1],
                      "a3": [1, 0.1, 0.1, 0], "y": [0, 1, 0, 1], "z": [0, 1, 1, 0]})
    ids = ["a1", "a2", "x", "a3", "y", "z"]
    keys = _keys(store, ids, [5.0, 4.9, 4.8, 4.5, 1.0, 0.9])
    assert keys is not None
    assert keys[ids.index("a3")] > keys[ids.index("x")]


def test_a_standout_top_hit_gives_no_feedback() -> None:
    # the 1st hit stands 5 units above the others: no group, so nothing is added (what
    # resembles it already ranks by resembling the query)
    store = _Vectors({"t": [1, 0, 0, 0], "s": [0, 1, 0, 0], "b": [0, 1, 0.1, 0],
                      "c": [1, 0, 0.1, 0], "n": [0, 0, 0, 1]})
    ids = ["t", "s", "b", "c", "n"]
    before = [10.0, 5.0, 4.0, 4.0, 0.0]
    keys = _keys(store, ids, before)
    assert keys is not None
    assert np.allclose(keys, before, atol=0.01)


def test_small_collections_get_no_feedback() -> None:
    assert not applies(5, 5)
    assert not applies(99, 5)
    assert applies(100, 5)
    assert not applies(10_000, 0)


def test_scores_follow_the_new_ranking() -> None:
    hits = [Hit("a", 0.9, {}, key=3.0, own=0.9), Hit("b", 0.5, {}, key=2.0, own=0.8),
            Hit("c", 0.5, {}, key=1.0, own=0.95)]
    out = reranked(hits, [1.0, 2.5, 3.0], limit=2)
    assert [h.point_id for h in out] == ["c", "b"]
    assert [h.score for h in out] == [0.95, 0.8]  # own scores, capped by the hit above
    assert reranked(hits, None, limit=2) == hits[:2]


class _Payloads:
    """A store whose chunk 'gone' was removed after the hybrid ranked it."""

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def retrieve(self, collection: str, ids: list[str], *, payload: bool,
                 vectors: Any) -> list[Record]:
        self.asked.append(list(ids))
        return [Record(i, {"text": f"chunk {i}"}) for i in ids if i != "gone"]


def test_hits_get_their_payloads_last_and_a_removed_chunk_is_left_out() -> None:
    store = _Payloads()
    hits = [Hit("a", 0.9, {}), Hit("gone", 0.8, {}), Hit("b", 0.7, {"text": "kept"})]
    out = with_payloads(store, "c", hits)  # type: ignore[arg-type]
    assert [(h.point_id, h.payload["text"]) for h in out] == [("a", "chunk a"),
                                                              ("b", "kept")]
    assert store.asked == [["a", "gone"]]  # only those without a payload are read
    assert with_payloads(store, "c", out) == out and len(store.asked) == 1
