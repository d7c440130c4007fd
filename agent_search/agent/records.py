"""Search records: what each stream searched and cited, stored in SQLite.

One row per stream, keyed by request id: the query, the extracted keywords, the DSL a
delegate generated, the references given to the LLM, the citations used, durations,
warnings and errors, and the grounding of the answer. Read it back with :meth:`RecordStore.get`.

The record is built by :class:`RecordSink`, the event sink of a stream: searches, time to
first text, citations and the final error come from the events it passes on; what no
event carries (query, decision, keywords, DSL, warnings, references, the model's tool
calls) and the duration of each stage come from the stage nodes of the request's trace.
Nothing else records timing.

sqlite3 calls are blocking, so they run in a worker thread.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import anyio

from agent_search.events import (
    Citations,
    Done,
    Event,
    EventSink,
    Grounding,
    SearchComplete,
    SearchStart,
    TextDelta,
)
from agent_search.trace import TraceNode

_SCHEMA = """
CREATE TABLE IF NOT EXISTS search_records (
    request_id TEXT PRIMARY KEY,
    assistant TEXT NOT NULL,
    created_at REAL NOT NULL,
    record TEXT NOT NULL
)
"""


@dataclass(slots=True)
class SearchRecord:
    request_id: str
    assistant: str
    query: str = ""
    follow_up: dict[str, Any] | None = None
    """How the last turn was read: ``how`` (first turn, alone, with the previous
    question's topic, rewritten by the language model), the text ``query``, the ``last``
    turn and the ``earlier`` user turns a database search read it against."""
    keywords: list[str] = field(default_factory=list)
    decision: str = ""
    dsl: dict[str, Any] | None = None
    searches: list[dict[str, Any]] = field(default_factory=list)
    references: list[dict[str, Any]] = field(default_factory=list)
    citations_used: list[str] = field(default_factory=list)
    citations_unknown: list[str] = field(default_factory=list)
    grounding: list[dict[str, Any]] = field(default_factory=list)
    durations_ms: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    created_at: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SearchRecord:
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})


STAGE = "stage"
"""The trace attribute that marks a node as a pipeline stage (its name is the stage's)."""


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


class RecordSink:
    """The event sink of one stream: passes every event on to ``out`` and keeps what the
    search record needs from them; :meth:`record` adds the trace's facts."""

    def __init__(self, request_id: str, assistant: str, out: EventSink) -> None:
        self._out = out
        self._record = SearchRecord(request_id=request_id, assistant=assistant)
        self._searches: dict[str, dict[str, Any]] = {}
        self._started = time.perf_counter()
        self._first_text: float | None = None

    def emit(self, event: Event) -> None:
        if isinstance(event, SearchStart):
            self._searches[event.id] = {"search_id": event.id, "type": event.type,
                                        "query": event.query}
        elif isinstance(event, SearchComplete):
            entry = self._searches.setdefault(event.id, {"search_id": event.id,
                                                         "type": event.type, "query": ""})
            entry.update(count=event.count, error=event.error,
                         duration_ms=event.duration_ms)
        elif isinstance(event, TextDelta):
            if self._first_text is None:
                self._first_text = time.perf_counter()
        elif isinstance(event, Citations):
            self._record.citations_used = list(event.used)
            self._record.citations_unknown = list(event.unknown)
        elif isinstance(event, Grounding):
            self._record.grounding = list(event.grounding)
        self._out.emit(event)

    def record(self, trace: TraceNode, done: Done) -> SearchRecord:
        """The record of the stream ``trace`` belongs to, ending with ``done`` (the last
        event, passed here before it is sent so the record is stored first)."""
        rec = self._record
        attrs = trace.attributes
        rec.query = str(attrs.get("query", ""))
        follow_up = attrs.get("follow_up")
        rec.follow_up = dict(follow_up) if isinstance(follow_up, dict) else None
        rec.decision = str(attrs.get("decision", ""))
        rec.references = list(attrs.get("references", []))
        sources = {n.attributes.get("search_id"): n.attributes.get("source")
                   for n in trace.children if n.name == "search"}
        rec.searches = [{**s, "source": sources.get(s["search_id"])}
                        for s in self._searches.values()]
        durations: dict[str, float] = {}
        for node in trace.children:
            if node.attributes.get(STAGE):
                self._add_stage(rec, node, durations)
        if self._first_text is not None:
            durations["first_text"] = _ms(self._first_text - self._started)
        durations["total"] = _ms(time.perf_counter() - self._started)
        rec.durations_ms = durations
        if done.error:
            rec.errors.append(done.error)
        return rec


    def _add_stage(self, rec: SearchRecord, node: TraceNode,
                   durations: dict[str, float]) -> None:
        """One stage of the stream into the record: its duration (and the LLM's start),
        keywords, DSL, warnings, errors and tool calls."""
        durations[node.name] = _ms((node.end or time.perf_counter()) - node.start)
        if node.name == "llm":
            durations["llm_start"] = _ms(node.start - self._started)
        attrs = node.attributes
        rec.keywords = attrs.get("keywords", rec.keywords)
        rec.dsl = rec.dsl or attrs.get("dsl")
        rec.warnings.extend(attrs.get("warnings", ()))
        rec.errors.extend(attrs.get("errors", ()))
        rec.searches.extend(attrs.get("tool_calls", ()))


class RecordStore:
    """A SQLite file of :class:`SearchRecord` rows. Safe to share between streams."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._ready = False

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=10)
        if not self._ready:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(_SCHEMA)
            self._ready = True
        return conn

    def _save_sync(self, record: SearchRecord) -> None:
        payload = json.dumps(record.to_dict(), ensure_ascii=False, default=str)
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = self._connect()
            try:
                with conn:
                    conn.execute(
                        "INSERT OR REPLACE INTO search_records VALUES (?, ?, ?, ?)",
                        (record.request_id, record.assistant, record.created_at, payload))
            finally:
                conn.close()

    def _get_sync(self, request_id: str) -> SearchRecord | None:
        if not self.path.is_file():
            return None
        with self._lock:
            conn = self._connect()
            try:
                row = conn.execute("SELECT record FROM search_records WHERE request_id = ?",
                                   (request_id,)).fetchone()
            finally:
                conn.close()
        return SearchRecord.from_dict(json.loads(row[0])) if row else None

    async def save(self, record: SearchRecord) -> None:
        await anyio.to_thread.run_sync(self._save_sync, record)

    async def get(self, request_id: str) -> SearchRecord | None:
        """The record of one stream, or None if there is none."""
        return await anyio.to_thread.run_sync(self._get_sync, request_id)

    def get_sync(self, request_id: str) -> SearchRecord | None:
        return self._get_sync(request_id)
