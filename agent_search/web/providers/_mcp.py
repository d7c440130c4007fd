"""A search tool on an MCP server (``web.provider = "mcp:<server>"``), through the
package's one MCP connection (:class:`~agent_search.mcp.MCPConnection`): a stdio
``command`` (spawned as a subprocess) or a streamable-HTTP ``url``.

The tool is called with ``{query, limit, sites, time_range}`` (``sites`` and
``time_range`` only when set). Its answer may be structured content or text holding
JSON ``{"items": [...]}`` (or ``results``), a JSON list of items, or plain text (one
item). Item fields understood: title/name, content/snippet/description/text,
url/link, score, published/date; other fields go to ``metadata``. A ``score`` is taken
to be on the project's 0..1 scale (~0.5 = probably relevant) and clamped to it; items
without one are scored by rank, as for every provider. Links go through the same
screening as every provider's (:func:`~agent_search.web._normalize.screen_url`).

By default (``keep_alive``) one connection — for stdio, one server process — is opened
on the first search and kept until :meth:`aclose`; a connection that fails is dropped
and the next search opens a new one. With ``keep_alive: false`` every search opens its
own. Used as an async context manager, the provider holds one connection for the block
in the caller's own task.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from agent_search.mcp.client import MCPConnection, MCPError, tool_value
from agent_search.types import ResultItem
from agent_search.web._normalize import (
    parse_date,
    provider_score,
    rank_score,
    screen_url,
    strip_html,
)
from agent_search.web.errors import ProviderError
from agent_search.web.providers._base import SearchParams, WebProvider

if TYPE_CHECKING:
    from typing_extensions import Self

    from agent_search.web.settings import MCPSearchServerSettings, WebSettings

_TITLE_KEYS = ("title", "name")
_CONTENT_KEYS = ("content", "snippet", "description", "text", "summary")
_URL_KEYS = ("url", "link", "href")
_DATE_KEYS = ("published", "published_date", "publishedDate", "date")
_KNOWN = {*_TITLE_KEYS, *_CONTENT_KEYS, *_URL_KEYS, *_DATE_KEYS, "score"}


class MCPProvider(WebProvider):
    """Calls ``config.tool`` on the MCP server ``server``. An API key (from
    ``api_key_env``, optional) is sent as a bearer token to HTTP servers."""

    name = "mcp"
    requires_key = False

    def __init__(self, *, server: str, config: MCPSearchServerSettings,
                 **kwargs: Any) -> None:
        self.name = f"mcp:{server}"
        self.server = server
        self.config = config
        super().__init__(**{**kwargs, "base_url": config.url})  # not web.base_url
        self.connection = MCPConnection(server, config, timeout=self.timeout,
                                        keep_alive=config.keep_alive,
                                        bearer_token=self.api_key)

    # -- the registry's questions --------------------------------------------------------

    @classmethod
    def accepts(cls, name: str) -> bool:
        return name.startswith("mcp:") and len(name) > 4

    @classmethod
    def spelling(cls) -> str:
        return "mcp:<server>"

    @classmethod
    def check_settings(cls, settings: WebSettings) -> None:
        server = settings.provider[4:]
        if server not in settings.mcp_servers:
            raise ValueError(f"provider {settings.provider!r} names no server in "
                             f"web.mcp_servers (known: "
                             f"{', '.join(sorted(settings.mcp_servers)) or 'none'})")

    @classmethod
    def endpoint_for(cls, settings: WebSettings) -> str:
        return settings.base_url or ""

    @classmethod
    def options_from(cls, settings: WebSettings) -> dict[str, Any]:
        server = settings.provider[4:]
        return {"server": server, "config": settings.mcp_servers[server]}

    # -- connection ----------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        """Keep one connection (one server process for stdio) open until the block ends."""
        await self.connection.__aenter__()
        return self

    async def aclose(self) -> None:
        await self.connection.aclose()

    async def _request(self, params: SearchParams, timeout: float) -> Any:
        args: dict[str, Any] = {"query": params.query, "limit": params.limit}
        if params.sites:
            args["sites"] = list(params.sites)
        if params.time_range:
            args["time_range"] = params.time_range
        try:
            return await self.connection.call_tool(self.config.tool, args, timeout)
        except MCPError as exc:
            raise ProviderError(self.name, exc.message, retryable=exc.retryable) from exc

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
        value = tool_value(raw)
        found = _items_of(value)
        if found is not None:
            return found
        return value if isinstance(value, str) else json.dumps(value)

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
