"""A provider's native records: its API's own result objects, typed.

The record types of the builtin APIs are defined here together; each provider class
names its :class:`NativeFormat` (where the payload keeps its results, their record type,
the field holding a result's link, the payload's total);
:meth:`~agent_search.web.providers._base.WebProvider.native_records` reads a payload
with it. Record fields are snake_case with the API's spelling as alias; fields a record
does not name are kept (``extra="allow"``), so nothing the provider sent is lost —
except a link that is not a safe http(s) URL (``javascript:``, credentials, control
characters...), which is set to None as on the web handler's items, and an entry that
does not fit its record type, which is left out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_search._links import safe_url


class NativeRecord(BaseModel):
    """Base of the providers' record types."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


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

class TavilyResult(NativeRecord):
    """One ``results`` entry of Tavily ``/search``."""

    title: str | None = None
    url: str | None = None
    content: str | None = None
    score: float | None = None
    raw_content: str | None = None
    published_date: str | None = None

class SerperResult(NativeRecord):
    """One ``organic`` entry of Serper.dev."""

    title: str | None = None
    link: str | None = None
    snippet: str | None = None
    position: int | None = None
    date: str | None = None

class SerpAPIResult(NativeRecord):
    """One ``organic_results`` entry of SerpAPI."""

    title: str | None = None
    link: str | None = None
    snippet: str | None = None
    position: int | None = None
    displayed_link: str | None = None
    date: str | None = None

class SearXNGResult(NativeRecord):
    """One ``results`` entry of a SearXNG instance's JSON API."""

    title: str | None = None
    url: str | None = None
    content: str | None = None
    engine: str | None = None
    score: float | None = None
    published_date: str | None = Field(default=None, alias="publishedDate")


def value_at(raw: Any, *path: str) -> Any:
    """The value at ``path`` of a JSON payload (None where the path breaks)."""
    for key in path:
        if not isinstance(raw, dict):
            return None
        raw = raw.get(key)
    return raw


def count_at(*path: str) -> Callable[[Any], int | None]:
    """A reader of the integer at ``path`` of a payload (None when it is not one)."""

    def read(raw: Any) -> int | None:
        try:
            return int(value_at(raw, *path))
        except (TypeError, ValueError):
            return None

    return read


@dataclass(frozen=True, slots=True)
class NativeFormat:
    """Where a provider's payload keeps its results, their type, the field holding each
    result's link, and the payload's total count."""

    path: tuple[str, ...]
    record: type[NativeRecord]
    link: str
    total: Callable[[Any], int | None] = lambda raw: None

    def read(self, raw: Any) -> tuple[list[NativeRecord], int | None]:
        """The typed records of a payload, and the provider's total."""
        entries = value_at(raw, *self.path) or []
        if not isinstance(entries, list):
            return [], None
        records: list[NativeRecord] = []
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            if self.link in entry:
                entry = {**entry, self.link: safe_url(entry[self.link])}
            try:
                records.append(self.record.model_validate(entry))
            except ValidationError:
                continue
        return records, self.total(raw)
