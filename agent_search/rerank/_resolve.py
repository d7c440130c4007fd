"""The one resolution of a reranker name, for request-level ``rerank: {type}`` and for
the merge's ``uses.rerank`` alike."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from agent_search.rerank._score import ScoreReranker

if TYPE_CHECKING:
    from agent_search.context import Context
    from agent_search.rerank._base import Reranker

BUILTIN_NAMES = frozenset({"", "builtin", "score"})
"""Names of the builtin ranking by final score."""


def resolve_reranker(name: str | None, named: Mapping[str, Reranker],
                     ctx: Context) -> Reranker | None:
    """The reranker ``name`` stands for, looked up in this order:

    1. ``builtin`` / ``score`` (or nothing): the score ranking (``named["score"]`` when
       the searcher was given one);
    2. a reranker of the searcher's own by that name (``Searcher(rerankers={...})``), so
       a custom Python reranker can be named in ``uses.rerank``;
    3. the run's delegates (``ctx.deps.rerankers``): ``model:<name>``,
       ``mcp:<server>.<tool>``, an assistant id, and the request-level kinds ``model``,
       ``mcp`` and ``agent``.

    None when nobody provides it (the caller reports "not configured"); a delegate that
    is named but cannot be built raises, with the one-line reason.
    """
    key = (name or "").strip()
    if key in BUILTIN_NAMES:
        return named.get("score") or ScoreReranker()
    found = named.get(key)
    if found is not None:
        return found
    resolver = ctx.deps.rerankers
    return None if resolver is None else resolver(ctx, key)
