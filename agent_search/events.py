"""Output events: what a search (and the agent stream) tells the client while it runs.

Events are small frozen dataclasses rather than pydantic models: a busy request emits one
per result item, and they are built on the hot path. ``to_dict()`` gives the wire form
(see README "Output events"); every event has ``event`` (its kind) and ``request_id``.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream


@dataclass(slots=True)
class Event:
    event: ClassVar[str] = "event"
    request_id: str

    def to_dict(self) -> dict[str, Any]:
        d = {"event": self.event}
        for f in dataclasses.fields(self):
            d[f.name] = getattr(self, f.name)
        return d


@dataclass(slots=True)
class SearchStart(Event):
    event: ClassVar[str] = "search_start"
    id: str
    type: str
    query: str


@dataclass(slots=True)
class SearchResultEvent(Event):
    event: ClassVar[str] = "search_result"
    id: str
    citation_id: str | None
    title: str | None
    url: str | None
    score: float


@dataclass(slots=True)
class SearchComplete(Event):
    event: ClassVar[str] = "search_complete"
    id: str
    type: str
    count: int
    duration_ms: float
    error: str | None
    dropped_below_floor: int = 0


@dataclass(slots=True)
class Notice(Event):
    """Something the caller should know that is not a failure: ``kind`` (machine-readable,
    e.g. ``web_search_off``) and ``text`` (one line for a person, saying what to do)."""

    event: ClassVar[str] = "notice"
    kind: str
    text: str


@dataclass(slots=True)
class TextDelta(Event):
    event: ClassVar[str] = "text"
    text: str


@dataclass(slots=True)
class Citations(Event):
    event: ClassVar[str] = "citations"
    used: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Grounding(Event):
    """One entry per answer sentence (:mod:`agent_search.grounding`): ``{text, start, end,
    status, cited, support, reason}``."""

    event: ClassVar[str] = "grounding"
    grounding: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class Done(Event):
    event: ClassVar[str] = "done"
    references: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    grounding: list[dict[str, Any]] = field(default_factory=list)


@runtime_checkable
class EventSink(Protocol):
    """Receives events. ``emit`` must not block: it is called from the search hot path."""

    def emit(self, event: Event) -> None: ...


class NullSink:
    """Drops every event. The default when nobody listens."""

    def emit(self, event: Event) -> None:
        return None


class ListSink:
    """Keeps events in a list; for tests and for callers that read them afterwards."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)

    def kinds(self) -> list[str]:
        return [e.event for e in self.events]


class StreamSink:
    """Bridges events into an async iterator: the one sink of every event stream (the
    agent's ``run_stream`` reads ``receive``).

    The buffer is unbounded so ``emit`` never blocks a search; a consumer that stops
    reading simply closes the receive side and later events are dropped. ``close()``
    ends the iteration once the buffered events are read.
    """

    def __init__(self) -> None:
        send: MemoryObjectSendStream[Event]
        receive: MemoryObjectReceiveStream[Event]
        send, receive = anyio.create_memory_object_stream[Event](max_buffer_size=float("inf"))
        self._send = send
        self.receive = receive

    def emit(self, event: Event) -> None:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._send.send_nowait(event)

    def close(self) -> None:
        self._send.close()
