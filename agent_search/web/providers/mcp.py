"""A search tool on an MCP server (``web.provider = "mcp:<server>"``), through the
official ``mcp`` SDK client: a stdio ``command`` (spawned as a subprocess) or a
streamable-HTTP ``url``.

The tool is called with ``{query, limit, sites, time_range}`` (``sites`` and
``time_range`` only when set). Its answer may be structured content or text holding
JSON ``{"items": [...]}`` (or ``results``), a JSON list of items, or plain text (one
item). Item fields understood: title/name, content/snippet/description/text,
url/link, score, published/date; other fields go to ``metadata``. A ``score`` is taken
to be on the project's 0..1 scale (~0.5 = probably relevant) and clamped to it; items
without one are scored by rank, as for every provider. Links go through the same
screening as every provider's (:func:`~agent_search.web.normalize.screen_url`).

By default (``keep_alive``) one connection — for stdio, one server process — is opened
on the first search and kept until :meth:`aclose`; a connection that fails is dropped
and the next search opens a new one. With ``keep_alive: false`` every search opens its
own. Used as an async context manager, the provider holds one connection for the block
in the caller's own task.
"""

from __future__ import annotations

import json
import os
import threading
from contextlib import AsyncExitStack
from typing import Any, TextIO

import anyio

from agent_search.types import ResultItem
from agent_search.web.errors import ProviderError
from agent_search.web.normalize import (
    one_line,
    parse_date,
    provider_score,
    rank_score,
    screen_url,
    strip_html,
)
from agent_search.web.providers.base import SearchParams, WebProvider
from agent_search.web.providers.mcp_connection import KeptConnection
from agent_search.web.settings import MCPServerSettings

