"""SearXNG (self-hosted metasearch): ``GET /search?format=json``. No key is needed;
one set in ``api_key_env`` is sent as a bearer token (for instances behind a proxy)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from agent_search.types import ResultItem
from agent_search.web._normalize import rank_score, records_at, result_metadata, web_item
from agent_search.web.providers._base import (
    HttpProvider,
    ProviderSettings,
    SearchParams,
    site_operators,
)
from agent_search.web.providers._native import NativeFormat, NativeRecord, count_at

_TOTAL = count_at("number_of_results")
class SearXNGResult(NativeRecord):
    """One ``results`` entry of a SearXNG instance's JSON API."""

    title: str | None = None
    url: str | None = None
    content: str | None = None
    engine: str | None = None
    score: float | None = None
    published_date: str | None = Field(default=None, alias="publishedDate")


_NATIVE = NativeFormat(("results",), SearXNGResult, "url",
                       lambda raw: _TOTAL(raw) or None)  # SearXNG says 0 when it does not know


class SearXNGSettings(ProviderSettings):
    """``web.searxng``: the instance's search language."""

    language: str | None = None


class SearXNGProvider(HttpProvider):
    """Sites as ``site:`` operators, ``time_range`` passed through (SearXNG uses the same
    day/week/month/year words). SearXNG's scores are unbounded sums over engines, only
    meaningful within one answer, so items are scored by rank (SearXNG sorts by its
    score), like every provider without a calibrated score."""

    name = "searxng"
    requires_key = False
    default_key_env = None  # self-hosted; a key is optional (sent as a bearer token when set)
    default_base_url = None  # no public default: point it at your instance
    native = _NATIVE
    settings_model = SearXNGSettings

    def __init__(self, *, language: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.language = language

    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    async def _request(self, params: SearchParams, timeout: float) -> Any:
        query = {
            "q": site_operators(params.query, params.sites),
            "format": "json",
            "time_range": params.time_range,
            "language": self.language,
            "pageno": 1,
        }
        return await self._send("GET", "/search", params=query, timeout=timeout)

    def parse(self, raw: Any, params: SearchParams) -> list[ResultItem]:
        items: list[ResultItem] = []
        for i, r in enumerate(records_at(raw, *_NATIVE.path), start=1):
            meta = result_metadata(self.name, i, published=r.get("publishedDate"), record=r,
                                   fields=(("engines", "engines"), ("category", "category")))
            items.append(web_item(r.get("title"), r.get("content"), r.get("url"),
                                  rank_score(i), meta))
        return items
