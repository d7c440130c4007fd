"""Which words of a question no rule understood: the parser's "words left over".

A word is left over unless one of :data:`NOT_LEFTOVER` says why it is not — the reasons,
in one place: too short or a stopword, covered by something understood (or by a model's
or field's name), a verb linking to something understood, "the <model> table", or an
order word. What becomes of the words left over (a text match, or ignored with a lower
confidence) is the parser's (:mod:`._parser`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from agent_search.language import HAN_CHAR
from agent_search.query.nl._lexicon import STOPWORDS, overlaps, word_spans
from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._reading._schema import Span, every_span, overlaps_any
from agent_search.query.nl._rules import _ordering as ordering

_WHOLE = re.compile(r"\b(?:in|around|across|throughout)\s+the\s+(?:world|globe)\b|"
                    r"\bin\s+total\b|\baltogether\b|\boverall\b", re.I)
"""Words that say "all of them", no condition ("languages spoken around the world")."""
_LINK = re.compile(r"\s+(?:in|by|to|at|on|from|with|for|into)\s+(?:the\s+|a\s+|an\s+)?")
_NOT_TEXT = frozenset({"cheaper", "expensive", "order", "sorted", "sort", "alphabetical"})
"""Order words no rule placed: never a text to match."""


@dataclass(frozen=True, slots=True)
class _Reading:
    """The question with what covers its words (understood, or a name) and what was
    understood (a word may link to it)."""

    low: str
    covered: list[Span]
    understood: list[Span]


def _noise(r: _Reading, word: str, span: Span) -> bool:
    return len(word) < 2 or word in STOPWORDS


def _covered(r: _Reading, word: str, span: Span) -> bool:
    return overlaps_any(span, r.covered)


def _linking(r: _Reading, word: str, span: Span) -> bool:
    """A word followed by a preposition and then by something understood ("spoken *in
    Aruba*", "used *by* the countries"): the verb that links the two, no condition of its
    own."""
    m = _LINK.match(r.low, span[1])
    return m is not None and any(s[0] == m.end() for s in r.understood)


def _table_word(r: _Reading, word: str, span: Span) -> bool:
    """"the <model> table": right after something understood."""
    return word in ("table", "tables") and any(
        not r.low[s[1]:span[0]].strip() for s in r.understood if s[1] <= span[0])


def _order_word(r: _Reading, word: str, span: Span) -> bool:
    return ordering.SUPERLATIVE.fullmatch(word) is not None or word in _NOT_TEXT


NOT_LEFTOVER: tuple[Callable[[_Reading, str, Span], bool], ...] = (
    _noise, _covered, _linking, _table_word, _order_word)
"""Why a word of the question is not left over (any one is enough)."""


def leftover_words(q: Question, plan: Plan, *, fields: bool = True) -> list[str]:
    """Content words no extractor understood and no model name (nor, with ``fields``, a
    field name of the target) covers: as asked, distinct, in order."""
    names = every_span(q.models)
    covered = [*plan.used, *(m.span for m in q.fields if fields), *names,
               *(m.span() for m in _WHOLE.finditer(q.low))]
    reading = _Reading(q.low, covered, [s for s in [*plan.used, *names] if s[1] > s[0]])
    out = []
    for piece, start, end in _pieces(q.low, covered):
        word = piece.strip(".'’-")
        if not any(rule(reading, word, (start, end)) for rule in NOT_LEFTOVER):
            out.append(q.text[start:start + len(word)])
    return list(dict.fromkeys(out))


def _pieces(low: str, spans: list[Span]) -> list[tuple[str, int, int]]:
    """The question's words; a Chinese word partly understood ("今天天气": jieba's one
    word, 今天 read as a date) is cut to the parts left ("天气"), each a word of its own."""
    out = []
    for word, start, end in word_spans(low):
        inside = sorted(s for s in spans if overlaps((start, end), s))
        if not inside or not HAN_CHAR.search(word) or all(
                s[0] <= start and end <= s[1] for s in inside):
            out.append((word, start, end))
        else:
            out += _parts_left(low, start, end, inside)
    return out


def _parts_left(low: str, start: int, end: int,
                inside: list[Span]) -> list[tuple[str, int, int]]:
    """The parts of the word ``low[start:end]`` outside the spans ``inside`` (sorted)."""
    out = []
    at = start
    for a, b in inside:
        if a > at:
            out.append((low[at:a], at, a))
        at = max(at, b)
    if at < end:
        out.append((low[at:end], at, end))
    return out
