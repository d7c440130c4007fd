"""Serper (serper.dev, Google results): ``POST /search`` with ``X-API-KEY``."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from agent_search.types import ResultItem
from agent_search.web._normalize import (
    answer_item,
    as_position,
    mapping,
    rank_score,
    records_at,
    result_metadata,
    web_item,
)
from agent_search.web.providers._base import (
    HttpProvider,
    LocaleSettings,
    SearchParams,
    site_operators,
)
from agent_search.web.providers._native import NativeFormat, NativeRecord

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


class SerperSettings(LocaleSettings):
    """``web.serper``: market, and whether the answer box is the first item."""

    include_answer: bool = Field(default=True, description="the answer box as first item")


class SerperProvider(HttpProvider):
    """Sites become ``site:`` operators, ``time_range`` → ``tbs=qdr:d/w/m/y``; the answer
    box (when present) is the first item; scores follow the organic position."""

    name = "serper"
    default_key_env = "SERPER_API_KEY"
    default_base_url = "https://google.serper.dev"
    native = _NATIVE
    settings_model = SerperSettings

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
        return google_results(self.name, raw, params, box_key="answerBox",
                              answer_keys=("answer", "snippet"), native=_NATIVE,
                              include_answer=self.include_answer,
                              fields=(("date", "date_text"), ("sitelinks", "sitelinks"),
                                      ("attributes", "attributes")))


def google_results(provider: str, raw: Any, params: SearchParams, *, box_key: str,
                   answer_keys: tuple[str, ...], native: NativeFormat,
                   include_answer: bool, fields: tuple[tuple[str, str], ...]
                   ) -> list[ResultItem]:
    """Items from a payload of Google results as Serper and SerpAPI give them: the
    answer box (when asked for and present) first, then the organic results scored by
    their position; ``fields`` are the result fields kept in metadata, renamed."""
    items: list[ResultItem] = []
    box = mapping(raw).get(box_key) if include_answer else None
    if isinstance(box, dict):
        text = next((box[key] for key in answer_keys if box.get(key)), None)
        answer = answer_item(provider, params.query, text, kind="answer_box",
                             title=box.get("title"), url=box.get("link"))
        if answer is not None:
            items.append(answer)
    for i, r in enumerate(records_at(raw, *native.path), start=1):
        position = as_position(r.get("position"), i)
        meta = result_metadata(provider, position, published=r.get("date"), record=r,
                               fields=fields)
        items.append(web_item(r.get("title"), r.get("snippet"), r.get("link"),
                              rank_score(position), meta))
    return items
