"""Search records: what each stream searched and cited, stored in SQLite.

One row per stream, keyed by request id: the query, the extracted keywords, the DSL a
delegate generated, the references given to the LLM, the citations used, durations,
warnings and errors. Read it back with :meth:`RecordStore.get`.

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
    keywords: list[str] = field(default_factory=list)
    decision: str = ""
    dsl: dict[str, Any] | None = None
    searches: list[dict[str, Any]] = field(default_factory=list)
    references: list[dict[str, Any]] = field(default_factory=list)
    citations_used: list[str] = field(default_factory=list)
    citations_unknown: list[str] = field(default_factory=list)
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
