"""Reranking delegated to an assistant (an LLM "worker").

The assistant receives one JSON task and must answer JSON:

```json
{"task": "rerank", "query": "...", "documents": [{"index": 0, "text": "..."}, ...]}
```
answer: ``[{"index": 0, "score": 0.9}, ...]`` (or ``{"results": [...]}``, or a list of
numbers in document order). The runner that talks to the assistant is injected by the
agent runtime, so this module does not depend on it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from agent_search.rerank._model import apply_scores, document_text, parse_scores

if TYPE_CHECKING:
    from agent_search.context import Context
    from agent_search.types import ResultItem

TaskRunner = Callable[[dict[str, Any]], Awaitable[Any]]


def rerank_task(query: str, items: list[ResultItem]) -> dict[str, Any]:
    return {"task": "rerank", "query": query,
            "documents": [{"index": i, "text": document_text(it)} for i, it in enumerate(items)],
            "answer_format": '[{"index": <int>, "score": <0..1>}]'}


class AgentReranker:
    def __init__(self, agent_id: str, run_task: TaskRunner) -> None:
        self.agent_id = agent_id
        self._run_task = run_task

    async def rerank(self, ctx: Context, query: str, items: list[ResultItem],
                     top_n: int = 0) -> list[ResultItem]:
        if not items:
            return items
        answer = await self._run_task(rerank_task(query, items))
        return apply_scores(items, parse_scores(answer, len(items)), top_n)
