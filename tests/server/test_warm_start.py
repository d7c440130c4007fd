"""The service gets its handlers ready at start (the db handler's schema and its model of
names by meaning), so the first question does not wait for them; a handler that fails to
warm (a database down at start) does not stop the service."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_search import Context, Request, Result
from agent_search.server import Service, ServiceOptions
from tests.support.http_service import register, write_project

pytestmark = pytest.mark.anyio


class _Warmable:
    def __init__(self, search_type: str, *, fail: bool = False) -> None:
        self.type = search_type
        self.fail = fail
        self.warmed = 0

    def can_handle(self, ctx: Context, request: Request) -> bool:
        return request.type == self.type

    async def search(self, ctx: Context, request: Request) -> Result:
        return Result(type=self.type, query=request.query)

    async def warm(self) -> None:
        self.warmed += 1
        if self.fail:
            raise ConnectionError("database down")


async def test_every_handler_is_warmed_once_and_a_failure_is_left_to_the_searches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cdir, adir = write_project(tmp_path, assistants={"one": {"name": "One"}})
    monkeypatch.setenv("AGENT_SEARCH_HOME", str(tmp_path / "home"))
    service = Service.load(ServiceOptions(config_dir=cdir, assistants_dir=adir,
                                          builtin_handlers=False))
    good, bad = _Warmable("notes"), _Warmable("ledger", fail=True)
    searchers: list[Any] = [service.searcher, *(a.searcher for a in service.assistants.values())]
    register(good, searchers)
    register(bad, searchers)
    try:
        await service.warm()
    finally:
        await service.aclose()
    assert (good.warmed, bad.warmed) == (1, 1)
