"""Calling MCP servers declared in ``config/agent.yml`` with the official ``mcp`` SDK.

A session is opened per call (spawn or connect, handshake, call, close). That costs a few
hundred milliseconds for a stdio server but holds no process or connection between
requests, so nothing can leak when a stream is cancelled; delegated calls are rare
(one per stream at most per use).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TextIO

import anyio

from agent_search.agent.settings import McpServerSettings


class McpError(Exception):
    """An MCP call failed: unknown server, start-up, transport, tool error or timeout."""


class McpClients:
    """``log_dir``: where the stderr of stdio servers goes (``mcp-<server>.log``), so
    their logging does not mix with the command's output; None leaves it on stderr."""

    def __init__(self, servers: dict[str, McpServerSettings], base_dir: Path | None = None,
                 log_dir: Path | None = None) -> None:
        self.servers = servers
        self.base_dir = base_dir
        self.log_dir = log_dir

    @contextlib.asynccontextmanager
    async def _client(self, server: str) -> AsyncIterator[Any]:
        from mcp import Client
        from mcp.client.stdio import stdio_client

        target = self._target(server)
        if isinstance(target, str):
            async with Client(target) as client:
                yield client
            return
        with contextlib.ExitStack() as stack:
            errlog: TextIO = sys.stderr
            if self.log_dir is not None:
                self.log_dir.mkdir(parents=True, exist_ok=True)
                errlog = stack.enter_context(
                    open(self.log_dir / f"mcp-{server}.log", "a", encoding="utf-8"))
            async with Client(stdio_client(target, errlog=errlog)) as client:
                yield client

    def _target(self, server: str) -> Any:
        from mcp import StdioServerParameters

        settings = self.servers.get(server)
        if settings is None:
            known = ", ".join(sorted(self.servers)) or "none"
            raise McpError(f"MCP server {server!r} is not declared in config/agent.yml "
                           f"(declared: {known})")
        if settings.url:
            return settings.url
        cwd = settings.cwd or (str(self.base_dir) if self.base_dir else None)
        return StdioServerParameters(command=settings.command or "", args=settings.args,
                                     env=settings.env or None, cwd=cwd)

    def _timeout(self, server: str, timeout: float | None) -> float:
        settings = self.servers.get(server)
        default = settings.timeout if settings else 30.0
        return min(timeout, default) if timeout else default

    async def call_tool(self, server: str, tool: str, arguments: dict[str, Any],
                        timeout: float | None = None) -> Any:
        """The tool's result: its structured content, else the JSON in its text, else
        the text."""
        seconds = self._timeout(server, timeout)
        try:
            with anyio.fail_after(seconds):
                async with self._client(server) as client:
                    result = await client.call_tool(tool, arguments)
        except TimeoutError:
            raise McpError(f"mcp:{server}.{tool}: timed out after {seconds:g}s") from None
        except McpError:
            raise
        except Exception as exc:
            leaf = _leaf(exc)
            raise McpError(f"mcp:{server}.{tool}: {type(leaf).__name__}: {_one_line(leaf)}"
                           ) from None
        text = "\n".join(getattr(c, "text", "") for c in result.content
                         if getattr(c, "type", "") == "text")
        if result.is_error:
            raise McpError(f"mcp:{server}.{tool}: tool error: {_one_line(text) or 'no message'}")
        if result.structured_content is not None:
            data = result.structured_content
            # servers wrap non-object returns as {"result": ...}
            if isinstance(data, dict) and set(data) == {"result"}:
                return data["result"]
            return data
        try:
            return json.loads(text)
        except ValueError:
            return text

    async def read_resource(self, server: str, uri: str,
                            timeout: float | None = None) -> list[tuple[str, str]]:
        """``(uri, text)`` of each text content of the resource."""
        seconds = self._timeout(server, timeout)
        try:
            with anyio.fail_after(seconds):
                async with self._client(server) as client:
                    result = await client.read_resource(uri)
        except TimeoutError:
            raise McpError(f"mcp:{server}: reading {uri} timed out after {seconds:g}s"
                           ) from None
        except McpError:
            raise
        except Exception as exc:
            leaf = _leaf(exc)
            raise McpError(f"mcp:{server}: reading {uri}: {type(leaf).__name__}: "
                           f"{_one_line(leaf)}") from None
        return [(str(c.uri), c.text) for c in result.contents if hasattr(c, "text")]


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups from the SDK's task groups."""
    inner = getattr(exc, "exceptions", None)
    while isinstance(inner, tuple | list) and inner:
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    return exc


def _one_line(value: object) -> str:
    lines = str(value).strip().splitlines()
    return lines[0][:300] if lines else ""
