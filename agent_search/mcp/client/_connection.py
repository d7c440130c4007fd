"""Connections to MCP servers, on the official ``mcp`` SDK client.

One :class:`MCPConnection` per server serves every MCP client use of the package: the
``mcp:<server>`` web provider, ``uses.*`` delegation, ``mcp_resource`` data sources and
MCP rerankers (through :class:`MCPServers`, the servers ``config/agent.yml`` declares).

A connection opens its sessions one of three ways:

- per call (the default): spawn or connect, handshake, call, close. A few hundred
  milliseconds for a stdio server, but nothing is held between calls, so nothing can leak
  when a caller is cancelled;
- ``keep_alive``: one session (for stdio, one server process) opened on the first call
  and kept until :meth:`MCPConnection.aclose`, in a thread of its own (see
  :mod:`agent_search.mcp.client._kept`); a session that fails is dropped and the next
  call opens a new one;
- ``async with connection:``: one session for the block, in the caller's own task.

Every failure is an :class:`MCPError` with a one-line message ``mcp:<server>: reason``.
The SDK is imported on first use: it is heavy to import.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

import anyio

from agent_search.errors import RunError
from agent_search.mcp.client._kept import KeptSession
from agent_search.mcp.client.settings import MCPServerSettings

if TYPE_CHECKING:
    from mcp import Client
    from mcp.types import CallToolResult

T = TypeVar("T")

DEFAULT_TIMEOUT = 30.0
"""Seconds per call when neither the server's settings nor the caller say."""

_CONNECTION_CLOSED = -32000  # mcp.types.CONNECTION_CLOSED (JSON-RPC implementation range)


class MCPError(RunError):
    """An MCP call failed: unknown server, start-up, transport, tool error or timeout.

    ``retryable`` marks a timeout, or a kept session that went away: a new attempt may
    work. ``str()`` is ``mcp:<server>: <message>``."""

    def __init__(self, server: str, message: str, *, retryable: bool = False) -> None:
        self.server = server
        self.message = message
        self.retryable = retryable
        super().__init__(f"mcp:{server}: {message}")


