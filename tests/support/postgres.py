"""A throwaway PostgreSQL cluster for the tests that run on PostgreSQL too (db, server,
security): the session fixture ``postgres_server`` (provided to every folder through
``pytest_plugins`` in tests/conftest.py) and the helpers that fill its databases.

The cluster is started once per session (``initdb`` into a temporary folder, as the
``postgres`` user when we are root, on a free port on 127.0.0.1). Without PostgreSQL
binaries the tests that need it are skipped with the reason printed, except when
``CI=true``, where they fail.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

__all__ = ["copy_sqlite_to", "create_database", "postgres_server"]


# -- PostgreSQL ------------------------------------------------------------------------


def _pg_bindir() -> Path | None:
    # AGENT_SEARCH_TEST_PG_BINDIR names the folder of initdb/pg_ctl (or a missing one, to
    # see the skip for real); otherwise pg_config, Debian's folders and PATH are searched
    override = os.environ.get("AGENT_SEARCH_TEST_PG_BINDIR")
    if override is not None:
        found = Path(override)
        return found if (found / "initdb").is_file() and (found / "pg_ctl").is_file() else None
    candidates = []
    if shutil.which("pg_config"):
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True,
                             check=False)
        if out.returncode == 0:
            candidates.append(Path(out.stdout.strip()))
    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
    for initdb in ("initdb",):
        found = shutil.which(initdb)
        if found:
            candidates.append(Path(found).resolve().parent)
    for c in candidates:
        if (c / "initdb").is_file() and (c / "pg_ctl").is_file():
            return c
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _no_postgres(reason: str) -> None:
    message = f"PostgreSQL not available: {reason}"
    print(message)
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message + " (CI=true: PostgreSQL tests must run)")
    pytest.skip(message)


class _Cluster:
    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="agent-search-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.as_root = hasattr(os, "geteuid") and os.geteuid() == 0

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self.as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)

    def start(self) -> str:
        os.chmod(self.root, 0o755)
        self.data.mkdir()
        if self.as_root:
            shutil.chown(self.data, "postgres", "postgres")
            shutil.chown(self.root, "postgres", "postgres")
        init = self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust",
                         "--no-locale", "-E", "UTF8")
        if init.returncode != 0:
            raise RuntimeError(f"initdb failed: {init.stderr.strip()[:500]}")
        opts = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
        start = self._run("pg_ctl", "-D", str(self.data), "-o", opts, "-l",
                          str(self.root / "server.log"), "-w", "-t", "60", "start")
        if start.returncode != 0:
            log = (self.root / "server.log")
            tail = log.read_text()[-500:] if log.exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {start.stderr.strip()[:300]} {tail}")
        return f"postgresql://postgres@127.0.0.1:{self.port}"

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """Base URL (no database) of a throwaway PostgreSQL cluster."""
    bindir = _pg_bindir()
    if bindir is None:
        _no_postgres("initdb/pg_ctl not found (run .ci/postgres.sh to install PostgreSQL 15)")
    assert bindir is not None
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        _no_postgres("running as root without runuser to drop to the postgres user")
    cluster = _Cluster(bindir)
    try:
        base = cluster.start()
    except (RuntimeError, OSError, subprocess.SubprocessError, KeyError, LookupError) as exc:
        cluster.stop()
        _no_postgres(str(exc))
        raise
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", cluster.port)) == 0:
                break
        time.sleep(0.1)
    try:
        yield base
    finally:
        cluster.stop()


async def create_database(base: str, name: str) -> None:
    """A fresh (dropped and re-created) database ``name`` on the cluster at ``base``."""
    engine = create_async_engine(f"{base.replace('postgresql:', 'postgresql+asyncpg:')}/postgres",
                                 isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            await conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}"'))
            await conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    finally:
        await engine.dispose()


async def copy_sqlite_to(sqlite_path: Path, url: str) -> None:
    """Copy every table of a SQLite file (schema with portable types, keys, rows)."""
    source = sa.create_engine(f"sqlite:///{sqlite_path}")
    src_meta = sa.MetaData()
    src_meta.reflect(bind=source)
    dst_meta = sa.MetaData()
    for table in src_meta.sorted_tables:
        cols = [sa.Column(c.name, c.type.as_generic(), primary_key=c.primary_key,
                          nullable=c.nullable, autoincrement=False) for c in table.columns]
        fks = [sa.ForeignKeyConstraint([e.parent.name for e in fk.elements],
                                       [e.target_fullname for e in fk.elements])
               for fk in table.foreign_key_constraints]
        sa.Table(table.name, dst_meta, *cols, *fks)
    engine = create_async_engine(url.replace("postgresql:", "postgresql+asyncpg:"))
    try:
        async with engine.begin() as conn:
            await conn.run_sync(dst_meta.create_all)
            with source.connect() as src:
                for table in src_meta.sorted_tables:
                    order = [c for c in table.primary_key.columns]
                    rows: list[dict[str, Any]] = [
                        dict(r) for r in src.execute(sa.select(table).order_by(*order))
                        .mappings()]
                    if rows:
                        await conn.execute(dst_meta.tables[table.name].insert(), rows)
    finally:
        await engine.dispose()
        source.dispose()
