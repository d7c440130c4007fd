"""Calling MCP servers declared in ``config/agent.yml`` with the official ``mcp`` SDK.

A session is opened per call (spawn or connect, handshake, call, close). That costs a few
hundred milliseconds for a stdio server but holds no process or connection between
requests, so nothing can leak when a stream is cancelled; delegated calls are rare
(one per stream at most per use).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

from agent_search.agent.settings import McpServerSettings


class McpError(Exception):
    """An MCP call failed: unknown server, start-up, transport, tool error or timeout."""


class McpClients:
    def __init__(self, servers: dict[str, McpServerSettings],
                 base_dir: Path | None = None) -> None:
        self.servers = servers
        self.base_dir = base_dir

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
        from mcp import Client

        target = self._target(server)
        seconds = self._timeout(server, timeout)
        try:
            with anyio.fail_after(seconds):
                async with Client(target) as client:
                    result = await client.call_tool(tool, arguments)
        except TimeoutError:
            raise McpError(f"mcp:{server}.{tool}: timed out after {seconds:g}s") from None
        except McpError:
            raise
        except Exception as exc:
            raise McpError(f"mcp:{server}.{tool}: {type(exc).__name__}: {_one_line(exc)}"
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
        from mcp import Client

        target = self._target(server)
        seconds = self._timeout(server, timeout)
        try:
            with anyio.fail_after(seconds):
                async with Client(target) as client:
                    result = await client.read_resource(uri)
        except TimeoutError:
            raise McpError(f"mcp:{server}: reading {uri} timed out after {seconds:g}s"
                           ) from None
        except Exception as exc:
            raise McpError(f"mcp:{server}: reading {uri}: {type(exc).__name__}: "
                           f"{_one_line(exc)}") from None
        return [(str(c.uri), c.text) for c in result.contents if hasattr(c, "text")]


def _one_line(value: object) -> str:
    lines = str(value).strip().splitlines()
    return lines[0][:300] if lines else ""
