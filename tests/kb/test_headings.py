"""A chunk's heading path as evidence (``kb.heading_weight``,
:func:`agent_search.kb._retrieval._hits.heading_keys`): among the hybrid's candidates,
the section whose heading says what the question asks ranks higher; scores stay each
hit's own evidence, capped by the hit ranked above."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from agent_search.kb._retrieval._hits import Hit, heading_keys, heading_path
from agent_search.kb._retrieval._search import _heading_ranked
from agent_search.kb.handler import _embed_headings, _headings
from agent_search.kb.settings import KBSettings


def test_a_heading_closer_to_the_question_raises_its_key() -> None:
    keys = [5.0, 4.9, 4.8]
    out = heading_keys(keys, [0.2, 0.2, 0.8], 0.5)
    assert out[2] > out[0] > out[1] - 1e-9  # the third's heading is the question's
    assert out[0] == pytest.approx(out[1] + 0.1)  # the same heading: the same shift
    # the shift is a standard score among the candidates: it sums to zero
    assert sum(o - k for o, k in zip(out, keys, strict=True)) == pytest.approx(0.0)


def test_nothing_moves_without_weight_or_without_differing_headings() -> None:
    keys = [3.0, 2.0, 1.0]
    assert heading_keys(keys, [0.1, 0.5, 0.9], 0.0) == keys
    assert heading_keys(keys, [0.4, 0.4, 0.4], 0.5) == keys
    assert heading_keys([1.0], [0.9], 0.5) == [1.0]


def test_headings_that_barely_differ_count_in_the_backgrounds_spread() -> None:
    # twenty copies of one page and one other heading a hair closer to the question:
    # among the candidates alone that hair is a standard deviation of evidence
    keys = [5.0] * 20 + [4.0]
    cosines = [0.100] * 20 + [0.104]
    alone = heading_keys(keys, cosines, 0.5)
    assert alone[-1] > alone[0]  # the standard score of a hair jumps the other page
    floored = heading_keys(keys, cosines, 0.5, spread=0.05)  # unrelated text's spread
    assert floored[-1] < floored[0]
    assert max(abs(o - k) for o, k in zip(floored, keys, strict=True)) < 0.05
    # a spread below the candidates' own changes nothing
    assert heading_keys(keys, cosines, 0.5, spread=1e-6) == alone


def test_the_heading_path_is_title_then_headings() -> None:
    hit = Hit("1", 0.5, {"title": "FAQ", "headings": ["Install", "How do I uninstall?"]})
    assert heading_path(hit) == "FAQ › Install › How do I uninstall?"
    assert heading_path(Hit("2", 0.5, {"headings": ["Only"]})) == "Only"
    assert heading_path(Hit("3", 0.5, {})) == ""


def _unit(*xs: float) -> list[float]:
    v = np.asarray(xs, dtype=np.float64)
    return (v / np.linalg.norm(v)).tolist()


def test_candidates_are_ranked_again_and_scores_follow_the_order() -> None:
    vectors = {"A › Overview": _unit(0, 1), "B › How to uninstall": _unit(1, 0.1),
               "C › Changelog": _unit(0.2, 1)}
    hits = [Hit("a", 0.9, {"title": "A", "headings": ["Overview"]}, key=6.0, own=0.9),
            Hit("c", 0.8, {"title": "C", "headings": ["Changelog"]}, key=5.9, own=0.8),
            Hit("b", 0.7, {"title": "B", "headings": ["How to uninstall"]}, key=5.8,
                own=0.85)]

    def embed(texts: list[str]) -> np.ndarray:
        return np.asarray([vectors[t] for t in texts], dtype=np.float32)

    question = np.asarray(_unit(1, 0), dtype=np.float32)  # "how do I uninstall it?"
    out = _heading_ranked(hits, 0.5, question, embed)
    assert [h.point_id for h in out] == ["a", "b", "c"]  # b's heading passes c
    scores = [h.score for h in out]
    assert scores == sorted(scores, reverse=True)
    assert out[1].score == 0.85  # its own evidence, under a's 0.9
    assert all(h.score <= (h.own or 1.0) for h in out)
    # weight 0: the hybrid's order
    assert [h.point_id for h in _heading_ranked(hits, 0.0, question, embed)] == ["a", "c", "b"]


def test_the_first_hit_never_moves_so_the_floor_decides_as_before() -> None:
    # the uninstall section's heading is the question's, but its chunk's evidence is
    # weak (0.01, under a 0.02 floor): first, it would drop the whole answer
    vectors = {"A › Overview": _unit(0, 1), "B › How to uninstall": _unit(1, 0)}
    hits = [Hit("a", 0.6, {"title": "A", "headings": ["Overview"]}, key=6.0, own=0.6),
            Hit("b", 0.01, {"title": "B", "headings": ["How to uninstall"]}, key=5.99,
                own=0.01)]

    def embed(texts: list[str]) -> np.ndarray:
        return np.asarray([vectors[t] for t in texts], dtype=np.float32)

    out = _heading_ranked(hits, 5.0, np.asarray(_unit(1, 0), dtype=np.float32), embed)
    assert [(h.point_id, h.score) for h in out] == [("a", 0.6), ("b", 0.01)]


class _Counting:
    model_id = "test-model"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.asarray([[float(len(t)), 1.0] for t in texts], dtype=np.float32)


def test_heading_paths_are_embedded_once_per_model_and_text() -> None:
    _headings.cache_clear()
    model = _Counting()
    first = _embed_headings(model, ["A › x", "B", "A › x"])  # type: ignore[arg-type]
    again = _embed_headings(model, ["B", "A › x", "C"])  # type: ignore[arg-type]
    assert model.calls == [["A › x", "B"], ["C"]]
    assert first.shape == (3, 2) and again.shape == (3, 2)
    assert np.allclose(first[0], again[1]) and np.allclose(first[1], again[0])
    _headings.cache_clear()


def test_the_setting_is_on_by_default_and_bounded() -> None:
    assert KBSettings().heading_weight == 0.5
    assert KBSettings(heading_weight=0).heading_weight == 0
    with pytest.raises(ValueError):
        KBSettings(heading_weight=-1)
