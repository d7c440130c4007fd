"""SerpAPI: ``GET /search.json?engine=google``; the key is the ``api_key`` parameter
(SerpAPI accepts it nowhere else), so every error and log text is redacted of it."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from agent_search.types import ResultItem
from agent_search.web._normalize import (
    protect_secret_in_logs,
)
from agent_search.web.errors import ProviderError
from agent_search.web.providers._base import (
    HttpProvider,
    LocaleSettings,
    SearchParams,
    site_operators,
)
from agent_search.web.providers._native import NativeFormat, NativeRecord, count_at
from agent_search.web.providers._serper import GOOGLE_TBS, google_results


class SerpAPIResult(NativeRecord):
    """One ``organic_results`` entry of SerpAPI."""

    title: str | None = None
    link: str | None = None
    snippet: str | None = None
    position: int | None = None
    displayed_link: str | None = None
    date: str | None = None


_NATIVE = NativeFormat(("organic_results",), SerpAPIResult, "link",
                       count_at("search_information", "total_results"))


class SerpAPISettings(LocaleSettings):
    """``web.serpapi``: the engine SerpAPI asks, market, answer box as first item."""

    engine: str = Field(default="google", description="SerpAPI engine")
    include_answer: bool = Field(default=True, description="the answer box as first item")


class SerpAPIProvider(HttpProvider):
    """Sites as ``site:`` operators, ``time_range`` → ``tbs=qdr:*``; the answer box
    (when present) is the first item."""

    name = "serpapi"
    default_key_env = "SERPAPI_API_KEY"
    default_base_url = "https://serpapi.com"
    native = _NATIVE
    settings_model = SerpAPISettings

    def __init__(self, *, engine: str = "google", country: str | None = None,
                 language: str | None = None, include_answer: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.engine = engine
        self.country = country
        self.language = language
        self.include_answer = include_answer
        protect_secret_in_logs(self.api_key)

    async def _request(self, params: SearchParams, timeout: float) -> Any:
        query = {
            "engine": self.engine,
            "q": site_operators(params.query, params.sites),
            "num": min(params.limit, 100),
            "tbs": GOOGLE_TBS.get(params.time_range or ""),
            "gl": self.country,
            "hl": self.language,
            "api_key": self.api_key,
        }
        raw = await self._send("GET", "/search.json", params=query, timeout=timeout)
        if isinstance(raw, dict) and raw.get("error") and not raw.get("organic_results"):
            # SerpAPI reports some failures (and "no results") in a 200 body
            message = str(raw["error"])
            if "hasn't returned any results" in message:
                return raw
            raise ProviderError(self.name, message)
        return raw

    def parse(self, raw: Any, params: SearchParams) -> list[ResultItem]:
        return google_results(self.name, raw, params, box_key="answer_box",
                              answer_keys=("answer", "snippet", "result"), native=_NATIVE,
                              include_answer=self.include_answer,
                              fields=(("date", "date_text"), ("source", "site_name"),
                                      ("displayed_link", "display_link")))
