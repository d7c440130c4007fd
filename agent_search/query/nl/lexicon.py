"""The words of a question: stopwords, word and phrase finding, plural forms, stems.

Pure functions on text (no schema, no state), shared by the parser's extractors; the two
applied to every model and field name on every parse are cached by their text.
"""

from __future__ import annotations

import re
from functools import lru_cache

MAX_TERM_CHARS = 64
"""Longer words are not used as text-match terms."""

STOPWORD_TEXT = """
a about above after again all also am an and any are as at be been before being below
between both but by can could did do does doing down during each few find for from further
get give had has have having he her here hers him his how i if in into is it its itself
just list me more most my no nor not now of off on once only or other our out over own
please same she should show so some such than that the their them then there these they
this those through to too under until up very was we were what when where which while who
whom why will with would you your yours display fetch search lookup look want need know
tell many much number all every any whose called named titled containing contain contains
count average avg mean sum median total
record records entry entries item items row rows data info information details detail
different distinct each kind kinds type types word words letter letters text live lives
living
"""
STOPWORDS = frozenset(STOPWORD_TEXT.split())

WORD = re.compile(r"[\w][\w'’./@&+-]*[\w]|[\w]", re.UNICODE)
"""A word of a question (keeps "AC/DC", "e-mail", "luisg@embraer.com.br" whole)."""


@lru_cache(maxsize=4096)
def words_of(name: str) -> str:
    """``UnitPrice`` / ``unit_price`` / ``agents.demo.unit-price`` → ``unit price``."""
    name = name.rsplit(".", 1)[-1]
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name)
    return " ".join(re.split(r"[\s_\-]+", name.lower())).strip()


@lru_cache(maxsize=4096)
def plural_forms(phrase: str) -> frozenset[str]:
    """The phrase with its last word in the singular and the plural (crude English rules;
    a set that may hold a wrong form too: "genres" → "genreses")."""
    forms = {phrase}
    head, _, last = phrase.rpartition(" ")
    prefix = head + " " if head else ""
    if last.endswith("y") and len(last) > 2 and last[-2] not in "aeiou":
        forms.add(prefix + last[:-1] + "ies")
    elif last.endswith(("s", "x", "ch", "sh")):
        forms.add(prefix + last + "es")
    else:
        forms.add(prefix + last + "s")
    if last.endswith("ies"):
        forms.add(prefix + last[:-3] + "y")
    elif last.endswith("s") and len(last) > 3:
        forms.add(prefix + last[:-1])
    return frozenset(forms)


def find_phrase(low: str, phrase: str, start: int = 0) -> list[tuple[int, int]]:
    """Occurrences of ``phrase`` in ``low`` on word boundaries."""
    out = []
    i = low.find(phrase, start)
    n = len(phrase)
    while i >= 0:
        before = low[i - 1] if i > 0 else " "
        after = low[i + n] if i + n < len(low) else " "
        if not before.isalnum() and not after.isalnum():
            out.append((i, i + n))
        i = low.find(phrase, i + 1)
    return out


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def adjacent(a: tuple[int, int], b: tuple[int, int], text: str) -> bool:
    """Only spaces between the two spans."""
    lo, hi = (a[1], b[0]) if a[0] < b[0] else (b[1], a[0])
    return lo <= hi and not text[lo:hi].strip()


def terms(words: list[str]) -> list[str]:
    """Up to 8 distinct stems of reasonable length."""
    stems = [stem(w) for w in words if len(w) <= MAX_TERM_CHARS]
    return list(dict.fromkeys(stems))[:8]


def stem(word: str) -> str:
    """A crude singular stem for ``like`` matching: "monitors" → "monitor", "batteries"
    → "batter" (matches battery and batteries), "boxes" → "box"."""
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3]
    if len(w) > 4 and w.endswith(("ses", "xes", "ches", "shes")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def escape_like(text: str) -> str:
    """Literal text in a LIKE pattern: its own % and _ match themselves (approximately:
    they are replaced by the single-character wildcard so no escape clause is needed)."""
    return text.replace("%", "_")
