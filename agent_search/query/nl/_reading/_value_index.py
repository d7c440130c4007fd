"""The known values of the fields a question about one target can reach, by lower-cased
text, for exact and fuzzy matching.

Building it for every model of a large schema set costs milliseconds (ten times the parse
itself), so indexes are cached, keyed by their content: the candidates' paths and, per
model, a serial number standing for the exact values it holds (:func:`value_serials`). Two
schema sets with the same values share an index; a schema whose values changed gets a new
serial, hence a new index. Nothing is keyed by object identity.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

from agent_search.language import HAN_CHAR, normal_form
from agent_search.query.dsl import ModelSchema
from agent_search.query.nl._lexicon import STOPWORDS, WORD
from agent_search.query.nl._reading._schema import Candidate, is_plain

MAX_VALUE_WORDS = 12
"""Longest value (in words) looked up exactly; longer ones only match as odd phrases."""
MIN_CHOICE_CHARS = 4
"""Shorter values are never fuzzy-matched."""
CACHED_INDEXES = 64
CACHED_SERIALS = 256


@dataclass(slots=True)
class ValueIndex:
    """Known values; each entry names its candidate by position in the candidate list."""

    exact: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    """Lower-cased value (starting and ending with a letter or digit) → (candidate, value)."""
    odd: list[tuple[int, str, str]] = field(default_factory=list)
    """(candidate, value, lower-cased value) for values with punctuation at either end."""
    max_words: int = 1
    choices: list[str] = field(default_factory=list)
    """Lower-cased values for fuzzy matching, ``owners[i]`` says whose ``choices[i]`` is."""
    owners: list[tuple[int, str]] = field(default_factory=list)
    cjk: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    """Lower-cased values holding Chinese characters (found inside a question by
    :func:`~agent_search.query.nl._rules._values_zh.chinese_matches`, not word by word)."""
    cjk_chars: int = 0
    """The longest of them, in characters."""
    code_fields: set[int] = field(default_factory=set)
    """Candidates whose every value is one or two characters long (男/女, 大/中/小): only
    their values may be a single Chinese character."""


class _LRU:
    """A small thread-safe least-recently-used map (parses may run in worker threads)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[Hashable, object] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> object | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: Hashable, value: object) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)


_SERIALS = _LRU(CACHED_SERIALS)
_NEXT_SERIAL = itertools.count(1)
_INDEXES = _LRU(CACHED_INDEXES)


def value_serials(schemas: Sequence[ModelSchema]) -> dict[str, int]:
    """Model id (lower-cased) → a serial number standing for the known values of every
    model of that id in ``schemas``: equal values, equal serial."""
    contents: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for s in schemas:
        contents.setdefault(s.id.lower(), []).extend(
            (f.name, tuple(f.values)) for f in s.fields if f.values)
    out = {}
    for model_id, content in contents.items():
        key = (model_id, tuple(content))
        serial = _SERIALS.get(key)
        if not isinstance(serial, int):
            serial = next(_NEXT_SERIAL)
            _SERIALS.put(key, serial)
        out[model_id] = serial
    return out


def value_index(cands: Sequence[Candidate], serials: Mapping[str, int]) -> ValueIndex:
    """The index of the plain candidates' known values (cached by content, see module)."""
    key = tuple((i, c.path, is_plain(c), serials.get(c.schema.id.lower(), 0))
                for i, c in enumerate(cands) if c.field.values)
    cached = _INDEXES.get(key)
    if isinstance(cached, ValueIndex):
        return cached
    index = build_index(cands)
    if all(part[3] for part in key):  # every model's values stood for by a serial
        _INDEXES.put(key, index)
    return index


def build_index(cands: Sequence[Candidate]) -> ValueIndex:
    """Known values of the plain candidates; stopwords and values shorter than two
    characters are left out (but single Chinese characters of a field of such short
    codes: :attr:`ValueIndex.code_fields`)."""
    index = ValueIndex()
    for i, cand in enumerate(cands):
        if not cand.field.values or not is_plain(cand):
            continue
        if all(len(v.strip()) <= 2 for v in cand.field.values):
            index.code_fields.add(i)
        for value in cand.field.values:
            _add_value(index, i, value)
    index.max_words = min(index.max_words, MAX_VALUE_WORDS)
    return index


def _add_value(index: ValueIndex, i: int, value: str) -> None:
    vlow = normal_form(value)  # "ＡＢＣ耳机" is found as "abc耳机", "訂單" as "订单"
    if vlow in STOPWORDS or not vlow.strip():
        return
    if HAN_CHAR.search(vlow):
        _add_chinese(index, i, value, vlow)
    elif len(vlow) >= 2:
        _add_words(index, i, value, vlow)


def _add_chinese(index: ValueIndex, i: int, value: str, vlow: str) -> None:
    """A Chinese value, found within the question's characters (one character only for
    a code field's)."""
    if len(vlow) >= 2 or i in index.code_fields:
        index.cjk.setdefault(vlow, []).append((i, value))
        index.cjk_chars = max(index.cjk_chars, len(vlow))


def _add_words(index: ValueIndex, i: int, value: str, vlow: str) -> None:
    """A value of words: looked up exactly when it starts and ends with a letter or
    digit, else kept apart (punctuation at an end); a choice for fuzzy matching when
    long enough."""
    if vlow[0].isalnum() and vlow[-1].isalnum():
        index.exact.setdefault(vlow, []).append((i, value))
        index.max_words = max(index.max_words, len(WORD.findall(vlow)))
    else:
        index.odd.append((i, value, vlow))
    if len(value) >= MIN_CHOICE_CHARS:
        index.choices.append(vlow)
        index.owners.append((i, value))
