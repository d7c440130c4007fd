"""The MCP provider against a real MCP server process (tests/web/mcp_search_server.py),
over stdio and over streamable HTTP."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_search import Request, SearchConfig, Searcher
from agent_search.web import ProviderError, WebSettings, create_handler, create_provider

pytestmark = pytest.mark.anyio

SERVER_SCRIPT = str(Path(__file__).with_name("mcp_search_server.py"))


def stdio_settings(tool: str = "search", **server: Any) -> WebSettings:
    spec = {"command": sys.executable, "args": [SERVER_SCRIPT, "stdio"], "tool": tool, **server}
    return WebSettings(provider="mcp:local", mcp_servers={"local": spec}, timeout=30)


async def test_stdio_search_through_the_handler() -> None:
    """One server process serves every search of the handler; a dead one is replaced."""
    settings = stdio_settings()
    config = SearchConfig().merged({"web": settings.model_dump()})
    searcher = Searcher(config)
    handler = create_handler(config)
    searcher.registry.register(handler)
    request = Request(type="web", query="What is the Semantic Kernel?", limit=2,
                      sites=["learn.microsoft.com"], time_range="week", timeout=30)
    try:
        result = await searcher.search(request)
        assert result.error is None, result.error
        assert len(result.items) == 2
        assert all("learn.microsoft.com" in (i.url or "") for i in result.items)
        first = result.items[0]
        assert first.title == "Semantic Kernel overview for .NET - .NET | Microsoft Learn"
        assert first.score == pytest.approx(0.94989765)
        assert first.metadata["provider"] == "mcp:local"
        assert first.metadata["published"] == "2024-06-24"
        pid = first.metadata["server_pid"]

        again = await searcher.search(request)
        assert again.items[0].metadata["server_pid"] == pid  # no new server process

        os.kill(pid, signal.SIGKILL)  # the lost connection is replaced within the search
        renewed = await searcher.search(request)
        assert renewed.error is None, renewed.error
        assert renewed.items[0].metadata["server_pid"] != pid
    finally:
        await handler.aclose()


async def test_keep_alive_off_starts_a_server_per_search() -> None:
    settings = stdio_settings(keep_alive=False)
    provider = create_provider(settings)
    first = await provider.search("q", limit=1)
    second = await provider.search("q", limit=1)
    assert first[0].metadata["server_pid"] != second[0].metadata["server_pid"]


async def test_tool_arguments_and_answer_shapes_on_one_connection() -> None:
    async with create_provider(stdio_settings()) as provider:
        raw = await provider.search_raw("semantic kernel", limit=3,
                                        sites=["devblogs.microsoft.com"], time_range="month")
        assert raw.structured_content["echo"] == {
            "query": "semantic kernel", "limit": 3, "sites": ["devblogs.microsoft.com"],
            "time_range": "month"}
        raw = await provider.search_raw("semantic kernel")
        assert raw.structured_content["echo"]["sites"] is None  # unset fields are not sent

        provider.config.tool = "search_text"  # type: ignore[attr-defined]
        [item] = await provider.search("semantic kernel")
        assert item.content == "Plain answer about semantic kernel: Semantic Kernel is an SDK."
        assert item.url is None and item.metadata["kind"] == "text"

        provider.config.tool = "search_list"  # type: ignore[attr-defined]
        items = await provider.search("x", limit=5)
        assert [(i.title, i.url, i.content) for i in items] == [
            ("A", "https://a.example/x", "a"), ("B", "https://b.example/y", "b")]
        assert items[0].score > items[1].score

        provider.config.tool = "broken"  # type: ignore[attr-defined]
        with pytest.raises(ProviderError, match=r"mcp:local: tool 'broken' failed"):
            await provider.search("x")

        provider.config.tool = "no_such_tool"  # type: ignore[attr-defined]
        with pytest.raises(ProviderError, match=r"mcp:local: tool 'no_such_tool'"):
            await provider.search("x")


async def test_unstartable_server_is_a_result_error() -> None:
    settings = WebSettings(provider="mcp:gone", timeout=5,
                           mcp_servers={"gone": {"command": "/nonexistent/mcp-server"}})
    config = SearchConfig().merged({"web": settings.model_dump()})
    searcher = Searcher(config)
    searcher.registry.register(create_handler(config))
    result = await searcher.search({"type": "web", "query": "x"})
    assert result.error is not None
    assert result.error.startswith("web: mcp:gone: cannot reach the MCP server")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_server() -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, SERVER_SCRIPT, "http", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the MCP test server did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


async def test_streamable_http_server(http_server: str) -> None:
    settings = WebSettings(provider="mcp:remote", timeout=30,
                           mcp_servers={"remote": {"url": http_server,
                                                   "headers": {"X-Team": "t1"}}})
    async with create_provider(settings) as provider:
        items = await provider.search("What is the Semantic Kernel?", limit=3)
        again = await provider.search("What is the Semantic Kernel?", limit=1)
    assert len(items) == 3 and len(again) == 1
    assert items[0].url == "https://learn.microsoft.com/en-us/dotnet/ai/semantic-kernel-dotnet-overview"
    # and through a kept-open connection, closed explicitly
    provider = create_provider(settings)
    try:
        assert len(await provider.search("q", limit=2)) == 2
        assert len(await provider.search("q", limit=1)) == 1
    finally:
        await provider.aclose()


def test_mcp_settings_need_one_transport() -> None:
    from agent_search.errors import ConfigError

    with pytest.raises(ConfigError,
                       match=r"web\.mcp_servers\.x.*exactly one of 'command' \(stdio\) or 'url'"):
        WebSettings.from_section({"provider": "mcp:x", "mcp_servers": {"x": {"tool": "s"}}})


async def test_http_sessions_close_their_http_client(
        http_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each session's HTTP connection pool is closed with the session (one was left open
    per search with ``keep_alive: false``, and per provider otherwise)."""
    import httpx2

    opened: list[httpx2.AsyncClient] = []
    original_init = httpx2.AsyncClient.__init__

    def recording_init(self: httpx2.AsyncClient, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        opened.append(self)

    monkeypatch.setattr(httpx2.AsyncClient, "__init__", recording_init)
    settings = WebSettings(provider="mcp:remote", timeout=30, mcp_servers={
        "remote": {"url": http_server, "keep_alive": False}})
    provider = create_provider(settings)
    assert len(await provider.search("q", limit=1)) == 1
    assert len(await provider.search("q", limit=1)) == 1
    assert len(opened) == 2 and all(client.is_closed for client in opened)
    async with create_provider(settings) as held:
        await held.search("q", limit=1)
    assert len(opened) == 3 and opened[-1].is_closed
