"""Numbers aligned by what they count.

A number "found" in a reference may count something else there: "within six months"
against "within six weeks", "by about 40%" against "before age 40 ... by about 90%". So
each number of an English sentence is paired with what it counts — the word right after
it (its unit or noun: "weeks", "meters", "states") or a percent sign — and so is each
number of the reference window that supports the sentence. A number the window states
only as a count of other things, while the window counts the sentence's thing with
another number or never names it at all, is not what the window says.

English only: a Chinese number carries its measure word inside jieba's word, and the
numbers of a Chinese sentence are compared as values (:mod:`agent_search.grounding._claims`).
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from importlib import resources

from agent_search.grounding._claims import _NUMBER_WORDS, _STOP, _WEAK_NUMBER_WORDS, stem
from agent_search.language import HAN_CHAR

_COUNT = re.compile(
    r"(?<![\w.])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|[A-Za-z]+)"
    r"(?P<pct>\s*(?:%|percent\b|per\s?cent\b))?"
    r"(?:(?=\s+(?P<unit>[A-Za-z][A-Za-z\-]*)))?")
"""A number (digits or a number word), then a percent sign or the word after it."""


def _value(token: str) -> float | None:
    low = token.lower()
    if low in _NUMBER_WORDS and low not in _WEAK_NUMBER_WORDS:
        return float(_NUMBER_WORDS[low])
    try:
        return float(token.replace(",", ""))
    except ValueError:
        return None


def counts(text: str) -> dict[float, set[str]]:
    """Each number of ``text`` with what it counts: ``%``, or the stem of the content
    word after it ("" when a function word or nothing follows)."""
    out: dict[float, set[str]] = defaultdict(set)
    for m in _COUNT.finditer(text):
        value = _value(m.group("num"))
        if value is None:
            continue
        unit = m.group("unit") or ""
        what = "%" if m.group("pct") else (
            stem(unit.lower()) if unit and unit.lower() not in _STOP else "")
        out[value].add(what)
    return out


def miscounted(sentence: str, window: str) -> str | None:
    """The first number of ``sentence`` that ``window`` states only as a count of
    something else, quoted, or None: the window counts the sentence's thing with another
    number, or the sentence's thing is a unit of measure or time (WordNet's) the window
    never names ("six months" where it says "six weeks"). A word after a number that is
    no unit ("40 cuts the risk") only counts when the window counts it too."""
    if HAN_CHAR.search(sentence) or HAN_CHAR.search(window):
        return None
    said, there = counts(sentence), counts(window)
    units_there = {u for units in there.values() for u in units}
    measures = _measures(sentence)
    for value, units in said.items():
        held = there.get(value)
        if not held or "" in held:
            continue  # not stated, or stated with nothing after it to compare
        for unit in units - {""}:
            if unit in held:
                continue
            if unit in units_there or (unit in measures
                                       and unit not in _window_words(window)):
                return _quote(sentence, value, unit)
    return None


def _measures(text: str) -> set[str]:
    """The stems of the words of ``text`` that are units of measure or time."""
    return {stem(w.lower()) for w in re.findall(r"[A-Za-z]+", text) if _is_unit(w.lower())}


def _is_unit(word: str) -> bool:
    units = _units()
    return word in units or (word.endswith("s") and word[:-1] in units) or (
        word.endswith("es") and word[:-2] in units)


@functools.lru_cache(maxsize=1)
def _units() -> frozenset[str]:
    """WordNet's nouns of quantity and time (``_data/units.txt``, tools/wordnet_antonyms.py)."""
    data = resources.files("agent_search.grounding") / "_data" / "units.txt"
    return frozenset(data.read_text(encoding="utf-8").split())


def _window_words(window: str) -> set[str]:
    return {stem(w.lower()) for w in re.findall(r"[A-Za-z][A-Za-z\-]*", window)} | (
        {"%"} if "%" in window or "percent" in window.lower() else set())


def _quote(sentence: str, value: float, unit: str) -> str:
    for m in _COUNT.finditer(sentence):
        if _value(m.group("num")) == value:
            return " ".join(m.group(0).split())
    return f"{value:g} {unit}"
