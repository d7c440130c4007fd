"""The reranker protocol and the safe way to run one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from agent_search.trace import first_line, span

if TYPE_CHECKING:
    from agent_search.context import Context
    from agent_search.types import ResultItem


@runtime_checkable
class Reranker(Protocol):
    """Reorders items for ``query``. May set ``rerank_score`` on items (multiplied into
    their final score) and may drop items beyond ``top_n`` (0 = keep all)."""

    async def rerank(
        self, ctx: Context, query: str, items: list[ResultItem], top_n: int = 0
    ) -> list[ResultItem]: ...


def keep_top(items: list[ResultItem], top_n: int) -> list[ResultItem]:
    """``top_n`` 0, or more than there are, keeps all."""
    return items if top_n <= 0 or top_n >= len(items) else items[:top_n]


async def apply_rerank(
    reranker: Reranker, ctx: Context, query: str, items: list[ResultItem], top_n: int = 0
) -> tuple[list[ResultItem], str | None]:
    """Run ``reranker``; on failure return the items unchanged, in their previous order,
    with a one-line error. A reranker that drops or invents items is treated as failed."""
    if not items:
        return items, None
    before = list(items)
    with span("rerank", reranker=type(reranker).__name__, count=len(items)) as node:
        try:
            ranked = await reranker.rerank(ctx, query, list(items), top_n)
        except Exception as exc:  # a reranker's failure must not lose results
            for item in before:
                item.rerank_score = None
            node.status, node.error = "failed", first_line(exc)
            return before, f"rerank failed: {first_line(exc)}"
        known = {id(i) for i in before}
        if not isinstance(ranked, list) or any(id(i) not in known for i in ranked):
            for item in before:
                item.rerank_score = None
            node.status, node.error = "failed", "reranker returned items it was not given"
            return before, "rerank failed: reranker returned items it was not given"
        return ranked, None
