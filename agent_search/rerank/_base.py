"""The reranker protocol and the safe way to run one."""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import anyio

from agent_search.trace import first_line, span

if TYPE_CHECKING:
    from agent_search.context import Context
    from agent_search.types import ResultItem


@runtime_checkable
class Reranker(Protocol):
    """Reorders items for ``query``. May set ``rerank_score`` on items (multiplied into
    their final score) and may drop items beyond ``top_n`` (0 = keep all).

    Optional attributes read by :func:`apply_rerank`: ``label`` (how errors name it) and
    ``timeout`` (seconds it may take)."""

    async def rerank(
        self, ctx: Context, query: str, items: list[ResultItem], top_n: int = 0
    ) -> list[ResultItem]: ...


def keep_top(items: list[ResultItem], top_n: int) -> list[ResultItem]:
    """``top_n`` 0, or more than there are, keeps all."""
    return items if top_n <= 0 or top_n >= len(items) else items[:top_n]


def rank_by_score(items: list[ResultItem], top_n: int = 0) -> list[ResultItem]:
    """Stable sort by ``final_score`` descending, then :func:`keep_top`: the builtin
    ranking, and what a failed reranker is replaced by."""
    return keep_top(sorted(items, key=_final_score, reverse=True), top_n)


_final_score = attrgetter("final_score")


async def apply_rerank(
    reranker: Reranker | None, ctx: Context, query: str, items: list[ResultItem],
    top_n: int = 0, *, label: str | None = None, timeout: float | None = None,
    missing: str = "not configured",
) -> tuple[list[ResultItem], str | None]:
    """Run ``reranker`` under the one rerank-failure policy of the package.

    When the reranker is missing (``None``: ``label`` names what was asked for and
    ``missing`` says why), raises,
    takes longer than ``timeout`` seconds, or returns items it was not given, no item is
    lost: the items are ranked by score (:func:`rank_by_score`, the builtin ranking) and cut to
    ``top_n`` as a working reranker would, any ``rerank_score`` it left is cleared, and
    the one-line reason comes back as ``"rerank <label> failed, used builtin: <why>"``
    (the Result's ``rerank_error``; the agent adds it to the record's warnings)."""
    if not items:
        return items, None
    name = label or getattr(reranker, "label", None) or type(reranker).__name__
    if timeout is None:
        timeout = getattr(reranker, "timeout", None)
    if reranker is None:
        why = missing
    else:
        before = list(items)
        outcome = await _attempt(reranker, ctx, query, before, top_n, name, timeout)
        if not isinstance(outcome, str):
            return outcome, None
        why, items = outcome, before
        for item in items:
            item.rerank_score = None
    return rank_by_score(items, top_n), f"rerank {name} failed, used builtin: {why}"


async def _attempt(reranker: Reranker, ctx: Context, query: str, items: list[ResultItem],
                   top_n: int, name: str, timeout: float | None) -> list[ResultItem] | str:
    """The reranker's ranking of (a copy of) ``items``, or why it is not one to use:
    it raised, took longer than ``timeout``, or returned items it was not given (the
    reason is also the trace span's error)."""
    with span("rerank", reranker=name, count=len(items)) as node:
        try:
            with anyio.fail_after(timeout):
                ranked = await reranker.rerank(ctx, query, list(items), top_n)
        except TimeoutError:
            why = f"timed out after {timeout:g}s"
        except Exception as exc:  # a reranker's failure must not lose results
            why = first_line(exc)
        else:
            known = {id(i) for i in items}
            if isinstance(ranked, list) and all(id(i) in known for i in ranked):
                return ranked
            why = "returned items it was not given"
        node.status, node.error = "failed", why
    return why
