"""Search records of the service, in a SQL database shared by every worker.

The agent runtime stores one record per stream (:class:`~agent_search.agent.RecordStore`,
a SQLite file of this process). The service needs two things more: several worker
processes (or hosts) must see each other's records, and a record may only be read by the
identity that made it. So the service swaps each assistant's store for
:class:`SharedRecordStore`, which writes to ``server.records_url``, else ``db.url``
(PostgreSQL included), else ``$AGENT_SEARCH_HOME/records.sqlite``, and keeps the owner
next to the record. Request ids are made by the server, never taken from the caller, so
nobody can overwrite another's record.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from agent_search.agent.records import RecordStore, SearchRecord
from agent_search.db import async_url

_META = sa.MetaData()
RECORDS = sa.Table(
    "agent_search_records", _META,
    sa.Column("request_id", sa.String(64), primary_key=True),
    sa.Column("owner", sa.Text, nullable=False),
    sa.Column("assistant", sa.Text, nullable=False, server_default=""),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("record", sa.Text, nullable=False),
    sa.Index("agent_search_records_owner_time", "owner", "created_at"),
)


def records_url(explicit: str | None, db_url: str | None, home: Path) -> URL:
    """Where records go: the explicit URL, else the configured database, else a SQLite
    file under ``home``."""
    if explicit or db_url:
        return async_url(explicit or db_url or "")
    home.mkdir(parents=True, exist_ok=True)
    return URL.create("sqlite+aiosqlite", database=str(home / "records.sqlite"))


class SharedRecordStore(RecordStore):
    """Records in a SQL database, with their owner. Drop-in for an assistant's
    ``records`` (``save`` / ``get``); :meth:`expect` and :meth:`get_owned` add ownership."""

    def __init__(self, url: URL) -> None:
        super().__init__(Path(url.database or "records"))
        self.url = url
        self._engine: AsyncEngine | None = None
        self._created = False
        self._owners: dict[str, str] = {}

    @property
    def engine(self) -> AsyncEngine:
        if self._engine is None:
            kwargs: dict[str, object] = {}
            if self.url.get_backend_name() == "sqlite":
                kwargs["connect_args"] = {"timeout": 10}
            self._engine = create_async_engine(self.url, **kwargs)
        return self._engine

    async def ensure(self) -> None:
        """Create the table if missing. Workers starting together may race to create
        it; the loser finds it made and goes on."""
        if self._created:
            return
        try:
            await self._create()
        except sa.exc.DBAPIError:
            await self._create()  # another process created it meanwhile: now a no-op
        self._created = True

    async def _create(self) -> None:
        async with self.engine.begin() as conn:
            if self.url.get_backend_name() == "sqlite":
                await conn.exec_driver_sql("PRAGMA journal_mode=WAL")
            await conn.run_sync(_META.create_all)

    _ensure = ensure

    async def ping(self) -> None:
        """Raise if the database cannot be reached (for ``/readyz``)."""
        await self._ensure()
        async with self.engine.connect() as conn:
            await conn.execute(sa.select(sa.literal(1)))

    def expect(self, request_id: str, owner: str) -> None:
        """Note who makes ``request_id``; its record is stored with that owner when the
        stream saves it (in this process, at the stream's end: nothing is written before
        the first token). Call :meth:`forget` when the stream is over, saved or not."""
        self._owners[request_id] = owner

    def forget(self, request_id: str) -> None:
        self._owners.pop(request_id, None)

    async def save(self, record: SearchRecord) -> None:
        payload = json.dumps(record.to_dict(), ensure_ascii=False, default=str)
        owner = self._owners.get(record.request_id, "")  # "": a stream not made by the service
        await self._ensure()
        async with self.engine.begin() as conn:
            await conn.execute(RECORDS.insert().values(
                request_id=record.request_id, owner=owner, assistant=record.assistant,
                created_at=record.created_at, record=payload))

    async def get(self, request_id: str) -> SearchRecord | None:
        await self._ensure()
        async with self.engine.connect() as conn:
            row = (await conn.execute(sa.select(RECORDS.c.record)
                                      .where(RECORDS.c.request_id == request_id))).first()
        return SearchRecord.from_dict(json.loads(row[0])) if row else None

    async def get_owned(self, request_id: str, owner: str) -> SearchRecord | None:
        """The record if ``owner`` made it; None when missing, unfinished or not theirs
        (the caller cannot tell which: existence is not revealed). The empty owner (a
        stream not made through the service) never matches."""
        if not owner:
            return None
        await self._ensure()
        async with self.engine.connect() as conn:
            row = (await conn.execute(
                sa.select(RECORDS.c.record).where(RECORDS.c.request_id == request_id,
                                                  RECORDS.c.owner == owner))).first()
        return SearchRecord.from_dict(json.loads(row[0])) if row else None

    async def list_owned(self, owner: str, limit: int,
                         before: tuple[float, str] | None = None) -> list[dict[str, Any]]:
        """A page of ``owner``'s records, newest first: request id, assistant and time
        (the record itself is ``get_owned``), from just after ``before`` (the last
        (time, request id) of the previous page). Keyset paging: a page costs its rows
        (the ``(owner, created_at)`` index), however many records there are."""
        if not owner:
            return []
        await self._ensure()
        query = (sa.select(RECORDS.c.request_id, RECORDS.c.assistant, RECORDS.c.created_at)
                 .where(RECORDS.c.owner == owner)
                 .order_by(RECORDS.c.created_at.desc(), RECORDS.c.request_id.desc())
                 .limit(limit))
        if before is not None:
            at, rid = before
            query = query.where(sa.or_(RECORDS.c.created_at < at,
                                       sa.and_(RECORDS.c.created_at == at,
                                               RECORDS.c.request_id < rid)))
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [{"request_id": r[0], "assistant": r[1], "created_at": r[2]} for r in rows]

    def get_sync(self, request_id: str) -> SearchRecord | None:
        raise NotImplementedError("SharedRecordStore is async only: use await get()")

    async def aclose(self) -> None:
        if self._engine is not None:
            await self._engine.dispose()
            self._engine = None
