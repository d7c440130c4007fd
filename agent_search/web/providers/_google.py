"""Google Programmable Search (Custom Search JSON API): ``GET /customsearch/v1``.

The key travels in the ``X-Goog-Api-Key`` header (accepted by every Google API) rather
than the ``key`` query parameter, so it never appears in a URL, a proxy log or httpx's
request log line.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from pydantic import Field

from agent_search.types import ResultItem
from agent_search.web._normalize import (
    as_position,
    mapping,
    parse_date,
    rank_score,
    records_at,
    result_metadata,
    web_item,
)
from agent_search.web.errors import ProviderError
from agent_search.web.providers._base import (
    HttpProvider,
    LocaleSettings,
    SearchParams,
    site_operators,
)
from agent_search.web.providers._native import NativeFormat, NativeRecord, count_at

if TYPE_CHECKING:
    from agent_search.web.settings import WebSettings


class GoogleWebPage(NativeRecord):
    """One ``items`` entry of the Google Custom Search JSON API."""

    kind: str | None = None
    title: str | None = None
    link: str | None = None
    display_link: str | None = Field(default=None, alias="displayLink")
    snippet: str | None = None
    html_title: str | None = Field(default=None, alias="htmlTitle")
    html_snippet: str | None = Field(default=None, alias="htmlSnippet")
    formatted_url: str | None = Field(default=None, alias="formattedUrl")
    pagemap: dict[str, Any] | None = None


_NATIVE = NativeFormat(("items",), GoogleWebPage, "link",
                       count_at("searchInformation", "totalResults"))

_DATE_RESTRICT: dict[str, str] = {"day": "d1", "week": "w1", "month": "m1", "year": "y1"}
_DATE_META_KEYS = ("article:published_time", "og:updated_time", "date", "dc.date")


class GoogleSettings(LocaleSettings):
    """``web.google``: the Programmable Search engine id, or the variable holding it."""

    cx: str | None = Field(default=None, description="Google Programmable Search engine id")
    cx_env: str = Field(default="GOOGLE_CSE_ID", description="variable holding the engine id")


class GoogleProvider(HttpProvider):
    """One site → ``siteSearch``; several → ``site:`` operators; ``time_range`` →
    ``dateRestrict``; at most 10 results per call (the API's cap)."""

    name = "google"
    default_key_env = "GOOGLE_API_KEY"
    default_base_url = "https://www.googleapis.com"
    native = _NATIVE
    settings_model = GoogleSettings

    @classmethod
    def options_from(cls, settings: WebSettings) -> dict[str, Any]:
        """The engine id from ``web.google.cx``, else from the variable
        ``web.google.cx_env`` names."""
        options = super().options_from(settings)
        cx_env = options.pop("cx_env")
        return {**options, "cx": options["cx"] or os.environ.get(cx_env)}

    def __init__(self, *, cx: str | None = None, country: str | None = None,
                 language: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not cx:
            raise ProviderError(self.name, "search engine id not configured "
                                           "(set web.google.cx or GOOGLE_CSE_ID)")
        self.cx = cx
        self.country = country
        self.language = language

    def auth_headers(self) -> dict[str, str]:
        return {"X-Goog-Api-Key": self.api_key or ""}

    async def _request(self, params: SearchParams, timeout: float) -> Any:
        one_site = len(params.sites) == 1
        query = {
            "cx": self.cx,
            "q": params.query if one_site else site_operators(params.query, params.sites),
            "num": min(params.limit, 10),
            "siteSearch": params.sites[0] if one_site else None,
            "siteSearchFilter": "i" if one_site else None,
            "dateRestrict": _DATE_RESTRICT.get(params.time_range or ""),
            "gl": self.country,
            "lr": f"lang_{self.language}" if self.language else None,
        }
        return await self._send("GET", "/customsearch/v1", params=query, timeout=timeout)

    def parse(self, raw: Any, params: SearchParams) -> list[ResultItem]:
        items: list[ResultItem] = []
        request_info = records_at(raw, "queries", "request")
        start = as_position(request_info[0].get("startIndex"), 1) if request_info else 1
        for i, r in enumerate(records_at(raw, *_NATIVE.path), start=start):
            meta = result_metadata(self.name, i, record=r,
                                   fields=(("displayLink", "display_link"),))
            metatags = records_at(r, "pagemap", "metatags")
            first_tags = metatags[0] if metatags else mapping(None)
            for key in _DATE_META_KEYS:
                published = parse_date(first_tags.get(key))
                if published:
                    meta["published"] = published
                    break
            items.append(web_item(r.get("title"), r.get("snippet"), r.get("link"),
                                  rank_score(i), meta))
        return items
