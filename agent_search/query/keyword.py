"""Builtin keyword extraction (``uses.keyword = builtin``): a conversational message →
a short list of search keywords, with no model call.

>>> extract_keywords("I want to find the best wireless headphones under $100")
['wireless headphones', 'under $100', 'best']

Rules: quoted phrases are kept verbatim; function words and conversational fillers are
dropped (each language record's stop words; Chinese on jieba's segmentation); runs of
remaining words are kept together as phrases; numbers and prices stay, with a comparator
before them ("under $100", "100元以下"); ranking words ("best", "最新") are kept on their
own.
Order: quoted, subjects, constraints, qualifiers; at most ``max_keywords``.

The text is classified once (:func:`agent_search.language.classify`) and read with its
language's rules from :data:`RULES`. A registered language without rules of its own is
read with the generic rules: the English ones with its stop words added for a language
written with spaces, else runs of its tokenizer's words outside its stop words.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import anyio

from agent_search.language import Language, classify, fallback, fold_width, language_named
from agent_search.query._keyword_en import extract_en
from agent_search.query._keyword_parts import KeywordParts
from agent_search.query._keyword_stopwords import EN_STOPWORDS
from agent_search.query._keyword_zh import extract_zh

LANGUAGES = ("auto", "en", "zh")
"""The languages with rules of their own (and ``auto``); a registered language is named
by its code too."""
RULES: dict[str, Callable[[str], KeywordParts]] = {"en": extract_en, "zh": extract_zh}
"""Each language's keyword rules, by :attr:`~agent_search.language.Language.name`."""
INLINE_CHARS = 1000
"""Longer texts are read in a worker thread by :func:`extract_keywords_async`."""
_QUOTED = re.compile(r'"([^"]{1,200})"|“([^”]{1,200})”|「([^」]{1,200})」|『([^』]{1,200})』')


def _resolve_language(text: str, language: str) -> Language:
    """The language ``text`` is read in: its own (``auto``) or the one named (a code no
    language is registered under reads with the fallback's, English, rules)."""
    code = (language or "auto").strip().lower()
    if code == "auto":
        return classify(text)
    return language_named(code) or fallback()


def _rules(language: Language) -> Callable[[str], KeywordParts]:
    """``language``'s rules from :data:`RULES`, else the generic rules (see module)."""
    own = RULES.get(language.name)
    if own is not None:
        return own
    stopwords = language.stopwords | EN_STOPWORDS
    if language.spaced:
        return lambda text: extract_en(text, stopwords)
    return lambda text: _extract_words(text, language, stopwords)


def _extract_words(text: str, language: Language, stopwords: frozenset[str]) -> KeywordParts:
    """Generic rules for a language written without spaces: runs of the tokenizer's words
    (letters or digits) outside the stop words, each run one phrase."""
    parts = KeywordParts()
    run: list[str] = []
    for token in [*language.tokenize(text), ""]:
        if token[:1].isalnum() and token.lower() not in stopwords:
            run.append(token)
        elif run:
            parts.phrases.append(language.join(run))
            run = []
    return parts


def extract_keywords(text: str, max_keywords: int = 10, language: str = "auto") -> list[str]:
    """Keywords of ``text``, most telling first.

    ``language``: ``auto`` (the text's own, :func:`agent_search.language.classify`:
    Chinese if it holds a Han character, else English), ``en``, ``zh`` (or ``zh-CN``...)
    or a registered language's code; other codes use the English rules. The first call
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
    extract = _rules(lang)
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
            _resolve_language(text, language).ready():
        return extract_keywords(text, max_keywords, language)
    return await anyio.to_thread.run_sync(extract_keywords, text, max_keywords, language)


def keyword_query(text: str, max_keywords: int = 10, language: str = "auto") -> str:
    """The keywords joined into one search-engine query (the text itself if none)."""
    keywords = extract_keywords(text, max_keywords, language)
    return " ".join(keywords) if keywords else text.strip()


__all__ = ["LANGUAGES", "extract_keywords", "extract_keywords_async", "keyword_query"]
