"""The async SQLAlchemy engine a db handler searches with.

URLs are accepted in their plain forms (``sqlite:///path``, ``postgresql://...``, or a
bare file path) and mapped to the async drivers (aiosqlite, asyncpg). Search connections
are read-only by default: SQLite opens the file with ``mode=ro``; PostgreSQL sessions
start with ``default_transaction_read_only=on`` and a statement timeout.
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path
from typing import Any

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from agent_search.errors import ConfigError

DEFAULT_DB_FILE = "agent.db"


def async_url(url_or_path: str | Path) -> URL:
    """Map a database URL or SQLite file path to its async-driver URL."""
    text = str(url_or_path)
    if "://" not in text:
        return URL.create("sqlite+aiosqlite", database=str(Path(text).expanduser()))
    try:
        url = make_url(text)
    except ArgumentError as exc:
        raise ConfigError("not a database URL", key="db.url") from exc
    backend = url.get_backend_name()
    if backend == "sqlite":
        return url.set(drivername="sqlite+aiosqlite")
    if backend in ("postgresql", "postgres"):
        return url.set(drivername="postgresql+asyncpg")
    raise ConfigError(f"unsupported database {backend!r}; use sqlite or postgresql",
                      key="db.url")


def default_url(home: Path) -> URL:
    return URL.create("sqlite+aiosqlite", database=str(home / DEFAULT_DB_FILE))


def make_engine(url: URL, *, read_only: bool = True,
                statement_timeout_ms: int = 10_000) -> AsyncEngine:
    """An engine for searches. A SQLite file that does not exist is an error (we never
    create an empty database by searching it)."""
    backend = url.get_backend_name()
    # searches only read: autocommit spares the BEGIN/ROLLBACK round trips of each search
    # (and leaves no transaction open in the pool); read-only is enforced below
    kwargs: dict[str, Any] = {"isolation_level": "AUTOCOMMIT", "pool_reset_on_return": None}
    if backend == "sqlite":
        db = url.database or ""
        if db in ("", ":memory:") or db.startswith("file:"):
            return create_async_engine(url, **kwargs)
        path = Path(db)
        if not path.is_file():
            raise ConfigError(f"SQLite database not found: {path}", key="db.url")
        if read_only:  # a URI filename: '?', '#' and '%' in the path must be escaped
            quoted = urllib.parse.quote(path.resolve().as_posix(), safe="/")
            url = url.set(database=f"file:{quoted}?mode=ro", query={"uri": "true"})
    elif backend == "postgresql":
        settings: dict[str, str] = {}
        if read_only:
            settings["default_transaction_read_only"] = "on"
        if statement_timeout_ms:
            settings["statement_timeout"] = str(statement_timeout_ms)
        kwargs["connect_args"] = {"server_settings": settings}
        kwargs["pool_pre_ping"] = True
    return create_async_engine(url, **kwargs)
