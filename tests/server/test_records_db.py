"""Search records in the configured database (``db.url``), shared by every worker: two
services (as two worker processes would be) on one PostgreSQL database."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from agent_search.server import Service, ServiceOptions
from agent_search.server._auth import Identity
from tests.support.http_service import WatchedHandler, register, write_project
from tests.support.postgres import create_database


@pytest.mark.postgres
def test_records_go_to_postgres_and_workers_share_them(tmp_path: Path,
                                                       postgres_server: str) -> None:
    anyio.run(create_database, postgres_server, "records_test")
    url = f"{postgres_server}/records_test"
    cdir, adir = write_project(tmp_path, server={})
    search = json.loads((cdir / "search.yao").read_text())
    (cdir / "search.yao").write_text(json.dumps({**search, "db": {"url": url}}))

    def load() -> Service:
        service = Service.load(ServiceOptions(config_dir=cdir, assistants_dir=adir,
                                              builtin_handlers=False))
        register(WatchedHandler(), [a.searcher for a in service.assistants.values()])
        return service

    alice = Identity("k0", "alice", "t1")
    bob = Identity("k1", "bob", "t1")

    async def scenario() -> None:
        one, two = load(), load()
        try:
            assert one.records.url.get_backend_name() == "postgresql"
            await one.records.ensure()
            await two.records.ensure()  # the second "worker" finds the table made
            assistant = one.assistants["offline"]
            from agent_search.agent import Options

            one.records.expect("rid-1", alice.owner)
            stream = assistant.stream([{"role": "user", "content": "shared records?"}],
                                      Options(request_id="rid-1", user_id="alice"))
            async for _ in stream:
                pass
            seen = await two.records.get_owned("rid-1", alice.owner)
            assert seen is not None and seen.query == "shared records?" and seen.references
            assert await two.records.get_owned("rid-1", bob.owner) is None
        finally:
            await one.aclose()
            await two.aclose()

    anyio.run(scenario)
