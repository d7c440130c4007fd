"""Ready-made handlers for testing code that uses agent-search.

Handlers are pluggable by design, so these are real handlers, not stand-ins for a
component: register them on a :class:`~agent_search.searcher.Searcher` (or an
assistant's searcher) to exercise hooks, merging, citations, deadlines and failure paths
without a network or a store — as pydantic-ai's ``TestModel`` or httpx's
``MockTransport`` do for their layers. The project's own tests and benchmarks use them.

::

    from agent_search.testing import StaticHandler, FailingHandler, items

    searcher.registry.register(StaticHandler("web", items(3), delay=0.05))
    searcher.registry.register(FailingHandler("kb", "index offline"))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import anyio

from agent_search.context import Context
from agent_search.types import Request, Result, ResultItem

ItemLike = ResultItem | Mapping[str, Any]

__all__ = ["FailingHandler", "StaticHandler", "items"]


class StaticHandler:
    """Answers every request of its ``type`` with fresh copies of fixed items, after
    ``delay`` seconds (a slow handler), or raises ``RuntimeError(error)`` after the delay
    (a failing one). ``accept=False`` makes it decline every request (``can_handle``);
    ``keyword_queries=True`` makes it want keywords, as the web handler does (auto search
    then sends it the message's keywords).

    It records what it saw: ``requests`` (every request, in order), ``finished`` (searches
    that returned) and ``cancelled`` (searches cancelled during the delay)."""

    def __init__(self, type: str, items: Sequence[ItemLike] = (), *, delay: float = 0.0,
                 error: str | None = None, accept: bool = True,
                 keyword_queries: bool = False) -> None:
        self.type = type
        self.keyword_queries = keyword_queries
        self.items = list(items)
        self.delay = delay
        self.error = error
        self.accept = accept
        self.requests: list[Request] = []
        self.finished = 0
        self.cancelled = 0

    def can_handle(self, ctx: Context, request: Request) -> bool:
        return self.accept

    async def search(self, ctx: Context, request: Request) -> Result:
        self.requests.append(request)
        try:
            if self.delay:
                await anyio.sleep(self.delay)
        except anyio.get_cancelled_exc_class():
            self.cancelled += 1
            raise
        if self.error is not None:
            raise RuntimeError(self.error)
        self.finished += 1
        found = [_fresh(item, self.type) for item in self.items]
        return Result(type=self.type, query=request.query, items=found, total=len(found))


class FailingHandler(StaticHandler):
    """Raises ``RuntimeError(message)`` for every request, after ``delay`` seconds."""

    def __init__(self, type: str, message: str = "backend exploded\nwith a second line", *,
                 delay: float = 0.0) -> None:
        super().__init__(type, delay=delay, error=message)


def items(n: int, *, prefix: str = "https://example.com/", score: float = 0.9,
          step: float = 0.0, title: str = "page") -> list[ResultItem]:
    """``n`` web-like items: ``{title} i``, url ``{prefix}i``, a line of content, scores
    ``score``, ``score - step``, ..."""
    return [ResultItem(title=f"{title} {i}", url=f"{prefix}{i}", content=f"content {i}",
                       score=max(0.0, score - i * step)) for i in range(n)]


def _fresh(item: ItemLike, search_type: str) -> ResultItem:
    """A copy the searcher may stamp without touching the handler's own item."""
    if isinstance(item, ResultItem):
        return item.model_copy(deep=True)
    return ResultItem(**{"type": search_type, **item})
