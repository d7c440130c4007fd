"""Serper (serper.dev, Google results): ``POST /search`` with ``X-API-KEY``."""

from __future__ import annotations

from typing import Any

from agent_search.types import ResultItem
from agent_search.web.normalize import parse_date, position_score, strip_html
from agent_search.web.providers.base import HttpProvider, SearchParams, site_operators

GOOGLE_TBS: dict[str, str] = {"day": "qdr:d", "week": "qdr:w", "month": "qdr:m", "year": "qdr:y"}
"""Google's ``tbs`` time filters, shared by Serper and SerpAPI."""


class SerperProvider(HttpProvider):
    """Sites become ``site:`` operators, ``time_range`` → ``tbs=qdr:d/w/m/y``; the answer
    box (when present) is the first item; scores follow the organic position."""

    name = "serper"

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
        box = raw.get("answerBox") if self.include_answer else None
        if isinstance(box, dict):
            text = box.get("answer") or box.get("snippet") or ""
            if text:
                items.append(ResultItem(
                    type="web", title=strip_html(box.get("title")) or f"Answer: {params.query}",
                    content=strip_html(text), url=box.get("link"), score=1.0,
                    metadata={"provider": self.name, "position": 0, "kind": "answer_box"}))
        for i, r in enumerate(raw.get("organic") or [], start=1):
            position = int(r.get("position") or i)
            meta: dict[str, Any] = {"provider": self.name, "position": position}
            if r.get("date"):
                meta["date_text"] = r["date"]
                published = parse_date(r["date"])
                if published:
                    meta["published"] = published
            if r.get("sitelinks"):
                meta["sitelinks"] = r["sitelinks"]
            if r.get("attributes"):
                meta["attributes"] = r["attributes"]
            items.append(ResultItem(
                type="web", title=strip_html(r.get("title")) or None,
                content=strip_html(r.get("snippet")), url=r.get("link"),
                score=position_score(position), metadata=meta))
        return items
