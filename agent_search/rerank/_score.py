"""The builtin reranker: sort by final score (base score × source weight)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_search.rerank._base import rank_by_score

if TYPE_CHECKING:
    from agent_search.context import Context
    from agent_search.types import ResultItem


class ScoreReranker:
    """Stable sort by ``final_score`` descending, then keep ``top_n`` (0 = all).

    Stable: items with equal scores keep their incoming order (request order, then the
    handler's own order), so results are deterministic.
    """

    async def rerank(
        self, ctx: Context, query: str, items: list[ResultItem], top_n: int = 0
    ) -> list[ResultItem]:
        return rank_by_score(items, top_n)
