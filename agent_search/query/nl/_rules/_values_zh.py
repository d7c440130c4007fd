"""Known values written in Chinese, found inside a question that has no spaces.

"北京的客户有多少" is one run of characters, so values cannot be looked up word by word.
Instead the question is cut into words by jieba (:func:`~agent_search.language.
segments`) and every stretch of whole words (at most as long as the longest Chinese value)
is looked up in the index: a value must start where a word starts and end where one ends,
so "京东" is not read in "北京东路" (北京 | 东路). One cut is allowed: a value that is a
word but for its last character ("南京" in "南京市", "北京" in "北京人"), a suffix jieba
wrote together with it.

A value of one character stands for too little to be found by substring; it is read only
when all of these hold:

- its field holds nothing but such short codes (every value one or two characters:
  男/女, 大/中/小; see :attr:`~agent_search.query.nl._reading._value_index.ValueIndex.code_fields`);
- jieba reads it as a word of its own there ("男客户": 男 | 客户, but not 大 in "最大");
- it is not a common word of the language: jieba's dictionary counts it as less than
  :data:`MAX_CHAR_SHARE` of all words (是, 有, 中, 上, 大 are more).

Overlaps are left to the caller, which keeps the longest match ("北京烤鸭" over "北京").
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence

from agent_search.language import HAN_CHAR, normal_form, segments, word_share
from agent_search.query.dsl import ModelSchema
from agent_search.query.nl._plan import Question
from agent_search.query.nl._reading._schema import Span, spans_outside
from agent_search.query.nl._reading._value_index import ValueIndex

MAX_CHAR_SHARE = 1e-3
"""A single character that is more than one word in a thousand of the text jieba's
dictionary was counted on is a common word (是 1.3%, 中 0.4%, 大 0.24%), not a value;
男 (0.01%) and 女 (0.05%) are less common and may be one."""


def chinese_matches(q: Question, index: ValueIndex) -> list[tuple[Span, int, str]]:
    """(span, candidate position, value) of each Chinese value found in the question: runs
    of jieba's words as long as the longest value (:func:`_runs`)."""
    if not index.cjk or not q.chinese:
        return []
    out: list[tuple[Span, int, str]] = []
    for (start, stop), whole_word in _runs(segments(q.low), index.cjk_chars):
        for pos, value in index.cjk.get(q.low[start:stop], ()):
            if stop - start > 1 or _single_ok(q.low[start:stop], pos, index, whole_word):
                out.append(((start, stop), pos, value))
    return out


def _runs(words: Sequence[Span], longest: int) -> list[tuple[Span, bool]]:
    """Spans of runs of consecutive words up to ``longest`` characters, and a word of
    three or more without its last character ("南京" in "南京市": one suffix character);
    with whether the span ends where its first word ends."""
    out: list[tuple[Span, bool]] = []
    for a, (start, first_end) in enumerate(words):
        for b in range(a, len(words)):
            end = words[b][1]
            if end - start > longest + 1:
                break
            ends = [end, end - 1] if b == a and end - start >= 3 else [end]
            out += [((start, stop), stop == first_end) for stop in ends
                    if stop - start <= longest]
    return out


def _single_ok(char: str, pos: int, index: ValueIndex, whole_word: bool) -> bool:
    """A one-character value may be read here (see module)."""
    return whole_word and pos in index.code_fields and word_share(char) < MAX_CHAR_SHARE


def names_outside_values(low: str, schemas: Sequence[ModelSchema],
                         mentions: Mapping[str, list[Span]]) -> dict[str, list[Span]]:
    """``mentions`` without the model names written inside a longer Chinese value
    ("产品" inside the category "电子产品" names no model: it is part of the value)."""
    if not HAN_CHAR.search(low):
        return dict(mentions)
    inside = _chinese_values_at(low, schemas)
    return spans_outside(mentions, inside)


def _chinese_values_at(low: str, schemas: Sequence[ModelSchema]) -> list[Span]:
    """Where known values of two or more characters, written in Chinese, stand."""
    values = {v for value in known_values(schemas)
              if len(v := normal_form(value)) >= 2 and HAN_CHAR.search(v)}
    return [(m.start(), m.start() + len(v)) for v in values
            for m in re.finditer(f"(?={re.escape(v)})", low)]


def known_values(schemas: Sequence[ModelSchema]) -> Iterator[str]:
    """Every known value of every field of ``schemas``, as stored."""
    for schema in schemas:
        for fld in schema.fields:
            yield from fld.values