class MCPConnection:
    """One MCP server, reached as ``settings`` say.

    ``timeout``: seconds per call when the settings give none (they cap it when they
    do); ``bearer_token`` is sent as ``Authorization`` to an HTTP server; ``base_dir`` is
    the working directory of a stdio server without ``cwd``; its stderr goes to
    ``log_dir/mcp-<server>.log``, or nowhere without ``log_dir`` (it must not mix with a
    command's output).
    """

    def __init__(self, server: str, settings: MCPServerSettings, *,
                 timeout: float = DEFAULT_TIMEOUT, keep_alive: bool = False,
                 bearer_token: str | None = None, base_dir: Path | None = None,
                 log_dir: Path | None = None) -> None:
        self.server = server
        self.settings = settings
        self.timeout = min(timeout, settings.timeout) if settings.timeout else timeout
        self.keep_alive = keep_alive
        self._bearer_token = bearer_token
        self._base_dir = base_dir
        self._log_dir = log_dir
        self._entered: Client | None = None
        self._entered_stack: contextlib.AsyncExitStack | None = None
        self._kept: KeptSession | None = None
        self._kept_lock = threading.Lock()
        self._open_lock = anyio.Lock()
        self._closed = False

    @property
    def name(self) -> str:
        return f"mcp:{self.server}"

    # -- calls ---------------------------------------------------------------------------

    async def call_tool(self, tool: str, arguments: dict[str, Any],
                        timeout: float | None = None) -> CallToolResult:
        """The SDK's result of one tool call; a result flagged ``is_error`` raises."""
        seconds = self._seconds(timeout)
        result: CallToolResult = await self._call(
            lambda client: client.call_tool(tool, arguments, read_timeout_seconds=seconds),
            seconds, f"tool {tool!r}")
        if result.is_error:
            text = _one_line(" ".join(getattr(c, "text", "") for c in result.content), 160)
            raise MCPError(self.server, f"tool {tool!r} failed: {text or 'no message'}")
        return result

    async def read_resource(self, uri: str,
                            timeout: float | None = None) -> list[tuple[str, str]]:
        """``(uri, text)`` of each text content of the resource."""
        seconds = self._seconds(timeout)
        result = await self._call(lambda client: client.read_resource(uri), seconds,
                                  f"resource {uri!r}")
        return [(str(c.uri), c.text) for c in result.contents if hasattr(c, "text")]

    def _seconds(self, timeout: float | None) -> float:
        return min(timeout, self.timeout) if timeout else self.timeout

    async def _call(self, call: Callable[[Client], Awaitable[T]], seconds: float,
                    subject: str) -> T:
        """``call`` on a session, within ``seconds``; every failure an :class:`MCPError`."""
        try:
            with anyio.fail_after(seconds):
                if self._entered is not None:
                    return await call(self._entered)
                if self.keep_alive:
                    return await self._call_kept(call)
                async with self._session() as client:
                    return await call(client)
        except MCPError:
            raise
        except Exception as exc:
            raise self._failure(_leaf(exc), seconds, subject) from exc

    def _failure(self, leaf: BaseException, seconds: float, subject: str) -> MCPError:
        from mcp import MCPError as SDKError

        if isinstance(leaf, TimeoutError):
            return MCPError(self.server, f"timed out after {seconds:.3g}s", retryable=True)
        if isinstance(leaf, SDKError) and leaf.error.code != _CONNECTION_CLOSED:
            return MCPError(self.server, f"{subject}: {leaf.error.message}")  # the server said no
        if isinstance(leaf, SDKError):  # the session went away: a new one may work
            return MCPError(self.server, f"MCP connection lost ({leaf.error.message})",
                            retryable=self.keep_alive)
        detail = _one_line(str(leaf), 160)
        return MCPError(self.server, f"cannot reach the MCP server ({type(leaf).__name__}"
                                     f"{': ' + detail if detail else ''})")

    # -- sessions ------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _session(self) -> AsyncIterator[Client]:
        """A new entered SDK client, and everything it holds, closed on exit."""
        from mcp import Client

        async with contextlib.AsyncExitStack() as stack:
            if self.settings.command is not None:
                transport: Any = self._stdio_transport(stack)
            else:
                import httpx2
                from mcp.client.streamable_http import streamable_http_client

                headers = dict(self.settings.headers)
                if self._bearer_token:
                    headers["Authorization"] = f"Bearer {self._bearer_token}"
                http = await stack.enter_async_context(
                    httpx2.AsyncClient(headers=headers, timeout=self.timeout))
                transport = streamable_http_client(self.settings.url or "", http_client=http)
            yield await stack.enter_async_context(
                Client(transport, cache=None, read_timeout_seconds=self.timeout))

    def _stdio_transport(self, stack: contextlib.AsyncExitStack) -> Any:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        cwd = self.settings.cwd or (str(self._base_dir) if self._base_dir else None)
        params = StdioServerParameters(command=self.settings.command or "",
                                       args=self.settings.args,
                                       env=self.settings.env or None, cwd=cwd)
        return stdio_client(params, errlog=stack.enter_context(self._errlog()))

    def _errlog(self) -> TextIO:
        if self._log_dir is None:
            return open(os.devnull, "w")
        self._log_dir.mkdir(parents=True, exist_ok=True)
        return open(self._log_dir / f"mcp-{self.server}.log", "a", encoding="utf-8")

    async def __aenter__(self) -> MCPConnection:
        """Hold one session (one server process for stdio) until the block ends."""
        if self._entered_stack is None:
            stack = contextlib.AsyncExitStack()
            try:
                self._entered = await stack.enter_async_context(self._session())
            except BaseException:
                await stack.aclose()
                raise
            self._entered_stack = stack
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the held and the kept session; a later call opens a new session only
        when the connection is used per call."""
        stack, self._entered_stack, self._entered = self._entered_stack, None, None
        if stack is not None:
            await stack.aclose()
        with self._kept_lock:
            self._closed = True
            kept, self._kept = self._kept, None
        if kept is not None:
            await anyio.to_thread.run_sync(kept.close)

    # -- the kept session ----------------------------------------------------------------

    async def _call_kept(self, call: Callable[[Client], Awaitable[T]]) -> T:
        kept = await self._kept_session()
        try:
            return await anyio.to_thread.run_sync(kept.run, call, abandon_on_cancel=True)
        except Exception as exc:
            if not _is_application_error(_leaf(exc)):  # the session is suspect: renew it
                await self._drop_kept(kept)
            raise

    async def _kept_session(self) -> KeptSession:
        if self._kept is not None:
            return self._kept
        async with self._open_lock:
            if self._kept is not None:
                return self._kept
            return await anyio.to_thread.run_sync(self._open_kept, abandon_on_cancel=True)

    def _open_kept(self) -> KeptSession:
        """Runs in a worker thread; the session is stored even if the call that asked
        for it has given up waiting, so the next call can use it."""
        kept = KeptSession(self._session, name=f"agent-search {self.name}")
        with self._kept_lock:
            if self._closed or self._kept is not None:
                existing = self._kept
                kept.close()
                if existing is None:
                    raise MCPError(self.server, "connection closed")
                return existing
            self._kept = kept
        return kept

    async def _drop_kept(self, kept: KeptSession) -> None:
        with self._kept_lock:
            if self._kept is not kept:
                return
            self._kept = None
        await anyio.to_thread.run_sync(kept.close, abandon_on_cancel=True)


class MCPServers:
    """The MCP servers ``config/agent.yml`` declares (``mcp.servers``), by id. Every call
    opens its own session: delegated calls are rare (one per stream at most per use),
    and a stream that is cancelled leaves no process or connection behind."""

    def __init__(self, servers: Mapping[str, MCPServerSettings], *,
                 base_dir: Path | None = None, log_dir: Path | None = None) -> None:
        self.servers = dict(servers)
        self._connections = {
            name: MCPConnection(name, settings, base_dir=base_dir, log_dir=log_dir)
            for name, settings in self.servers.items()}

    def connection(self, server: str) -> MCPConnection:
        found = self._connections.get(server)
        if found is None:
            known = ", ".join(sorted(self.servers)) or "none"
            raise MCPError(server, f"MCP server {server!r} is not declared in "
                                   f"config/agent.yml (declared: {known})")
        return found

    async def call_tool(self, server: str, tool: str, arguments: dict[str, Any],
                        timeout: float | None = None) -> Any:
        """The tool's answer as :func:`tool_value` reads it."""
        result = await self.connection(server).call_tool(tool, arguments, timeout)
        return tool_value(result)

    async def read_resource(self, server: str, uri: str,
                            timeout: float | None = None) -> list[tuple[str, str]]:
        return await self.connection(server).read_resource(uri, timeout)


