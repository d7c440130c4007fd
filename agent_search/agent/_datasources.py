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
  ``server`` the server id from config/agent.yml), through the ``mcp_resource`` handler,
  which reads only the resources the assistant lists in ``package.yao``
  (``mcp_resources``).

``table`` and ``api`` sources are not supported and produce a warning.

A data part is untrusted input from the user: it may only narrow what the assistant
searches, never widen it. When the assistant lists ``db.models`` or ``kb.collections``
(its :class:`DataScope`), a source outside them is refused with a one-line error (a
:class:`Refusal`, reported like a failed search) and nothing is searched. Searches run in
the stream's context, so the caller's identity filters them like any other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agent_search.agent._conversation import Message, last_user_index, message_text
from agent_search.config import SearchConfig

SUPPORTED = ("model", "kb_collection", "kb_document", "mcp_resource")
_MAX_NAME_CHARS = 80
"""Longest name quoted back in a message (the name itself may be anything)."""


@dataclass(frozen=True, slots=True)
class DataScope:
    """What the assistant may search: its ``db.models`` and ``kb.collections``. An
    empty tuple means the assistant does not restrict that type."""

    models: tuple[str, ...] = ()
    collections: tuple[str, ...] = ()

    @classmethod
    def of(cls, config: SearchConfig) -> DataScope:
        return cls(models=tuple(config.db.models), collections=tuple(config.kb.collections))

    def refuse_model(self, name: str) -> str | None:
        """Why ``name`` may not be searched (None: it may). Model ids compare as the db
        handler finds them: trimmed, case-insensitive."""
        if not self.models or name.strip().lower() in {m.strip().lower() for m in self.models}:
            return None
        return (f"model {_quoted(name)} is not among this assistant's models "
                f"({_listed(self.models)}); not searched")

    def refuse_collection(self, name: str) -> str | None:
        if not self.collections or name in self.collections:
            return None
        return (f"collection {_quoted(name)} is not among this assistant's collections "
                f"({_listed(self.collections)}); not searched")


@dataclass(frozen=True, slots=True)
class Refusal:
    """A data source outside the assistant's scope: the search it asked for, refused."""

    type: str
    query: str
    error: str


def _quoted(name: str) -> str:
    short = name if len(name) <= _MAX_NAME_CHARS else name[:_MAX_NAME_CHARS] + "…"
    return repr(short)


def _listed(names: Sequence[str]) -> str:
    return ", ".join(_quoted(n) for n in names[:10]) + (", …" if len(names) > 10 else "")


def data_source_requests(messages: Sequence[Message], fallback_query: str,
                         scope: DataScope | None = None
                         ) -> tuple[list[dict[str, Any]], list[Refusal], list[str]]:
    """Requests for the data parts of the last user message, the sources refused as out
    of ``scope``, and warnings."""
    scope = scope or DataScope()
    i = last_user_index(messages)
    if i is None or not isinstance(messages[i].get("content"), list):
        return [], [], []
    message = messages[i]
    query = message_text(message).strip() or fallback_query
    requests: list[dict[str, Any]] = []
    refused: list[Refusal] = []
    warnings: list[str] = []
    for source in _sources(message["content"], warnings):
        request, warning = _request_for(source, query)
        if warning:
            warnings.append(warning)
        if request is None:
            continue
        error = _out_of_scope(request, scope)
        if error:
            refused.append(Refusal(type=request["type"], query=query, error=error))
        else:
            requests.append(request)
    return requests, refused, warnings


def _sources(parts: list[Any], warnings: list[str]) -> list[Any]:
    """The ``data.sources`` entries of the message's data parts, in order; a data part
    without that list is a warning."""
    found: list[Any] = []
    for part in parts:
        if not isinstance(part, dict) or part.get("type") != "data":
            continue
        data = part.get("data")
        sources = data.get("sources") if isinstance(data, dict) else None
        if isinstance(sources, list):
            found += sources
        else:
            warnings.append("data part without a 'data.sources' list was ignored")
    return found


def _out_of_scope(request: dict[str, Any], scope: DataScope) -> str | None:
    """Why ``request`` reaches beyond the assistant's scope (None: it does not)."""
    if request["type"] == "db":
        return next(filter(None, map(scope.refuse_model, request["options"]["models"])),
                    None)
    if request["type"] == "kb":
        return next(filter(None, map(scope.refuse_collection,
                                     request["options"]["collections"])), None)
    return None


def _request_for(source: Any, query: str) -> tuple[dict[str, Any] | None, str | None]:
    if not isinstance(source, dict) or not isinstance(source.get("name"), str):
        return None, f"data source {_quoted(repr(source))} needs a 'type' and a 'name'"
    kind, name = source.get("type"), source["name"].strip()
    if not name:
        return None, "data source with an empty name was ignored"
    if not query:
        return None, (f"data source {_quoted(str(kind))}:{_quoted(name)} ignored: the message "
                      "has no text to search for")
    build = _BUILDERS.get(str(kind))
    if build is None:
        return None, (f"data source type {_quoted(str(kind))} is not supported "
                      f"(supported: {', '.join(SUPPORTED)})")
    request = {**build(source, name, query)}
    if isinstance(source.get("limit"), int):
        request["limit"] = source["limit"]
    return request, None


def _model_request(source: dict[str, Any], name: str, query: str) -> dict[str, Any]:
    return {"type": "db", "query": query, "options": {"models": [name]}}


def _collection_request(source: dict[str, Any], name: str, query: str) -> dict[str, Any]:
    return {"type": "kb", "query": query, "options": {"collections": [name]}}


def _document_request(source: dict[str, Any], name: str, query: str) -> dict[str, Any]:
    collection = source.get("collection")
    return {"type": "kb", "query": query, "options": {
        "collections": [collection] if isinstance(collection, str) else [],
        "wheres": [{"field": "document_id", "op": "=", "value": name}]}}


def _resource_request(source: dict[str, Any], name: str, query: str) -> dict[str, Any]:
    return {"type": "mcp_resource", "query": query,
            "options": {"uri": name, "server": source.get("server")}}


_BUILDERS: dict[str, Callable[[dict[str, Any], str, str], dict[str, Any]]] = {
    "model": _model_request, "kb_collection": _collection_request,
    "kb_document": _document_request, "mcp_resource": _resource_request}
"""The request each data source type becomes (``SUPPORTED`` lists the same types)."""
