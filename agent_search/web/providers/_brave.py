"""Brave Search API: ``GET /res/v1/web/search`` with ``X-Subscription-Token``."""

from __future__ import annotations

from typing import Any

from agent_search.types import ResultItem
from agent_search.web._normalize import (
    rank_score,
    records_at,
    result_metadata,
    strip_html,
    web_item,
)
from agent_search.web.providers._base import (
    HttpProvider,
    LocaleSettings,
    SearchParams,
    site_operators,
)
from agent_search.web.providers._native import NativeFormat, NativeRecord


class BraveWebResult(NativeRecord):
    """One ``web.results`` entry of the Brave Search API."""

    title: str | None = None
    url: str | None = None
    description: str | None = None
    age: str | None = None
    page_age: str | None = None
    language: str | None = None
    profile: dict[str, Any] | None = None
    extra_snippets: list[str] | None = None


_NATIVE = NativeFormat(("web", "results"), BraveWebResult, "url")

_FRESHNESS: dict[str, str] = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}


class BraveProvider(HttpProvider):
    """Sites as ``site:`` operators, ``time_range`` → ``freshness=pd/pw/pm/py``; at most
    20 results per call (the API's cap)."""

    name = "brave"
    default_key_env = "BRAVE_API_KEY"
    default_base_url = "https://api.search.brave.com"
    native = _NATIVE
    settings_model = LocaleSettings

    def __init__(self, *, country: str | None = None, language: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.country = country
        self.language = language

    def auth_headers(self) -> dict[str, str]:
        return {"X-Subscription-Token": self.api_key or "", "Accept": "application/json"}

    async def _request(self, params: SearchParams, timeout: float) -> Any:
        query = {
            "q": site_operators(params.query, params.sites),
            "count": min(params.limit, 20),
            "freshness": _FRESHNESS.get(params.time_range or ""),
            "country": self.country,
            "search_lang": self.language,
        }
        return await self._send("GET", "/res/v1/web/search", params=query, timeout=timeout)

    def parse(self, raw: Any, params: SearchParams) -> list[ResultItem]:
        items: list[ResultItem] = []
        for i, r in enumerate(records_at(raw, *_NATIVE.path), start=1):
            meta = result_metadata(self.name, i, published=r.get("page_age"), record=r,
                                   fields=(("age", "date_text"), ("language", "language")))
            profile = r.get("profile")
            if isinstance(profile, dict) and profile.get("name"):
                meta["site_name"] = profile["name"]
            extra = r.get("extra_snippets")
            if isinstance(extra, list) and extra:
                meta["extra_snippets"] = [strip_html(s) for s in extra]
            items.append(web_item(r.get("title"), r.get("description"), r.get("url"),
                                  rank_score(i), meta))
        return items
