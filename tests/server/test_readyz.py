"""``/readyz`` asks every registered handler that offers ``async ping()`` — the kb and db
handlers, or one of yours — not a list of handler classes the service knows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from tests.support.http_service import in_process_app, register


class _Pinged:
    """A handler of a custom type whose store answers, or not."""

    def __init__(self, type_: str, error: str | None = None) -> None:
        self.type, self.error, self.pings = type_, error, 0

    def can_handle(self, ctx: Any, request: Any) -> bool:
        return request.type == self.type

    async def search(self, ctx: Any, request: Any) -> Any:
        raise NotImplementedError

    async def ping(self) -> None:
        self.pings += 1
        if self.error:
            raise ConnectionError(self.error)


def test_readyz_asks_each_handler_that_can_be_pinged(tmp_path: Path) -> None:
    app, _ = in_process_app(tmp_path, server={})
    service = app.state.service
    news, feeds, broken = _Pinged("news"), _Pinged("news"), _Pinged("wiki", "store is down")
    for handler in (news, feeds, broken):
        register(handler, [service.searcher])
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        ready = client.get("/readyz")
    assert ready.status_code == 503
    # the WatchedHandler (kb, no ping) is not asked; two of one type are numbered
    assert ready.json()["checks"] == {"records": "ok", "news": "ok", "news1": "ok",
                                      "wiki": "ConnectionError: store is down"}
    assert (news.pings, feeds.pings, broken.pings) == (1, 1, 1)
