"""English (and other space-separated languages) keyword rules.

Tokens are words, numbers and prices; function words and conversational fillers
("I want to find") break the text into runs, and each run of content words is a subject
phrase ("wireless headphones"). A comparator directly before a number or price stays
with it ("under $100"); ranking adjectives ("best") become keywords of their own.
"""

from __future__ import annotations

import re

from agent_search.query._keyword_parts import KeywordParts, PhraseRun
from agent_search.query._keyword_stopwords import (
    EN_COMPARATORS,
    EN_QUALIFIERS,
    EN_STOPWORDS,
    PRICE_SYMBOLS,
)

_NUMBER = r"\d[\d,]*(?:\.\d+)?"
_TOKEN = re.compile(
    rf"(?P<price>[{PRICE_SYMBOLS}]\s?{_NUMBER}(?:\s?[kKmM]\b)?"
    rf"|{_NUMBER}\s?(?:[{PRICE_SYMBOLS}]|usd\b|eur\b|gbp\b|dollars?\b|bucks\b|euros?\b))"
    rf"|(?P<number>{_NUMBER}(?:%|[a-zA-Z]{{1,3}}\b)?)"
    r"|(?P<word>[^\W\d_](?:[\w+#'’]|[.\-](?=\w))*[+#]*)"
    r"|(?P<sep>\S)",
    re.IGNORECASE,
)
_COMPARATORS_BY_FIRST_WORD: dict[str, list[tuple[str, ...]]] = {}
for _phrase in sorted((tuple(c.split()) for c in EN_COMPARATORS), key=len, reverse=True):
    _COMPARATORS_BY_FIRST_WORD.setdefault(_phrase[0], []).append(_phrase)


def _tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text) pairs; kind is price, number, word or sep."""
    out: list[tuple[str, str]] = []
    for m in _TOKEN.finditer(text.replace("’", "'")):
        kind = m.lastgroup or "sep"
        out.append((kind, m.group(kind)))
    return out


def _comparator_at(tokens: list[tuple[str, str]], i: int) -> int:
    """Length in tokens of a comparator starting at ``i`` that a number follows, else 0."""
    for words in _COMPARATORS_BY_FIRST_WORD.get(tokens[i][1].lower(), ()):
        n = len(words)
        window = tokens[i:i + n]
        if (len(window) == n and all(k == "word" and t.lower() == w
                                     for (k, t), w in zip(window, words, strict=True))
                and i + n < len(tokens) and tokens[i + n][0] in ("price", "number")):
            return n
    return 0


def extract_en(text: str, stopwords: frozenset[str] = EN_STOPWORDS) -> KeywordParts:
    """Subject phrases, constraints and qualifiers of a space-separated query (see
    module); ``stopwords``: the words dropped (English's; another spaced language's and
    English's for a language with no rules of its own)."""
    parts = KeywordParts()
    run = PhraseRun(parts)
    tokens = _tokens(text)
    i = 0
    while i < len(tokens):
        kind, tok = tokens[i]
        n = _comparator_at(tokens, i) if kind == "word" else 0
        if n:
            run.end()
            said, i = _constraint(tokens, i, n)
            parts.constraints.append(said)
            continue
        low = tok.lower().rstrip(".")
        if kind == "price":
            run.end()
            parts.constraints.append(tok)
        elif kind == "number":
            run.add(tok)
        elif kind == "word" and low in EN_QUALIFIERS:
            run.end()
            parts.qualifiers.append(tok)
        elif kind == "word" and low not in stopwords and (len(low) > 1 or tok.isupper()):
            run.add(tok.rstrip("."))
        else:
            run.end()
        i += 1
    run.end()
    return parts


def _constraint(tokens: list[tuple[str, str]], i: int, n: int) -> tuple[str, int]:
    """The comparator of ``n`` tokens at ``i`` with the number after it, and a range's
    other end ("between $50 and $100", "from 2020 to 2024"); and the index after them."""
    words = [t for _, t in tokens[i:i + n + 1]]
    j = i + n + 1
    if (j + 1 < len(tokens) and tokens[j][1].lower() in ("and", "to", "-")
            and tokens[j + 1][0] in ("price", "number")):
        words += [tokens[j][1], tokens[j + 1][1]]
        j += 2
    return " ".join(words), j
