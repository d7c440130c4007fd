"""The stages' shared parts: trace nodes, what one stage hands the next, the visible text.

Kept apart from :mod:`agent_search.agent.assistant` (the order of the stages) and
:mod:`agent_search.agent._answering` (the model's turns), which both use them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from agent_search.agent._citations import CitationTracker
from agent_search.agent._conversation import Message
from agent_search.agent._datasources import Refusal
from agent_search.agent.records import STAGE
from agent_search.context import Context
from agent_search.events import SearchComplete, SearchStart, TextDelta
from agent_search.trace import TraceNode
from agent_search.types import Result, ResultItem


def reference(item: ResultItem) -> dict[str, Any]:
    return {"citation_id": item.citation_id, "type": item.type, "title": item.title,
            "content": item.content, "url": item.url, "source": item.source,
            "score": round(item.final_score, 6), "collection": item.collection,
            "document_id": item.document_id, "model": item.model, "record_id": item.record_id,
            "data": item.data}


@contextlib.contextmanager
def stage(ctx: Context, name: str) -> Iterator[TraceNode]:
    """A pipeline stage's trace node: its timing, and the facts it leaves for the record
    (``warnings``, ``errors``, ``keywords``, ``dsl``)."""
    node = ctx.trace.child(name, **{STAGE: True})
    try:
        yield node
    finally:
        node.finish()


def stage_warnings(node: TraceNode) -> list[str]:
    warnings: list[str] = node.attributes.setdefault("warnings", [])
    return warnings


@dataclass(slots=True)
class Found:
    """What the searches of one stream left to answer from: the merged references, whether
    any search ran at all, the types that failed, and the count of matching records of
    the database search that found each record (citation id → ``Result.total``)."""

    references: list[ResultItem]
    searched: bool
    failed: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class Question:
    """What the answer stage works from."""

    query: str
    messages: list[Message]
    found: Found


@dataclass(slots=True)
class Answer:
    """What the answer stage produced: the references the model had (the merged ones plus
    what its tool calls found) and the model's failure, if it failed."""

    references: list[ResultItem]
    error: str | None


class TextOut:
    """The visible text of a stream: chunks go through the citation tracker and out as
    ``text`` events."""

    def __init__(self, ctx: Context, tracker: CitationTracker) -> None:
        self._emit = ctx.events.emit
        self._rid = ctx.request_id
        self.tracker = tracker
        self.written = False
        """Whether any text was written, shown yet or not (markers may be held back)."""

    def write(self, chunk: str) -> None:
        self.written = self.written or bool(chunk)
        visible = self.tracker.feed(chunk)
        if visible:
            self._emit(TextDelta(self._rid, visible))

    def flush(self) -> None:
        tail = self.tracker.flush()
        if tail:
            self._emit(TextDelta(self._rid, tail))


def refused_result(ctx: Context, refusal: Refusal) -> Result:
    """A data source out of the assistant's scope, reported as a failed user search (its
    own ``search_start`` / ``search_complete`` events), so the caller sees the refusal."""
    search_id = ctx.next_search_id()
    node = ctx.trace.child("search", search_type=refusal.type, query=refusal.query,
                           search_id=search_id, source="user")
    node.finish("failed", refusal.error)
    ctx.events.emit(SearchStart(ctx.request_id, search_id, refusal.type, refusal.query))
    ctx.events.emit(SearchComplete(ctx.request_id, search_id, refusal.type, 0, 0.0,
                                   refusal.error))
    return Result(type=refusal.type, query=refusal.query, source="user", search_id=search_id,
                  error=refusal.error)
