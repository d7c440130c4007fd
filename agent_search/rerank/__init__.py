"""Rerankers: reorder merged items by relevance. The builtin one sorts by final score.

The delegated kinds (an HTTP rerank model, an MCP tool, an assistant) are exported too,
imported on first use: the model reranker needs httpx, which a searcher that only ranks
by score never loads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_search._lazy import lazy_exports
from agent_search.rerank._base import Reranker, apply_rerank
from agent_search.rerank._resolve import resolve_reranker
from agent_search.rerank._score import ScoreReranker

if TYPE_CHECKING:
    from agent_search.rerank._agent import AgentReranker
    from agent_search.rerank._mcp import MCPReranker
    from agent_search.rerank._model import ModelReranker, RerankError

__getattr__, __dir__ = lazy_exports(__name__, {
    "AgentReranker": "_agent", "MCPReranker": "_mcp", "ModelReranker": "_model",
    "RerankError": "_model"})

__all__ = ["AgentReranker", "MCPReranker", "ModelReranker", "RerankError", "Reranker",
           "ScoreReranker", "apply_rerank", "resolve_reranker"]
