"""The embedding package's vector cache: one embed call for what is missing, scopes kept
apart, the oldest entries dropped past its size."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from agent_search.embedding import VectorCache


class _Counting:
    def __init__(self, offset: float = 0.0) -> None:
        self.calls: list[list[str]] = []
        self.offset = offset

    def __call__(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.calls.append(list(texts))
        return np.asarray([[len(t) + self.offset, 1.0] for t in texts], dtype=np.float32)


def test_only_the_missing_texts_are_embedded_in_one_call() -> None:
    cache, embed = VectorCache(10), _Counting()
    first = cache.get(embed, ["a", "bb", "a"])
    again = cache.get(embed, ["bb", "ccc"])
    assert embed.calls == [["a", "bb"], ["ccc"]]
    assert first.tolist() == [[1.0, 1.0], [2.0, 1.0], [1.0, 1.0]]
    assert again.tolist() == [[2.0, 1.0], [3.0, 1.0]]


def test_a_text_of_one_scope_is_not_answered_for_another() -> None:
    cache = VectorCache(10)
    one, other = _Counting(), _Counting(offset=100.0)
    cache.get(one, ["word"], scope="model-a")
    rows = cache.get(other, ["word"], scope="model-b")
    assert other.calls == [["word"]]
    assert rows.tolist() == [[104.0, 1.0]]
    assert cache.texts("model-a") == ["word"] and cache.texts("model-b") == ["word"]


def test_the_oldest_text_is_dropped_past_the_size() -> None:
    cache, embed = VectorCache(2), _Counting()
    cache.get(embed, ["a", "bb"])
    cache.get(embed, ["ccc"])
    assert cache.texts() == ["bb", "ccc"]
    cache.get(embed, ["a"])
    assert embed.calls[-1] == ["a"]  # embedded again once dropped
