"""Turning provider payloads into uniform items: plain-text snippets, scores in 0..1,
ISO dates, and the secret redaction every error and log text goes through."""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from agent_search.types import ResultItem

_TAG = re.compile(r"<[^>]{0,2000}>")
_SPACE = re.compile(r"\s+")
_ISO_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2})?))?")
_TEXT_DATE_FORMATS = ("%b %d, %Y", "%B %d, %Y", "%d %b %Y", "%d %B %Y", "%Y/%m/%d", "%m/%d/%Y")


def strip_html(text: Any) -> str:
    """Plain text of a snippet: tags removed, entities decoded, whitespace collapsed.

    Snippets carry only inline markup (``<b>``, ``<strong>``, ``&nbsp;``), so a tag regex
    is enough here and keeps normalisation in microseconds; whole pages go through
    trafilatura instead (see :mod:`agent_search.web.fetch`).
    """
    if not text:
        return ""
    s = str(text)
    if "<" in s:
        s = _TAG.sub(" ", s)
    if "&" in s:
        s = html.unescape(s)
    return _SPACE.sub(" ", s).strip()


def clamp_score(value: Any, default: float = 0.0) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return default
    if v != v:  # NaN
        return default
    return min(1.0, max(0.0, v))


def position_score(position: int) -> float:
    """A score for providers that only rank: 1.0 for the first hit, 0.05 less for each
    later one, never below 0.05. Independent of the page size, so the same rank scores
    the same whatever ``limit`` was asked for."""
    return max(0.05, 1.0 - 0.05 * (max(1, position) - 1))


def result_metadata(provider: str, position: int, *, published: Any = None,
                    record: Mapping[str, Any] | None = None,
                    fields: Iterable[tuple[str, str]] = ()) -> dict[str, Any]:
    """The metadata every provider's item carries: provider, 1-based position, the
    publication date when ``published`` parses, and each ``(provider key, our key)`` of
    ``fields`` copied from ``record`` when it is present there."""
    meta: dict[str, Any] = {"provider": provider, "position": position}
    date = parse_date(published)
    if date:
        meta["published"] = date
    if record is not None:
        for src, dst in fields:
            if record.get(src):
                meta[dst] = record[src]
    return meta


def web_item(title: Any, content: Any, url: str | None, score: float,
             metadata: dict[str, Any]) -> ResultItem:
    """One organic result, HTML stripped from title and snippet."""
    return ResultItem(type="web", title=strip_html(title) or None, content=strip_html(content),
                      url=url, score=score, metadata=metadata)


def answer_item(provider: str, query: str, text: Any, *, kind: str, title: Any = None,
                url: str | None = None) -> ResultItem | None:
    """The provider's direct answer (answer box), placed first with score 1.0; None when
    the provider gave none."""
    if not text:
        return None
    return ResultItem(type="web", title=strip_html(title) or f"Answer: {query}",
                      content=strip_html(text), url=url, score=1.0,
                      metadata={"provider": provider, "position": 0, "kind": kind})


def parse_date(value: Any) -> str | None:
    """An ISO-8601 date (``YYYY-MM-DD``, with time when given) from the date formats
    providers use; None for relative ("3 days ago") or unknown forms."""
    if not value or not isinstance(value, str):
        return None
    s = value.strip()
    m = _ISO_DATE.match(s)
    if m:
        return m.group(1) if m.group(2) is None else f"{m.group(1)}T{m.group(2)}"
    for fmt in _TEXT_DATE_FORMATS:
        try:
            return datetime.strptime(s, fmt).date().isoformat()
        except ValueError:
            continue
    return None


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret replaced by ``***`` (secrets shorter than 4 characters
    are ignored: they would mangle ordinary words and are not real keys)."""
    for secret in secrets:
        if secret and len(secret) >= 4 and secret in text:
            text = text.replace(secret, "***")
    return text


def one_line(text: str, limit: int = 200) -> str:
    s = _SPACE.sub(" ", text).strip()
    return s if len(s) <= limit else s[: limit - 1] + "…"


class _RedactSecrets(logging.Filter):
    """Rewrites log records that contain a registered secret. Installed on httpx's
    logger, which writes each request URL at INFO — URLs carry the key of providers
    that only accept it as a query parameter (SerpAPI)."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            message = record.getMessage()
            cleaned = redact(message, self.secrets)
            if cleaned != message:
                record.msg, record.args = cleaned, None
        return True


_URL_LOG_FILTER = _RedactSecrets()
_FILTERED_LOGGERS = ("httpx", "httpcore")


def protect_secret_in_logs(secret: str | None) -> None:
    """Keep ``secret`` out of httpx's request log lines (see :class:`_RedactSecrets`)."""
    if not secret or len(secret) < 4:
        return
    if not _URL_LOG_FILTER.secrets:
        for name in _FILTERED_LOGGERS:
            logging.getLogger(name).addFilter(_URL_LOG_FILTER)
    _URL_LOG_FILTER.secrets.add(secret)
