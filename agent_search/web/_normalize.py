"""Turning provider payloads into uniform items: plain-text snippets, links that are
safe to pass on, scores on the project's absolute 0..1 scale, ISO dates, and the secret
redaction every error and log text goes through.

Links: a provider's URL is untrusted. Only an absolute ``http``/``https`` URL with a host,
without credentials, control, format or space characters and at most
:data:`~agent_search._links.MAX_URL_CHARS` long is kept (the rule of
:mod:`agent_search._links`); any other (``javascript:``, ``data:``, ``file:``,
``//host``, ``https://user:pw@host``...) becomes ``url=None`` on an item that is kept (its
text is still a search result), with the reason in ``metadata["url_refused"]``; the web
handler adds a warning to the Result.

Scores (0..1, ~0.5 = probably relevant, the same scale as kb and db): a provider's own
relevance score where it gives one (Tavily; an MCP tool's ``score``), clamped to 0..1;
otherwise the rank: :func:`rank_score` = 0.8 × 0.95^(rank − 1) — 0.80 for the first hit,
0.50 at rank 10, 0.30 at rank 20 — the same for every provider and independent of how
many results were asked for. A provider's direct answer (answer box) scores
:data:`ANSWER_SCORE`.
"""

from __future__ import annotations

import html
import logging
import math
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from agent_search._links import safe_url, url_problem
from agent_search.types import ResultItem

_TAG = re.compile(r"<[^>]{0,2000}>")
_SPACE = re.compile(r"\s+")
_ISO_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2})?))?")
_TEXT_DATE_FORMATS = ("%b %d, %Y", "%B %d, %Y", "%d %b %Y", "%d %B %Y", "%Y/%m/%d", "%m/%d/%Y")


def strip_html(text: Any) -> str:
    """Plain text of a snippet: tags removed, entities decoded, whitespace collapsed.

    Snippets carry only inline markup (``<b>``, ``<strong>``, ``&nbsp;``), so a tag regex
    is enough here and keeps normalisation in microseconds; whole pages go through
    trafilatura instead (see :mod:`agent_search.web._fetch`).
    """
    if not text:
        return ""
    s = str(text)
    if "<" in s:
        s = _TAG.sub(" ", s)
    if "&" in s:
        s = html.unescape(s)
    return _SPACE.sub(" ", s).strip()


RANK_TOP_SCORE = 0.8
"""Score of a provider's first organic result: web engines rank well, but a result is a
page about the words of the query, not a verified answer."""
RANK_DECAY = 0.95
"""Each later rank keeps 95% of the score before it: rank 10 → 0.50, rank 20 → 0.30."""
ANSWER_SCORE = 0.85
"""A provider's direct answer (answer box, Tavily's answer): placed first, above rank 1."""
_MAX_RANK = 1000
_MAX_POSITION = 10_000


def rank_score(position: int) -> float:
    """The score of the result at 1-based ``position`` of a provider that only ranks."""
    rank = min(max(1, position), _MAX_RANK)
    return round(RANK_TOP_SCORE * RANK_DECAY ** (rank - 1), 4)


def provider_score(value: Any, position: int) -> float:
    """A provider's own relevance score, clamped to 0..1; the rank score when the
    provider gave none that is a finite number (missing, text, bool, NaN)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return rank_score(position)
    v = float(value)
    if not math.isfinite(v):
        return rank_score(position)
    return min(1.0, max(0.0, v))


def as_position(value: Any, default: int) -> int:
    """A provider's 1-based position field when it is a plausible integer, else
    ``default`` (the item's place in the payload)."""
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= _MAX_POSITION:
        return value
    return default


def mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one: payload fields are
    untrusted and a wrong shape must not fail the whole response."""
    return value if isinstance(value, dict) else {}


def records_at(raw: Any, *path: str) -> list[dict[str, Any]]:
    """The JSON objects in the list at ``path`` of a payload (entries of other types are
    skipped; a missing or mistyped path is no records)."""
    node: Any = raw
    for key in path:
        node = mapping(node).get(key)
    if not isinstance(node, list):
        return []
    return [entry for entry in node if isinstance(entry, dict)]


def screen_url(value: Any, metadata: dict[str, Any]) -> str | None:
    """The link of an item: ``value`` when safe; otherwise None, with the reason recorded
    in ``metadata["url_refused"]`` (nothing is recorded for a missing or empty URL)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    problem = url_problem(value)
    if problem is None:
        return str(value).strip()
    metadata["url_refused"] = problem
    return None


def _safe_sitelinks(value: Any) -> list[dict[str, Any]]:
    return [{**link, "link": safe_url(link.get("link"))} for link in
            (value if isinstance(value, list) else []) if isinstance(link, dict)
            and safe_url(link.get("link"))]


_LINK_FIELDS: dict[str, Callable[[Any], Any]] = {"favicon": safe_url,
                                                 "sitelinks": _safe_sitelinks}
"""Metadata fields that hold links, and how each is screened."""


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
            value = record.get(src)
            screen = _LINK_FIELDS.get(dst)
            if screen is not None:
                value = screen(value)
            if value:
                meta[dst] = value
    return meta


def web_item(title: Any, content: Any, url: Any, score: float,
             metadata: dict[str, Any]) -> ResultItem:
    """One organic result, HTML stripped from title and snippet, its link screened."""
    return ResultItem(type="web", title=strip_html(title) or None, content=strip_html(content),
                      url=screen_url(url, metadata), score=score, metadata=metadata)


def answer_item(provider: str, query: str, text: Any, *, kind: str, title: Any = None,
                url: Any = None) -> ResultItem | None:
    """The provider's direct answer (answer box), placed first with
    :data:`ANSWER_SCORE`; None when the provider gave none."""
    if not text:
        return None
    metadata: dict[str, Any] = {"provider": provider, "position": 0, "kind": kind}
    return ResultItem(type="web", title=strip_html(title) or f"Answer: {query}",
                      content=strip_html(text), url=screen_url(url, metadata),
                      score=ANSWER_SCORE, metadata=metadata)


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
