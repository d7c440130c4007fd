"""Rerankers: reorder merged items by relevance. The builtin one sorts by final score."""

from agent_search.rerank.base import Reranker, apply_rerank
from agent_search.rerank.score import ScoreReranker

__all__ = ["Reranker", "ScoreReranker", "apply_rerank"]
