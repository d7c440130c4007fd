"""Native records of the web providers: each API's own result objects, typed.

:meth:`WebProviderTextSearch.get_search_results` returns these (the ADR's ``BingWebPage``
and friends). Field names are snake_case with the API's spelling as alias; fields we do
not name are kept (``extra="allow"``), so nothing the provider sent is lost — except a
result's link that is not a safe http(s) URL (``javascript:``, credentials, control
characters...), which is set to None as on the web handler's items, and an entry that
does not fit its record type, which is left out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class BingWebPage(_Record):
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


class GoogleWebPage(_Record):
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


class BraveWebResult(_Record):
    """One ``web.results`` entry of the Brave Search API."""

    title: str | None = None
    url: str | None = None
    description: str | None = None
    age: str | None = None
    page_age: str | None = None
    language: str | None = None
    profile: dict[str, Any] | None = None
    extra_snippets: list[str] | None = None


class TavilyResult(_Record):
    """One ``results`` entry of Tavily ``/search``."""

    title: str | None = None
    url: str | None = None
    content: str | None = None
    score: float | None = None
    raw_content: str | None = None
    published_date: str | None = None


class SerperResult(_Record):
    """One ``organic`` entry of Serper.dev."""

    title: str | None = None
    link: str | None = None
    snippet: str | None = None
    position: int | None = None
    date: str | None = None


class SerpAPIResult(_Record):
    """One ``organic_results`` entry of SerpAPI."""

    title: str | None = None
    link: str | None = None
    snippet: str | None = None
    position: int | None = None
    displayed_link: str | None = None
    date: str | None = None


class SearXNGResult(_Record):
    """One ``results`` entry of a SearXNG instance's JSON API."""

    title: str | None = None
    url: str | None = None
    content: str | None = None
    engine: str | None = None
    score: float | None = None
    published_date: str | None = Field(default=None, alias="publishedDate")


def _at(raw: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(raw, dict):
            return None
        raw = raw.get(key)
    return raw


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class NativeFormat:
    """Where a provider's payload keeps its results, their type, the field holding each
    result's link, and the payload's total count."""

    path: tuple[str, ...]
    record: type[BaseModel]
    link: str
    total: Callable[[Any], int | None] = lambda raw: None


NATIVE_FORMATS: dict[str, NativeFormat] = {
    "bing": NativeFormat(("webPages", "value"), BingWebPage, "url",
                         lambda raw: _int(_at(raw, "webPages", "totalEstimatedMatches"))),
    "google": NativeFormat(("items",), GoogleWebPage, "link",
                           lambda raw: _int(_at(raw, "searchInformation", "totalResults"))),
    "brave": NativeFormat(("web", "results"), BraveWebResult, "url"),
    "tavily": NativeFormat(("results",), TavilyResult, "url"),
    "serper": NativeFormat(("organic",), SerperResult, "link"),
    "serpapi": NativeFormat(("organic_results",), SerpAPIResult, "link",
                            lambda raw: _int(_at(raw, "search_information",
                                                 "total_results"))),
    "searxng": NativeFormat(("results",), SearXNGResult, "url",
                            lambda raw: _int(_at(raw, "number_of_results")) or None),
}


def native_records(provider: str, raw: Any) -> tuple[list[BaseModel], int | None] | None:
    """The typed records of a payload and the provider's total, or ``None`` when the
    provider has no known native format (then the parsed items are the records)."""
    fmt = NATIVE_FORMATS.get(provider)
    if fmt is None:
        return None
    from agent_search.links import safe_url

    entries = _at(raw, *fmt.path) or []
    if not isinstance(entries, list):
        return [], None
    records: list[BaseModel] = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        if fmt.link in entry:
            entry = {**entry, fmt.link: safe_url(entry[fmt.link])}
        try:
            records.append(fmt.record.model_validate(entry))
        except ValidationError:
            continue
    return records, fmt.total(raw)
