"""Hooks of the demo assistant.

``create`` runs before auto search. It shows the hook API: a question that starts with
"docs:" is answered from the knowledge base only (a hook search, source "hook"), and
returning messages tells the runtime to skip auto search. Any other question returns
None, so the assistant's auto search (web + kb + db) runs.

``next`` runs after the answer; it adds a note when the model cited references that do
not exist.
"""

from __future__ import annotations

from typing import Any


async def create(ctx: Any, messages: list[dict[str, Any]], options: Any) -> dict[str, Any] | None:
    last = messages[-1].get("content") if messages else None
    if not isinstance(last, str) or not last.lower().startswith("docs:"):
        return None
    question = last[5:].strip() or last
    result = await ctx.search.kb(question, collections=["docs"], limit=5)
    note = ("The knowledge base search failed: " + result.error) if result.error else \
        f"Answer from the project documentation only ({len(result.items)} passages found)."
    return {"messages": [{"role": "system", "content": note}]}


async def next(ctx: Any, payload: dict[str, Any]) -> dict[str, Any] | None:
    unknown = payload["citations"]["unknown"]
    if unknown:
        return {"text": f"\n\n(Note: {len(unknown)} citation(s) above match no reference.)"}
    return None
