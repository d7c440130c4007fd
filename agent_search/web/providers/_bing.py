"""Bing Web Search v7: ``GET /v7.0/search`` with ``Ocp-Apim-Subscription-Key``."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from pydantic import Field

from agent_search.types import ResultItem
from agent_search.web._normalize import rank_score, records_at, result_metadata, web_item
from agent_search.web.providers._base import (
    HttpProvider,
    LocaleSettings,
    SearchParams,
    site_operators,
)
from agent_search.web.providers._native import NativeFormat, NativeRecord, count_at


class BingWebPage(NativeRecord):
    """One ``webPages.value`` entry of Bing Web Search v7."""

    id: str | None = None
    name: str | None = None
    url: str | None = None
    display_url: str | None = Field(default=None, alias="displayUrl")
    snippet: str | None = None
    date_last_crawled: str | None = Field(default=None, alias="dateLastCrawled")
    date_published: str | None = Field(default=None, alias="datePublished")
    language: str | None = None
    is_family_friendly: bool | None = Field(default=None, alias="isFamilyFriendly")


_NATIVE = NativeFormat(("webPages", "value"), BingWebPage, "url",
                       count_at("webPages", "totalEstimatedMatches"))

_FRESHNESS: dict[str, str] = {"day": "Day", "week": "Week", "month": "Month"}


def _freshness(time_range: str | None) -> str | None:
    """Bing has Day/Week/Month; a year is a date range ``YYYY-MM-DD..YYYY-MM-DD``."""
    if time_range == "year":
        today = date.today()
        return f"{(today - timedelta(days=365)).isoformat()}..{today.isoformat()}"
    return _FRESHNESS.get(time_range or "")


class BingProvider(HttpProvider):
    """Sites as ``site:`` operators, ``time_range`` → ``freshness``; at most 50 per call."""

    name = "bing"
    default_key_env = "BING_API_KEY"
    default_base_url = "https://api.bing.microsoft.com"
    native = _NATIVE
    settings_model = LocaleSettings

    def __init__(self, *, country: str | None = None, language: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.market = f"{language}-{country.upper()}" if language and country else None

    def auth_headers(self) -> dict[str, str]:
        return {"Ocp-Apim-Subscription-Key": self.api_key or ""}

    async def _request(self, params: SearchParams, timeout: float) -> Any:
        query = {
            "q": site_operators(params.query, params.sites),
            "count": min(params.limit, 50),
            "freshness": _freshness(params.time_range),
            "responseFilter": "Webpages",
            "textDecorations": "false",
            "mkt": self.market,
        }
        return await self._send("GET", "/v7.0/search", params=query, timeout=timeout)

    def parse(self, raw: Any, params: SearchParams) -> list[ResultItem]:
        items: list[ResultItem] = []
        for i, r in enumerate(records_at(raw, *_NATIVE.path), start=1):
            meta = result_metadata(self.name, i, published=r.get("datePublished"), record=r,
                                   fields=(("siteName", "site_name"), ("language", "language"),
                                           ("dateLastCrawled", "last_crawled")))
            items.append(web_item(r.get("name"), r.get("snippet"), r.get("url"),
                                  rank_score(i), meta))
        return items
