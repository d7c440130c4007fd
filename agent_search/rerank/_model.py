"""Reranking with a cross-encoder behind an HTTP ``/rerank`` endpoint.

Three wire formats, all "query + documents in, relevance per document out":

* ``cohere`` — ``POST .../v1/rerank`` ``{model, query, documents: [str]}`` →
  ``{results: [{index, relevance_score}]}``;
* ``jina`` — the same request and response shape as Cohere;
* ``tei`` (text-embeddings-inference) — ``POST .../rerank`` ``{query, texts: [str]}`` →
  ``[{index, score}]``.

The relevance becomes each item's ``rerank_score`` (multiplied into its final score with
the base score and source weight); items are then sorted by final score. A failure
raises, and the caller (:func:`~agent_search.rerank._base.apply_rerank` or the runtime's
fallback) keeps the unreranked order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import httpx

from agent_search.errors import RunError
from agent_search.rerank._base import rank_by_score

if TYPE_CHECKING:
    from agent_search.context import Context
    from agent_search.types import ResultItem

Protocol = Literal["cohere", "jina", "tei"]
MAX_DOCUMENT_CHARS = 4000


class RerankError(RunError):
    """The rerank endpoint or delegate failed or answered something unusable."""


def document_text(item: ResultItem) -> str:
    parts = [item.title or "", item.content or ""]
    if not item.content and item.data:
        parts.append(", ".join(f"{k}: {v}" for k, v in item.data.items()))
    return "\n".join(p for p in parts if p)[:MAX_DOCUMENT_CHARS]


def parse_scores(payload: Any, count: int) -> dict[int, float]:
    """Relevance per document index from any of the usual answer shapes: ``{results:
    [...]}``, ``[{index, relevance_score | score}]`` or a plain list of numbers in
    document order."""
    if isinstance(payload, dict):
        payload = payload.get("results", payload.get("data"))
    if not isinstance(payload, list):
        raise RerankError("rerank answer has no list of results")
    scores: dict[int, float] = {}
    for pos, entry in enumerate(payload):
        index, score = _entry_score(pos, entry)
        if not 0 <= index < count:
            raise RerankError(f"rerank result index {index} is outside 0..{count - 1}")
        scores[index] = score
    if not scores:
        raise RerankError("rerank answer is empty")
    return scores


def _entry_score(pos: int, entry: Any) -> tuple[int, float]:
    """The document index and score of one result: a number is the score of the
    document at its position; an object names its ``index`` and score."""
    if isinstance(entry, int | float) and not isinstance(entry, bool):
        return pos, float(entry)
    if not isinstance(entry, dict):
        raise RerankError(f"unexpected rerank result {entry!r}")
    raw_index = entry.get("index")
    raw_score = entry.get("relevance_score", entry.get("score"))
    if not isinstance(raw_index, int) or not isinstance(raw_score, int | float):
        raise RerankError(f"rerank result {entry!r} lacks an integer 'index' and a "
                          "numeric 'relevance_score' or 'score'")
    return raw_index, float(raw_score)


def apply_scores(items: list[ResultItem], scores: dict[int, float], top_n: int
                 ) -> list[ResultItem]:
    """Set ``rerank_score`` (0 for documents the reranker left out) and sort by final
    score, stable."""
    for i, item in enumerate(items):
        item.rerank_score = max(0.0, scores.get(i, 0.0))
    return rank_by_score(items, top_n)


class ModelReranker:
    def __init__(self, url: str, *, protocol: Protocol = "cohere", model: str | None = None,
                 api_key: str | None = None, timeout: float = 10.0,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.url = url
        self.protocol = protocol
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self._transport = transport

    def _body(self, query: str, documents: Sequence[str]) -> dict[str, Any]:
        if self.protocol == "tei":
            return {"query": query, "texts": list(documents), "raw_scores": False}
        body: dict[str, Any] = {"query": query, "documents": list(documents)}
        if self.model:
            body["model"] = self.model
        return body

    async def rerank(self, ctx: Context, query: str, items: list[ResultItem],
                     top_n: int = 0) -> list[ResultItem]:
        if not items:
            return items
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        body = self._body(query, [document_text(i) for i in items])
        try:
            async with httpx.AsyncClient(timeout=self.timeout,
                                         transport=self._transport) as client:
                response = await client.post(self.url, json=body, headers=headers)
        except httpx.TimeoutException as exc:
            raise RerankError(f"rerank endpoint {self.url} timed out after "
                              f"{self.timeout:g}s") from exc
        except httpx.HTTPError as exc:
            raise RerankError(f"rerank endpoint {self.url}: {type(exc).__name__}: {exc}"
                              ) from exc
        if response.status_code >= 400:
            first = response.text.strip().splitlines()[:1]
            raise RerankError(f"rerank endpoint {self.url}: HTTP {response.status_code}"
                              + (f": {first[0][:200]}" if first else ""))
        try:
            payload = response.json()
        except ValueError as exc:
            raise RerankError(f"rerank endpoint {self.url} did not answer JSON") from exc
        return apply_scores(items, parse_scores(payload, len(items)), top_n)