def tool_value(result: Any) -> Any:
    """What a tool answered: its structured content (unwrapped from the ``{"result":
    ...}`` the SDK puts around a non-object return value), else its text blocks; text
    that holds a JSON object or list is decoded."""
    data = getattr(result, "structured_content", None)
    if isinstance(data, dict) and set(data) == {"result"}:
        data = data["result"]
    if data is not None and not isinstance(data, str):
        return data
    text = data if isinstance(data, str) else "\n\n".join(
        c.text for c in getattr(result, "content", []) if getattr(c, "type", "") == "text")
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        with contextlib.suppress(ValueError):
            return json.loads(stripped)
    return stripped


def _one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line (runs of white space folded), at most ``limit`` characters."""
    folded = " ".join(text.split())
    return folded if len(folded) <= limit else folded[: limit - 1] + "…"


def _is_application_error(exc: BaseException) -> bool:
    """An error the server sent about the request (unknown tool, bad arguments) rather
    than a failure of the connection itself."""
    from mcp import MCPError as SDKError

    return isinstance(exc, SDKError) and exc.error.code != _CONNECTION_CLOSED


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups from the SDK's task groups."""
    inner = getattr(exc, "exceptions", None)
    while isinstance(inner, tuple | list) and inner and isinstance(inner[0], BaseException):
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    return exc
