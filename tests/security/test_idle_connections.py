"""Idle connections must not refuse everyone: 1,100 TCP connections that sent nothing
made every other request fail (ReadError) until they closed — a connection that never
sent a request was never timed out, and the process kept the soft limit of 1,024 open
files. Now the soft limit is raised to the hard one at start, a connection without a
complete request head within ``server.header_timeout_seconds`` is closed, and one
client address holds at most ``server.max_connections_per_client`` connections.

Both of uvicorn's HTTP protocols are guarded: httptools (what ``serve`` takes when it is
installed) and h11 (its pure-Python fallback, taken where httptools is not installed).

The "attacker" connects from 127.0.0.2 (all of 127/8 is loopback on Linux), the other
client from 127.0.0.1: two addresses, as two machines would be."""

from __future__ import annotations

import contextlib
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from agent_search.cli.serve import uvicorn_options
from agent_search.server import Service, ServiceOptions, create_app
from agent_search.server._connections import (
    H11_PROTOCOL,
    HTTPTOOLS_PROTOCOL,
    raise_open_file_limit,
)
from agent_search.server.settings import ServerSettings

from ..support.http_service import ThreadedServer, write_project

ATTACKER = "127.0.0.2"


def _idle(port: int, count: int) -> list[socket.socket]:
    out = []
    for _ in range(count):
        s = socket.socket()
        s.bind((ATTACKER, 0))
        s.connect(("127.0.0.1", port))
        out.append(s)
    return out


def _closed_by_server(s: socket.socket, within: float) -> bool:
    """Whether the server closed ``s`` (EOF, or a reset) within ``within`` seconds."""
    s.settimeout(within)
    try:
        while s.recv(4096):
            pass  # a refusal's 503 comes first, then the end
        return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


PROTOCOLS = pytest.mark.parametrize("protocol", [HTTPTOOLS_PROTOCOL, H11_PROTOCOL],
                                    ids=["httptools", "h11"])


def _served(root: Path, server: dict[str, object],
            protocol: str) -> Iterator[tuple[str, int]]:
    cdir, adir = write_project(root, server=server)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENT_SEARCH_HOME", str(root / "home"))
        service = Service.load(ServiceOptions(config_dir=cdir, assistants_dir=adir,
                                              builtin_handlers=False))
    options = {**uvicorn_options(ServerSettings.load(cdir)), "http": protocol}
    running = ThreadedServer(create_app(service), **options).start()
    try:
        yield running.url, int(running.url.rsplit(":", 1)[1])
    finally:
        running.stop()


@pytest.fixture
def quick_timeout(tmp_path: Path, protocol: str) -> Iterator[tuple[str, int]]:
    yield from _served(tmp_path, {"header_timeout_seconds": 1.0}, protocol)


@pytest.fixture
def few_per_client(tmp_path: Path, protocol: str) -> Iterator[tuple[str, int]]:
    yield from _served(tmp_path, {"header_timeout_seconds": 60.0,
                                  "max_connections_per_client": 10}, protocol)


@PROTOCOLS
def test_a_connection_without_a_request_head_is_closed(
        quick_timeout: tuple[str, int]) -> None:
    url, port = quick_timeout
    silent = _idle(port, 20)
    slow = _idle(port, 1)[0]
    slow.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    try:
        for _ in range(4):  # a header byte every 0.4 s: never a complete head
            time.sleep(0.4)
            with contextlib.suppress(OSError):
                slow.sendall(b"X")
        assert all(_closed_by_server(s, 3.0) for s in silent)
        assert _closed_by_server(slow, 3.0)
        assert httpx.get(f"{url}/healthz", timeout=5).status_code == 200
    finally:
        for s in [*silent, slow]:
            s.close()


@PROTOCOLS
def test_a_kept_alive_connection_starting_a_request_has_a_head_deadline_too(
        quick_timeout: tuple[str, int]) -> None:
    """A first request answered, then a second one begun and never finished: closed."""
    _, port = quick_timeout
    s = _idle(port, 1)[0]
    try:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        s.settimeout(5)
        assert s.recv(4096).startswith(b"HTTP/1.1 200")
        s.sendall(b"GET /healthz HTTP/1.1\r\n")  # a head that never completes
        assert _closed_by_server(s, 3.0)
    finally:
        s.close()


def test_serve_guards_h11_where_httptools_is_not_installed() -> None:
    code = ("import sys\n"
            "sys.modules['httptools'] = None  # as if not installed\n"
            "from agent_search.server import _connections as c\n"
            "print(c.PROTOCOL)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout.split()
    assert out == [H11_PROTOCOL]


@PROTOCOLS
def test_one_address_holds_a_bounded_number_of_connections(
        few_per_client: tuple[str, int]) -> None:
    url, port = few_per_client
    held = _idle(port, 10)
    extra = _idle(port, 5)
    try:
        assert all(_closed_by_server(s, 3.0) for s in extra)
        assert not any(_closed_by_server(s, 0.2) for s in held)
        assert httpx.get(f"{url}/healthz", timeout=5).status_code == 200  # another address
    finally:
        for s in [*held, *extra]:
            s.close()


def test_the_soft_open_file_limit_is_raised_to_the_hard_one() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard <= 256:
        pytest.skip(f"the hard limit of open files here is {hard}")
    code = ("import resource\n"
            "from agent_search.server._connections import raise_open_file_limit\n"
            "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
            "resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))\n"
            "print(raise_open_file_limit(), resource.getrlimit(resource.RLIMIT_NOFILE)[0])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout.split()
    expected = hard if hard != resource.RLIM_INFINITY else 1 << 20
    assert out == [str(expected), str(expected)]
    assert raise_open_file_limit() >= soft


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _low_file_limit() -> None:  # in the server's process, before it starts
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (200, hard))


def test_idle_connections_past_the_soft_limit_do_not_refuse_others(tmp_path: Path) -> None:
    """``agent-search serve`` started with a soft limit of 200 open files; 300 silent
    connections from one address; another client is still answered."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 1000:
        pytest.skip(f"the hard limit of open files here is {hard}")
    cdir, adir = write_project(tmp_path, server={})
    (cdir / "agent.yml").write_text(yaml.safe_dump({"server": {}}))
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_search", "serve", "--port", str(port),
         "--config", str(cdir), "--assistants", str(adir)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=_low_file_limit,
        env={**__import__("os").environ, "AGENT_SEARCH_HOME": str(tmp_path / "home")})
    url = f"http://127.0.0.1:{port}"
    sockets: list[socket.socket] = []
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, "the server exited"
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)
        for _ in range(300):
            with contextlib.suppress(OSError):
                sockets += _idle(port, 1)
        time.sleep(0.3)
        for _ in range(5):
            assert httpx.get(f"{url}/healthz", timeout=5).status_code == 200
    finally:
        for s in sockets:
            s.close()
        proc.terminate()
        proc.wait(30)
