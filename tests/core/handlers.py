"""Small handlers for testing the searcher. Handlers are pluggable by design, so these
are real handlers, not stand-ins for a component."""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio

from agent_search import Context, Request, Result, ResultItem


@dataclass
class StaticHandler:
    """Returns fixed items after an optional delay; records what it was asked."""

    type: str
    items: list[ResultItem] = field(default_factory=list)
    delay: float = 0.0
    accept: bool = True
    calls: list[Request] = field(default_factory=list)
    finished: int = 0
    cancelled: int = 0

    def can_handle(self, ctx: Context, request: Request) -> bool:
        return self.accept

    async def search(self, ctx: Context, request: Request) -> Result:
        self.calls.append(request)
        try:
            if self.delay:
                await anyio.sleep(self.delay)
        except anyio.get_cancelled_exc_class():
            self.cancelled += 1
            raise
        self.finished += 1
        items = [i.model_copy(deep=True) for i in self.items]
        return Result(type=request.type, query=request.query, items=items, total=len(items))


@dataclass
class FailingHandler:
    type: str
    message: str = "backend exploded\nwith a second line"
    delay: float = 0.0

    def can_handle(self, ctx: Context, request: Request) -> bool:
        return True

    async def search(self, ctx: Context, request: Request) -> Result:
        if self.delay:
            await anyio.sleep(self.delay)
        raise RuntimeError(self.message)


def web_items(n: int, score: float = 0.5, prefix: str = "http://example.com/") -> list[ResultItem]:
    return [
        ResultItem(title=f"page {i}", content=f"content {i}", url=f"{prefix}{i}", score=score)
        for i in range(n)
    ]
