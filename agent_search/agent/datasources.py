"""User data sources: ``type: "data"`` content parts of the user's message.

```json
{"type": "data", "data": {"sources": [{"type": "model", "name": "product"},
                                      {"type": "kb_collection", "name": "docs"}]}}
```

Each source becomes a search with source ``"user"`` (the highest priority and weight),
its query the text of the same message:

* ``model`` → a ``db`` search on that model;
* ``kb_collection`` → a ``kb`` search in that collection;
* ``kb_document`` → a ``kb`` search restricted to one document (a ``document_id``
  where, which the kb handler turns into a payload filter; ``collection`` may be given
  on the source);
* ``mcp_resource`` → the resource read from an MCP server (``name`` is the URI,
  ``server`` the server id from config/agent.yml), through the ``mcp_resource`` handler.

``table`` and ``api`` sources are not supported and produce a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_search.agent.conversation import Message, last_user_index, message_text

SUPPORTED = ("model", "kb_collection", "kb_document", "mcp_resource")


def data_source_requests(messages: Sequence[Message], fallback_query: str
                         ) -> tuple[list[dict[str, Any]], list[str]]:
    """Requests for the data parts of the last user message, and warnings."""
    i = last_user_index(messages)
    if i is None or not isinstance(messages[i].get("content"), list):
        return [], []
    message = messages[i]
    query = message_text(message).strip() or fallback_query
    requests: list[dict[str, Any]] = []
    warnings: list[str] = []
    for part in message["content"]:
        if not isinstance(part, dict) or part.get("type") != "data":
            continue
        data = part.get("data")
        sources = data.get("sources") if isinstance(data, dict) else None
        if not isinstance(sources, list):
            warnings.append("data part without a 'data.sources' list was ignored")
            continue
        for source in sources:
            request, warning = _request_for(source, query)
            if request is not None:
                requests.append(request)
            if warning:
                warnings.append(warning)
    return requests, warnings


def _request_for(source: Any, query: str) -> tuple[dict[str, Any] | None, str | None]:
    if not isinstance(source, dict) or not isinstance(source.get("name"), str):
        return None, f"data source {source!r} needs a 'type' and a 'name'"
    kind, name = source.get("type"), source["name"].strip()
    if not name:
        return None, "data source with an empty name was ignored"
    if not query:
        return None, f"data source {kind}:{name} ignored: the message has no text to search for"
    extra: dict[str, Any] = {}
    if isinstance(source.get("limit"), int):
        extra["limit"] = source["limit"]
    if kind == "model":
        return {"type": "db", "query": query, "models": [name], **extra}, None
    if kind == "kb_collection":
        return {"type": "kb", "query": query, "collections": [name], **extra}, None
    if kind == "kb_document":
        collection = source.get("collection")
        return {"type": "kb", "query": query,
                "collections": [collection] if isinstance(collection, str) else [],
                "wheres": [{"field": "document_id", "op": "=", "value": name}], **extra}, None
    if kind == "mcp_resource":
        server = source.get("server")
        return {"type": "mcp_resource", "query": query,
                "options": {"uri": name, "server": server}, **extra}, None
    return None, (f"data source type {kind!r} is not supported "
                  f"(supported: {', '.join(SUPPORTED)})")
