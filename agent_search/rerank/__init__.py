"""Rerankers: reorder merged items by relevance. The builtin one sorts by final score."""

from agent_search.rerank._base import Reranker, apply_rerank
from agent_search.rerank._resolve import resolve_reranker
from agent_search.rerank._score import ScoreReranker

__all__ = ["Reranker", "ScoreReranker", "apply_rerank", "resolve_reranker"]
