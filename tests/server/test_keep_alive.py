"""Issue 33 item 4: a client reusing a keep-alive connection is never cut off.

uvicorn closes a connection idle for ``timeout_keep_alive`` seconds, 5 by default: the
same as httpx's (so the openai client's) pool expiry. A client that sent its next request
on the connection as the server closed it got a ``ReadError`` (11 of 2,000 requests of
200 concurrent streaming chats). ``agent-search serve`` now passes
``server.http_keep_alive_seconds`` (75 s), above common clients' pool timeouts. The test
serves the real app with the options ``serve`` passes, on 127.0.0.1, and reuses one
connection across the old 5 s boundary with ``http.client``, which (like ``requests``)
sends on a kept connection without first checking that the server still holds it."""

from __future__ import annotations

import http.client
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from agent_search.cli.serve import uvicorn_options
from agent_search.server import Service, ServiceOptions, create_app
from agent_search.server.settings import ServerSettings
from tests.support.http_service import ThreadedServer, write_project

OLD_DEFAULT = 5.0
"""uvicorn's own keep-alive, and httpx's keepalive_expiry."""


def test_serve_holds_idle_connections_longer_than_common_clients() -> None:
    options = uvicorn_options(ServerSettings())
    assert options["timeout_keep_alive"] >= 60.0  # httpx/openai 5 s, aiohttp 15 s, LBs 60 s
    assert options["timeout_graceful_shutdown"] > ServerSettings().grace_seconds


def test_the_keep_alive_is_configured_in_agent_yml(tmp_path: Path) -> None:
    cdir = tmp_path / "config"
    cdir.mkdir()
    (cdir / "agent.yml").write_text(yaml.safe_dump({"server": {"http_keep_alive_seconds": 120}}))
    assert uvicorn_options(ServerSettings.load(cdir))["timeout_keep_alive"] == 120
    (cdir / "agent.yml").write_text(yaml.safe_dump({"server": {"http_keep_alive_seconds": 0}}))
    with pytest.raises(ValueError, match="http_keep_alive_seconds"):
        ServerSettings.load(cdir)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("keep-alive")
    cdir, adir = write_project(root, server={})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENT_SEARCH_HOME", str(root / "home"))
        service = Service.load(ServiceOptions(config_dir=cdir, assistants_dir=adir,
                                              builtin_handlers=False))
    server = ThreadedServer(create_app(service),
                            **uvicorn_options(ServerSettings.load(cdir))).start()
    try:
        yield server.url
    finally:
        server.stop()


def test_a_connection_is_reused_after_the_old_five_seconds_idle(served: str) -> None:
    where = urlsplit(served)
    conn = http.client.HTTPConnection(where.hostname or "", where.port, timeout=30)
    try:
        conn.request("GET", "/healthz")
        first = conn.getresponse()
        first.read()
        assert first.status == 200 and first.getheader("connection") != "close"
        sock = conn.sock
        time.sleep(OLD_DEFAULT + 1.0)
        # with uvicorn's 5 s the server had closed the connection by now, and this raised
        # RemoteDisconnected (or ConnectionResetError): the request was lost
        conn.request("GET", "/healthz")
        second = conn.getresponse()
        second.read()
        assert second.status == 200
        assert conn.sock is sock  # the same connection, not a new one
    finally:
        conn.close()
