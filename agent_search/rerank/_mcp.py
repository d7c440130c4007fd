"""Reranking by a tool of an MCP server (``uses.rerank: "mcp:<server>.<tool>"``).

The tool is called with ``{"query": str, "documents": [str]}`` and answers, as structured
content or JSON text, ``[{"index", "score" | "relevance_score"}]`` (or ``{"results":
[...]}``, or a list of numbers in document order). The caller that talks MCP is injected
by the agent runtime.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from agent_search.rerank._model import apply_scores, document_text, parse_scores

if TYPE_CHECKING:
    from agent_search.context import Context
    from agent_search.types import ResultItem

ToolCaller = Callable[[dict[str, Any]], Awaitable[Any]]


class MCPReranker:
    def __init__(self, name: str, call_tool: ToolCaller) -> None:
        self.name = name
        self._call_tool = call_tool

    async def rerank(self, ctx: Context, query: str, items: list[ResultItem],
                     top_n: int = 0) -> list[ResultItem]:
        if not items:
            return items
        answer = await self._call_tool(
            {"query": query, "documents": [document_text(i) for i in items]})
        return apply_scores(items, parse_scores(answer, len(items)), top_n)
