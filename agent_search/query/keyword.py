"""Builtin keyword extraction (``uses.keyword = builtin``): a conversational message →
a short list of search keywords, with no model call.

>>> extract_keywords("I want to find the best wireless headphones under $100")
['wireless headphones', 'under $100', 'best']

Rules: quoted phrases are kept verbatim; function words and conversational fillers are
dropped (English list, Chinese list on jieba's segmentation); runs of remaining words are
kept together as phrases; numbers and prices stay, with a comparator before them
("under $100", "100元以下"); ranking words ("best", "最新") are kept on their own.
Order: quoted, subjects, constraints, qualifiers; at most ``max_keywords``.
"""

from __future__ import annotations

import re

import anyio

from agent_search.query._chinese import fold_width, has_cjk
from agent_search.query._keyword_en import extract_en
from agent_search.query._keyword_parts import KeywordParts
from agent_search.query._keyword_zh import extract_zh

LANGUAGES = ("auto", "en", "zh")
INLINE_CHARS = 1000
"""Longer texts are read in a worker thread by :func:`extract_keywords_async`."""
_QUOTED = re.compile(r'"([^"]{1,200})"|“([^”]{1,200})”|「([^」]{1,200})」|『([^』]{1,200})』')


def _resolve_language(text: str, language: str) -> str:
    lang = (language or "auto").strip().lower()
    if lang.startswith("zh"):
        return "zh"
    if lang == "auto":
        return "zh" if has_cjk(text) else "en"
    return "en"  # other space-separated languages use the generic (English) rules


def extract_keywords(text: str, max_keywords: int = 10, language: str = "auto") -> list[str]:
    """Keywords of ``text``, most telling first.

    ``language``: ``auto`` (Chinese if the text contains CJK characters, else English),
    ``en``, ``zh`` (or ``zh-CN``...); other codes use the English rules. The first call
    on Chinese text loads jieba's dictionary (about a second): from async code use
    :func:`extract_keywords_async`.
    """
    if max_keywords < 1:
        raise ValueError(f"max_keywords must be at least 1, got {max_keywords}")
    if not text or not text.strip():
        return []
    text = fold_width(text)  # "５００元", "ＧＤＰ": the same characters, ASCII width
    lang = _resolve_language(text, language)
    parts = KeywordParts()
    rest: list[str] = []
    last = 0
    for m in _QUOTED.finditer(text):
        phrase = next(g for g in m.groups() if g is not None).strip()
        if phrase:
            parts.quoted.append(phrase)
        rest.append(text[last:m.start()])
        last = m.end()
    rest.append(text[last:])
    extract = extract_zh if lang == "zh" else extract_en
    for chunk in rest:
        if chunk.strip():
            parts.extend(extract(chunk))
    return parts.ordered()[:max_keywords]


async def extract_keywords_async(text: str, max_keywords: int = 10,
                                 language: str = "auto") -> list[str]:
    """:func:`extract_keywords` without blocking the event loop: the entry point for async
    code. A short ASCII text (well under a millisecond) is read directly; long text, and
    Chinese (jieba loads its dictionary on first use), in a worker thread."""
    if len(text) <= INLINE_CHARS and text.isascii() and \
            _resolve_language(text, language) != "zh":
        return extract_keywords(text, max_keywords, language)
    return await anyio.to_thread.run_sync(extract_keywords, text, max_keywords, language)


def keyword_query(text: str, max_keywords: int = 10, language: str = "auto") -> str:
    """The keywords joined into one search-engine query (the text itself if none)."""
    keywords = extract_keywords(text, max_keywords, language)
    return " ".join(keywords) if keywords else text.strip()


__all__ = ["LANGUAGES", "extract_keywords", "extract_keywords_async", "keyword_query"]
