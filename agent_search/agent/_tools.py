"""The ``search`` tool an assistant can offer its model (``"tools": ["search"]`` in
package.yao).

The model calls ``search({type, query, limit?})``; the runtime runs it on the stream's
searcher and context (source ``hook``: the assistant itself asked), so results stream as
search events, get citation ids unique within the request, and come back to the model as
the same fenced references block the system prompt uses.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agent_search.agent._requests import build_request
from agent_search.agent.llm.base import ToolCall
from agent_search.citation import build_references

if TYPE_CHECKING:
    from agent_search.context import Context
    from agent_search.searcher import Searcher
    from agent_search.types import ResultItem

SEARCH_TOOL = "search"
MAX_TOOL_ROUNDS = 3


def search_tool_spec(types: Sequence[str]) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": SEARCH_TOOL,
        "description": "Search for information. Returns references; cite them by their "
                       "'ref' marker.",
        "parameters": {
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": list(types),
                         "description": "web: the internet; kb: the knowledge base; "
                                        "db: the database"},
                "query": {"type": "string", "description": "What to search for"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 20},
            },
            "required": ["type", "query"],
        },
    }}


def assistant_tool_message(text: str, calls: Sequence[ToolCall]) -> dict[str, Any]:
    return {"role": "assistant", "content": text or None, "tool_calls": [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
        for c in calls]}


async def run_tool_call(call: ToolCall, *, searcher: Searcher, ctx: Context,
                        allowed_types: Sequence[str]) -> tuple[dict[str, Any], list[ResultItem]]:
    """The ``tool`` message answering ``call`` and the items it found. Bad calls are
    answered with an error the model can read, never raised."""

    def answer(content: str) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": call.id, "content": content}

    if call.name != SEARCH_TOOL:
        return answer(f"error: unknown tool {call.name!r}; the only tool is 'search'"), []
    try:
        args = json.loads(call.arguments or "{}")
    except ValueError:
        return answer("error: the arguments are not valid JSON"), []
    if not isinstance(args, dict):
        return answer("error: the arguments must be a JSON object"), []
    if args.get("type") not in allowed_types:
        return answer(f"error: type must be one of {', '.join(allowed_types)}"), []
    fields = {k: args[k] for k in ("type", "query", "limit") if k in args}
    result = await searcher.search(build_request(fields, "hook"), ctx=ctx)
    if result.error:
        return answer(f"error: {result.error}"), []
    if not result.items:
        return answer("no results"), []
    return answer(build_references(result.items, ctx.config.citation.format)), result.items
