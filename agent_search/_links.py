"""Which links may leave the module: one rule for the items of every handler.

A link from outside (a provider's result, a handler we do not own, a tool) ends up in
events, the prompt, references, the CLI, MCP answers and the chat page, where a client may
render or open it. Only an absolute ``http``/``https`` URL with a host, without
credentials, control, format or space characters (any Unicode line break included), with a
valid port and at most :data:`MAX_URL_CHARS` long passes; anything else (``javascript:``,
``data:``, ``file:``, ``//host``, ``https://user:pw@host``...) does not.

The searcher checks every item on its hot path, so :func:`safe_url` first tries a pattern
that only plain ASCII links match, each of which the full rule (:func:`url_problem`)
accepts too; anything else takes the full rule.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any
from urllib.parse import urlsplit

MAX_URL_CHARS = 4096

_URL_SCHEMES = ("http", "https")
_ASCII_FORBIDDEN = re.compile(r"[\x00-\x20\x7f]")
_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Zs", "Cs", "Co", "Cn"})

# printable ASCII only; the host part has no port, credentials, brackets or backslash, so
# urlsplit cannot fail on it and finds a non-empty host: a subset of what url_problem passes
_PLAIN_LINK = re.compile(
    r"https?://[A-Za-z0-9.\-_~%!$&'()*+,;=]+(?:[/?#][\x21-\x7e]*)?", re.IGNORECASE).fullmatch


def url_problem(value: Any) -> str | None:
    """Why ``value`` is not a link to pass on (None when it is one). The reason names only
    facts we chose, never the URL's own text."""
    if not isinstance(value, str):
        return f"not a string ({type(value).__name__})"
    if len(value) > MAX_URL_CHARS:
        return f"longer than {MAX_URL_CHARS} characters"
    s = value.strip()
    if (bad := _forbidden_character(s)) is not None:
        return f"contains the character U+{ord(bad):04X}"
    return _parts_problem(s)


def _forbidden_character(s: str) -> str | None:
    """The first control, format or space character of ``s`` (a pattern when it is ASCII,
    the Unicode categories otherwise), or None."""
    if s.isascii():
        found = _ASCII_FORBIDDEN.search(s)
        return found.group() if found else None
    return next((c for c in s if unicodedata.category(c) in _FORBIDDEN_CATEGORIES
                 or c.isspace()), None)


def _parts_problem(s: str) -> str | None:
    """Why ``s``, read as a URL, is not an absolute http(s) link to a host without
    credentials (None when it is one)."""
    try:
        parts = urlsplit(s)
        _ = parts.port
    except ValueError:
        return "not a valid URL"
    scheme = parts.scheme.lower()
    if scheme not in _URL_SCHEMES:
        return f"scheme {scheme[:20]!r} is not http or https" if scheme else "no scheme"
    if "@" in parts.netloc or "\\" in parts.netloc:
        return "credentials in the URL"
    return None if parts.hostname else "no host"


def safe_url(value: Any) -> str | None:
    """``value`` (stripped) when it is a link to pass on, else None."""
    if isinstance(value, str) and len(value) <= MAX_URL_CHARS and _PLAIN_LINK(value):
        return value
    if value is None or url_problem(value) is not None:
        return None
    return str(value).strip()