_TITLE_KEYS = ("title", "name")
_CONTENT_KEYS = ("content", "snippet", "description", "text", "summary")
_URL_KEYS = ("url", "link", "href")
_DATE_KEYS = ("published", "published_date", "publishedDate", "date")
_KNOWN = {*_TITLE_KEYS, *_CONTENT_KEYS, *_URL_KEYS, *_DATE_KEYS, "score"}


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (possibly nested) exception groups."""
    inner = getattr(exc, "exceptions", None)  # BaseExceptionGroup (3.11+ or backport)
    while isinstance(inner, tuple | list) and inner and isinstance(inner[0], BaseException):
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    return exc


class MCPProvider(WebProvider):
    """Calls ``config.tool`` on the MCP server ``server``. An API key (from
    ``api_key_env``, optional) is sent as a bearer token to HTTP servers."""

    requires_key = False

    def __init__(self, *, server: str, config: MCPServerSettings, **kwargs: Any) -> None:
        self.name = f"mcp:{server}"
        self.server = server
        self.config = config
        super().__init__(**kwargs)
        self._stack: AsyncExitStack | None = None
        self._client: Any = None
        self._kept: KeptConnection | None = None
        self._kept_lock = threading.Lock()
        self._open_lock = anyio.Lock()
        self._closed = False

    def default_base_url(self) -> str | None:
        return self.config.url

    # -- connection ----------------------------------------------------------------------

    def _new_client(self) -> tuple[Any, TextIO | None]:
        """A fresh SDK client, and the file the server's stderr goes to (stdio only)."""
        from mcp import Client

        errlog: TextIO | None = None
        if self.config.command is not None:
            from mcp.client.stdio import (
                StdioServerParameters,
                get_default_environment,
                stdio_client,
            )

            env = {**get_default_environment(), **(self.config.env or {})}
            params = StdioServerParameters(command=self.config.command, args=self.config.args,
                                           env=env, cwd=self.config.cwd)
            errlog = open(os.devnull, "w")  # noqa: SIM115 - closed with the connection
            transport: Any = stdio_client(params, errlog=errlog)
        else:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            headers = dict(self.config.headers)
            if self.api_key:
                headers["Authorization"] = f"Bearer {self.api_key}"
            http = httpx2.AsyncClient(headers=headers, timeout=self.timeout)
            transport = streamable_http_client(self.config.url or "", http_client=http)
        return Client(transport, cache=None, read_timeout_seconds=self.timeout), errlog

    async def __aenter__(self) -> MCPProvider:
        """Keep one connection (one server process for stdio) open until the block ends."""
        if self._stack is None:
            stack = AsyncExitStack()
            client, errlog = self._new_client()
            if errlog is not None:
                stack.callback(errlog.close)
            try:
                self._client = await stack.enter_async_context(client)
            except BaseException:
                await stack.aclose()
                raise
            self._stack = stack
        return self

    async def aclose(self) -> None:
        stack, self._stack, self._client = self._stack, None, None
        if stack is not None:
            await stack.aclose()
        with self._kept_lock:
            self._closed = True
            kept, self._kept = self._kept, None
        if kept is not None:
            await anyio.to_thread.run_sync(kept.close)

    # -- the kept-open connection (web handler) ------------------------------------------

    def _open_kept(self) -> KeptConnection:
        """Runs in a worker thread; the connection is stored even if the search that
        asked for it has given up waiting, so the next search can use it."""
        errlogs: list[TextIO] = []

        def make() -> Any:
            client, errlog = self._new_client()
            if errlog is not None:
                errlogs.append(errlog)
            return client

        def close_errlogs() -> None:
            for f in errlogs:
                f.close()

        conn = KeptConnection(make, name=f"agent-search {self.name}", on_close=close_errlogs)
        with self._kept_lock:
            if self._closed or self._kept is not None:
                existing = self._kept
                conn.close()
                if existing is None:
                    raise ProviderError(self.name, "provider closed")
                return existing
            self._kept = conn
        return conn

    async def _kept_connection(self) -> KeptConnection:
        if self._kept is not None:
            return self._kept
        async with self._open_lock:
            if self._kept is not None:
                return self._kept
            return await anyio.to_thread.run_sync(self._open_kept, abandon_on_cancel=True)

    async def _drop_kept(self, conn: KeptConnection) -> None:
        with self._kept_lock:
            if self._kept is conn:
                self._kept = None
            else:
                return
        await anyio.to_thread.run_sync(conn.close, abandon_on_cancel=True)

    async def _call_kept(self, tool: str, args: dict[str, Any], timeout: float) -> Any:
        conn = await self._kept_connection()
        try:
            return await anyio.to_thread.run_sync(conn.call_tool, tool, args, timeout,
                                                  abandon_on_cancel=True)
        except Exception as exc:
            if not _is_application_error(_leaf(exc)):  # the connection is suspect: renew it
                await self._drop_kept(conn)
            raise

    # -- one call ------------------------------------------------------------------------

    async def _request(self, params: SearchParams, timeout: float) -> Any:
        args: dict[str, Any] = {"query": params.query, "limit": params.limit}
        if params.sites:
            args["sites"] = list(params.sites)
        if params.time_range:
            args["time_range"] = params.time_range
        tool = self.config.tool
        try:
            with anyio.fail_after(timeout):
                if self._client is not None:
                    result = await self._client.call_tool(tool, args, read_timeout_seconds=timeout)
                elif self.config.keep_alive:
                    result = await self._call_kept(tool, args, timeout)
                else:
                    client, errlog = self._new_client()
                    try:
                        async with client:
                            result = await client.call_tool(tool, args,
                                                            read_timeout_seconds=timeout)
                    finally:
                        if errlog is not None:
                            errlog.close()
        except TimeoutError:
            raise ProviderError(self.name, f"timed out after {timeout:.3g}s",
                                retryable=True) from None
        except Exception as exc:
            leaf = _leaf(exc)
            if isinstance(leaf, TimeoutError):
                raise ProviderError(self.name, f"timed out after {timeout:.3g}s",
                                    retryable=True) from None
            from mcp import MCPError

            if isinstance(leaf, MCPError) and _is_application_error(leaf):
                raise ProviderError(self.name, f"tool {tool!r}: {leaf.error.message}") from None
            if isinstance(leaf, MCPError):  # the connection went away: a new one may work
                raise ProviderError(self.name, f"MCP connection lost ({leaf.error.message})",
                                    retryable=self.config.keep_alive) from None
            detail = one_line(str(leaf), 160)
            raise ProviderError(self.name, f"cannot reach the MCP server ({type(leaf).__name__}"
                                           f"{': ' + detail if detail else ''})") from None
        if result.is_error:
            text = " ".join(getattr(c, "text", "") for c in result.content).strip()
            raise ProviderError(self.name, f"tool {tool!r} failed: {one_line(text, 160)}")
        return result

    # -- parsing -------------------------------------------------------------------------

    def parse(self, raw: Any, params: SearchParams) -> list[ResultItem]:
        payload = self._payload(raw)
        if isinstance(payload, str):
            text = payload.strip()
            return [ResultItem(type="web", title=None, content=text, score=rank_score(1),
                               metadata={"provider": self.name, "position": 1,
                                         "kind": "text"})] if text else []
        return [self._item(entry, i) for i, entry in enumerate(payload, start=1)]

    def _payload(self, raw: Any) -> list[Any] | str:
        """The list of item mappings in a tool result, or its text."""
        structured = getattr(raw, "structured_content", None)
        if isinstance(structured, dict):
            found = _items_of(structured)
            if found is not None:
                return found
            if set(structured) == {"result"}:  # a wrapped non-object return value
                return _items_of(structured["result"]) or _text_or_json(structured["result"])
        texts = [c.text for c in getattr(raw, "content", []) if getattr(c, "type", "") == "text"]
        joined = "\n\n".join(texts)
        return _text_or_json(joined)

    def _item(self, entry: Any, position: int) -> ResultItem:
        if not isinstance(entry, dict):
            return ResultItem(type="web", content=strip_html(str(entry)),
                              score=rank_score(position),
                              metadata={"provider": self.name, "position": position})
        meta: dict[str, Any] = {"provider": self.name, "position": position}
        meta.update({k: v for k, v in entry.items() if k not in _KNOWN and k != "metadata"})
        if isinstance(entry.get("metadata"), dict):
            meta.update(entry["metadata"])
        for key in _DATE_KEYS:
            published = parse_date(entry.get(key))
            if published:
                meta["published"] = published
                break
        return ResultItem(
            type="web", title=strip_html(_first(entry, _TITLE_KEYS)) or None,
            content=strip_html(_first(entry, _CONTENT_KEYS)),
            url=screen_url(_first(entry, _URL_KEYS), meta),
            score=provider_score(entry.get("score"), position), metadata=meta)


_CONNECTION_CLOSED = -32000  # mcp_types.CONNECTION_CLOSED (JSON-RPC implementation range)


def _is_application_error(exc: BaseException) -> bool:
    """An error the server sent about the request (unknown tool, bad arguments) rather
    than a failure of the connection itself."""
    from mcp import MCPError

    return isinstance(exc, MCPError) and exc.error.code != _CONNECTION_CLOSED


def _first(entry: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if entry.get(key):
            return entry[key]
    return None


def _items_of(value: Any) -> list[Any] | None:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        for key in ("items", "results", "organic", "data"):
            if isinstance(value.get(key), list):
                return list(value[key])
    return None


def _text_or_json(value: Any) -> list[Any] | str:
    if not isinstance(value, str):
        found = _items_of(value)
        return found if found is not None else json.dumps(value)
    stripped = value.strip()
    if stripped[:1] in ("{", "["):
        try:
            found = _items_of(json.loads(stripped))
        except ValueError:
            found = None
        if found is not None:
            return found
    return stripped
