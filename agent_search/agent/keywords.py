"""Builtin keyword extraction for web queries.

The real extractor is :func:`agent_search.query.keyword.extract_keywords`; it is imported
lazily. If it is missing (a stripped-down install) a simple stopword filter is used so a
web search still gets a query.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import anyio

_DIRECT_MAX_CHARS = 1000
_WORD = re.compile(r"[\w][\w.+#-]*", re.UNICODE)
_STOP_WORDS = (
    "a an and are as at be been but by can could did do does for from had has have how i if "
    "in into is it its me my no not of on or our please show so tell than that the their them "
    "then there these they this to us was we were what when where which who why will with "
    "would you your find give list about some any"
)
_STOP = frozenset(_STOP_WORDS.split())


def simple_keywords(text: str, max_keywords: int) -> list[str]:
    """Words that are not stopwords, in order, without repeats."""
    seen: list[str] = []
    for w in _WORD.findall(text):
        lw = w.lower().strip(".-")
        if lw and lw not in _STOP and lw not in seen:
            seen.append(lw)
        if len(seen) >= max_keywords:
            break
    return seen


async def builtin_keywords(text: str, max_keywords: int, language: str,
                           warnings: list[str]) -> list[str]:
    try:
        from agent_search.query.keyword import extract_keywords
    except ImportError:
        return simple_keywords(text, max_keywords)

    def run() -> Any:
        return extract_keywords(text, max_keywords=max_keywords, language=language)

    try:
        # a short Latin-script query takes well under a millisecond: call it directly;
        # long text, or CJK (which may load a segmentation dictionary once), in a thread
        if len(text) <= _DIRECT_MAX_CHARS and text.isascii():
            out: Any = run()
        else:
            out = await anyio.to_thread.run_sync(run)
        if inspect.isawaitable(out):
            out = await out
        return [str(k) for k in out][:max_keywords]
    except Exception as exc:
        warnings.append(f"keyword extraction failed, used simple keywords: "
                        f"{type(exc).__name__}: {exc}")
        return simple_keywords(text, max_keywords)
