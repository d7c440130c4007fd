"""The per-request context handed to handlers, rerankers and hooks.

One :class:`Context` spans everything one user request does (hook searches, auto search,
tool calls): it owns the citation allocator (so ids are unique across all of them), the
event sink, the trace root and the caller's identity used by permission filters. What a
run brings along for the handlers (``generators``: NL → DSL generators by ``uses.query``
name, e.g. an agent runtime's delegates) travels here too, as pydantic-ai's
``RunContext.deps`` does, so nobody has to change a shared handler to pass it in.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent_search.citation import CitationAllocator
from agent_search.config import SearchConfig
from agent_search.events import EventSink, NullSink
from agent_search.trace import TraceNode

if TYPE_CHECKING:
    from agent_search.query.dsl import DSLGenerator


@dataclass(slots=True)
class Context:
    request_id: str = field(default_factory=lambda: secrets.token_hex(8))
    user_id: str | None = None
    team_id: str | None = None
    config: SearchConfig = field(default_factory=SearchConfig)
    events: EventSink = field(default_factory=NullSink)
    trace: TraceNode = field(default_factory=lambda: TraceNode("request"))
    citations: CitationAllocator = field(default_factory=CitationAllocator)
    metadata: dict[str, Any] = field(default_factory=dict)
    generators: dict[str, DSLGenerator] = field(default_factory=dict)
    _search_seq: int = 0

    def next_search_id(self) -> str:
        """A request-unique id for one search (``s1``, ``s2``...), used in events."""
        self._search_seq += 1
        return f"s{self._search_seq}"
