"""Chinese keyword rules, on jieba's segmentation.

Same shape as the English rules: stopwords break runs of content words, which are
joined back (without spaces between Chinese words) into subject phrases ("无线耳机");
a number with its unit and comparators on either side is one constraint ("100元以下",
"不超过500元"); ranking words ("最好", "最新") are keywords of their own. Latin words
inside Chinese text go through the English stopword list.
"""

from __future__ import annotations

import re

from agent_search.language import CHINESE, HAN_CHAR
from agent_search.query._keyword_parts import KeywordParts, PhraseRun
from agent_search.query._keyword_stopwords import (
    EN_QUALIFIERS,
    EN_STOPWORDS,
    PRICE_SYMBOLS,
    ZH_PREFIX_COMPARATORS,
    ZH_QUALIFIERS,
    ZH_STOPWORDS,
    ZH_SUFFIX_COMPARATORS,
    ZH_UNITS,
)

_NUMERALS = CHINESE.numerals
_NUMBER = re.compile(rf"^[{PRICE_SYMBOLS}]?\d[\d,]*(?:\.\d+)?$|^[{_NUMERALS}]+$")
_LATIN = re.compile(r"^[^\W\d_][\w+#.\-']*$")
_QUALIFIER_SUFFIXES = frozenset({"高", "好"})
_NUMERAL_WITH_UNIT = re.compile(rf"^([{_NUMERALS}]+)(\D+)$")


def _join(tokens: list[str]) -> str:
    out = ""
    for tok in tokens:
        if out and not (HAN_CHAR.search(out[-1]) and HAN_CHAR.search(tok[0])):
            out += " "
        out += tok
    return out


def _split_numeral_units(tokens: list[str]) -> list[str]:
    """jieba keeps "三千元" as one word; a number said in characters with its unit is a
    quantity like "3000元" ("三千元以下" is a constraint, not a subject phrase)."""
    out: list[str] = []
    for tok in tokens:
        m = _NUMERAL_WITH_UNIT.match(tok)
        if m and m.group(2) in ZH_UNITS:
            out.extend(m.groups())
        else:
            out.append(tok)
    return out


def _merge_negated_comparators(tokens: list[str]) -> list[str]:
    """jieba splits "不超过" into "不" + "超过"; put such comparators back together."""
    out: list[str] = []
    for tok in tokens:
        if out and out[-1] == "不" and "不" + tok in ZH_PREFIX_COMPARATORS:
            out[-1] = "不" + tok
        else:
            out.append(tok)
    return out


def _quantity(tokens: list[str], i: int) -> tuple[str, bool, int] | None:
    """The number at ``i`` with a comparator before it ("不超过500元"), its unit and a
    comparator after ("100元以下"): its text, whether it is a constraint (a comparator or
    a price symbol: else a plain number or quantity, part of the subject: "iPhone 15"),
    and the index after it; None when no number starts at ``i``."""
    tok = tokens[i]
    nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
    prefixed = tok in ZH_PREFIX_COMPARATORS and _NUMBER.match(nxt) is not None
    if not prefixed and _NUMBER.match(tok) is None:
        return None
    j = i + 2 if prefixed else i + 1
    suffixed = False
    for words in (ZH_UNITS, ZH_SUFFIX_COMPARATORS):
        if j < len(tokens) and tokens[j] in words:
            suffixed = words is ZH_SUFFIX_COMPARATORS
            j += 1
    return "".join(tokens[i:j]), prefixed or suffixed or tok[0] in PRICE_SYMBOLS, j


def _in_subject(tok: str) -> bool:
    """A word of a subject phrase: Chinese or Latin, no stopword (nor punctuation)."""
    if HAN_CHAR.search(tok):
        return tok not in ZH_STOPWORDS
    return _LATIN.match(tok) is not None and tok.lower() not in EN_STOPWORDS


def extract_zh(text: str) -> KeywordParts:
    """Subject phrases, constraints and qualifiers of a Chinese query (see module)."""
    parts = KeywordParts()
    tokens = _merge_negated_comparators(
        _split_numeral_units(CHINESE.tokenize(text)))
    run = PhraseRun(parts, _join)
    i = 0
    while i < len(tokens):
        quantity = _quantity(tokens, i)
        if quantity is not None:
            said, constraint, i = quantity
            if constraint:
                run.end()
                parts.constraints.append(said)
            else:
                run.add(said)
            continue
        tok = tokens[i]
        if tok in ZH_QUALIFIERS or tok.lower() in EN_QUALIFIERS:
            run.end()
            if i + 1 < len(tokens) and tokens[i + 1] in _QUALIFIER_SUFFIXES:
                tok += tokens[i + 1]
                i += 1
            parts.qualifiers.append(tok)
        elif _in_subject(tok):
            run.add(tok)
        else:  # punctuation, quotes, stopwords
            run.end()
        i += 1
    run.end()
    return parts
