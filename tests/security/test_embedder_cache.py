"""A process that opens many data homes or embedding endpoints keeps a bounded number of
loaded embedders: each fastembed one holds a model (~100 MB), and the cache was unbounded
(the test suite grew past 12 GB, one model per test home)."""

from __future__ import annotations

from pathlib import Path

from agent_search.config import SearchConfig
from agent_search.embedding import MAX_EMBEDDERS, get_embedder
from agent_search.kb import KBSettings


def _settings(i: int) -> KBSettings:
    return KBSettings.from_config(SearchConfig(kb={
        "embedding_provider": "openai", "embedding_url": f"http://127.0.0.1:9/v{i}"}))


def test_loaded_embedders_are_bounded_and_the_recent_ones_reused(tmp_path: Path) -> None:
    made = [get_embedder(_settings(i), tmp_path) for i in range(MAX_EMBEDDERS * 3)]
    assert len({id(e) for e in made}) == len(made)  # distinct endpoints, distinct embedders
    # the most recent MAX_EMBEDDERS are still the same objects...
    for i in range(MAX_EMBEDDERS * 2, MAX_EMBEDDERS * 3):
        assert get_embedder(_settings(i), tmp_path) is made[i]
    # ...and the first one was let go: asking again builds a new one
    assert get_embedder(_settings(0), tmp_path) is not made[0]


def test_a_reused_embedder_is_kept_over_newer_ones(tmp_path: Path) -> None:
    first = get_embedder(_settings(100), tmp_path)
    for i in range(101, 100 + MAX_EMBEDDERS * 2):
        assert get_embedder(_settings(100), tmp_path) is first  # used again: stays
        get_embedder(_settings(i), tmp_path)
    assert get_embedder(_settings(100), tmp_path) is first
