"""Handlers for testing the searcher: the package's own test handlers, plus items."""

from __future__ import annotations

from agent_search import ResultItem
from agent_search.testing import FailingHandler, StaticHandler, items

__all__ = ["FailingHandler", "StaticHandler", "web_items"]


def web_items(n: int, score: float = 0.5, prefix: str = "http://example.com/") -> list[ResultItem]:
    """``n`` items of ``agent_search.testing.items``, all scoring ``score``."""
    return items(n, prefix=prefix, score=score)
