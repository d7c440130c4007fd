"""Handlers for testing the searcher: the package's own test handlers, plus items."""

from __future__ import annotations

from agent_search import ResultItem
from agent_search.testing import FailingHandler, StaticHandler

__all__ = ["FailingHandler", "StaticHandler", "web_items"]


def web_items(n: int, score: float = 0.5, prefix: str = "http://example.com/") -> list[ResultItem]:
    return [
        ResultItem(title=f"page {i}", content=f"content {i}", url=f"{prefix}{i}", score=score)
        for i in range(n)
    ]
