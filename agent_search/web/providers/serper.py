"""Serper (serper.dev, Google results): ``POST /search`` with ``X-API-KEY``."""

from __future__ import annotations

from typing import Any

from agent_search.types import ResultItem
from agent_search.web.normalize import (
    answer_item,
    as_position,
    mapping,
    rank_score,
    records_at,
    result_metadata,
    web_item,
)
from agent_search.web.providers.base import HttpProvider, SearchParams, site_operators
from agent_search.web.providers.native import NativeFormat, NativeRecord

GOOGLE_TBS: dict[str, str] = {"day": "qdr:d", "week": "qdr:w", "month": "qdr:m", "year": "qdr:y"}
"""Google's ``tbs`` time filters, shared by Serper and SerpAPI."""


class SerperResult(NativeRecord):
    """One ``organic`` entry of Serper.dev."""

    title: str | None = None
    link: str | None = None
    snippet: str | None = None
    position: int | None = None
    date: str | None = None


_NATIVE = NativeFormat(("organic",), SerperResult, "link")


class SerperProvider(HttpProvider):
    """Sites become ``site:`` operators, ``time_range`` → ``tbs=qdr:d/w/m/y``; the answer
    box (when present) is the first item; scores follow the organic position."""

    name = "serper"
    default_key_env = "SERPER_API_KEY"
    default_base_url = "https://google.serper.dev"
    native = _NATIVE
    settings_options = ("country", "language", "include_answer")

    def __init__(self, *, country: str | None = None, language: str | None = None,
                 include_answer: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.country = country
        self.language = language
        self.include_answer = include_answer

    def auth_headers(self) -> dict[str, str]:
        return {"X-API-KEY": self.api_key or "", "Content-Type": "application/json"}

    async def _request(self, params: SearchParams, timeout: float) -> Any:
        body: dict[str, Any] = {"q": site_operators(params.query, params.sites),
                                "num": min(params.limit, 100)}
        if params.time_range:
            body["tbs"] = GOOGLE_TBS[params.time_range]
        if self.country:
            body["gl"] = self.country
        if self.language:
            body["hl"] = self.language
        return await self._send("POST", "/search", json_body=body, timeout=timeout)

    def parse(self, raw: Any, params: SearchParams) -> list[ResultItem]:
        items: list[ResultItem] = []
        box = mapping(raw).get("answerBox") if self.include_answer else None
        if isinstance(box, dict):
            answer = answer_item(self.name, params.query, box.get("answer") or box.get("snippet"),
                                 kind="answer_box", title=box.get("title"), url=box.get("link"))
            if answer is not None:
                items.append(answer)
        for i, r in enumerate(records_at(raw, *_NATIVE.path), start=1):
            position = as_position(r.get("position"), i)
            meta = result_metadata(self.name, position, published=r.get("date"), record=r,
                                   fields=(("date", "date_text"), ("sitelinks", "sitelinks"),
                                           ("attributes", "attributes")))
            items.append(web_item(r.get("title"), r.get("snippet"), r.get("link"),
                                  rank_score(position), meta))
        return items
