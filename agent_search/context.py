"""The per-request context handed to handlers, rerankers and hooks.

One :class:`Context` spans everything one user request does (hook searches, auto search,
tool calls): it owns the citation allocator (so ids are unique across all of them), the
event sink, the trace root and the caller's identity used by permission filters. What a
run brings along for the handlers travels here as ``deps`` (:class:`~agent_search.deps.Deps`,
as pydantic-ai's ``RunContext.deps``), so nobody has to change a shared handler to pass
it in.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

from agent_search.citation import CitationAllocator
from agent_search.config import SearchConfig
from agent_search.deps import Deps
from agent_search.events import EventSink, NullSink
from agent_search.trace import TraceNode


@dataclass(slots=True)
class Context:
    """One user request, as handlers, rerankers and hooks see it.

    Build it with :meth:`Searcher.context <agent_search.searcher.Searcher.context>`
    (which fills ``deps``) rather than directly.

    Attributes:
        request_id: the request's id (events, trace and the search record use it).
        user_id: who is asking; permission filters of every handler read it.
        team_id: the asker's team; permission filters read it too.
        config: the configuration of this request (an assistant's or a create hook's
            overrides included).
        events: where search progress events go.
        trace: the root of the request's trace.
        citations: the citation-id allocator shared by every search of the request.
        metadata: free-form values of the caller's own.
        deps: what the run hands to handlers (generators, keyword extractor, reranker
            resolver).
    """

    request_id: str = field(default_factory=lambda: secrets.token_hex(8))
    user_id: str | None = None
    team_id: str | None = None
    config: SearchConfig = field(default_factory=SearchConfig)
    events: EventSink = field(default_factory=NullSink)
    trace: TraceNode = field(default_factory=lambda: TraceNode("request"))
    citations: CitationAllocator = field(default_factory=CitationAllocator)
    metadata: dict[str, Any] = field(default_factory=dict)
    deps: Deps = field(default_factory=Deps)
    _search_seq: int = 0

    def next_search_id(self) -> str:
        """A request-unique id for one search (``s1``, ``s2``...), used in events."""
        self._search_seq += 1
        return f"s{self._search_seq}"
