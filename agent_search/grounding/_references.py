"""A reference made ready for checking: its numbers, its names, its content words, and
its windows (each sentence and each pair of neighbouring sentences) for a local overlap.

A long reference shares many words with any sentence on its topic; the window a sentence
was taken from shares most of them. Windows come from a plain split on sentence ends:
they only bound the overlap, so an odd boundary costs nothing.
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from agent_search.grounding._claims import (
    _WORD,
    content_words,
    normalise_entity,
    reference_numbers,
)
from agent_search.grounding._numbers_zh import half_width
from agent_search.language import HAN_CHAR, Language, languages

CLAIM_ENDS = {"en": ";", "zh": "；"}
"""Clause ends that also end a claim in a reference, by language, beside its sentence
ends (:attr:`~agent_search.language.Language.sentence_ends`)."""
_BLOCK_BREAKS = (r"|\n[ \t]*\n\s*"
                 r"|\n(?=[ \t]*(?:[-*+][ \t]|\d{1,9}[.)][ \t]|#|>|\||```|~~~))")


@functools.lru_cache(maxsize=4)
def _sentence_end(known: tuple[Language, ...]) -> re.Pattern[str]:
    """Where a reference's sentences end: after a sentence end (or a claim end,
    :data:`CLAIM_ENDS`) of any of the ``known`` languages and the whitespace after it,
    straight after one of an unspaced language's, at a blank line, or before a line that
    starts a Markdown block (a list item, a heading, a quote, a table row, a fence). A
    single line break inside a paragraph is a soft break, as Markdown reads it: kb chunks
    keep their documents' lines, and a sentence wrapped over two lines is one sentence."""
    ends = {lang.name: lang.sentence_ends + CLAIM_ENDS.get(lang.name, "") for lang in known}
    every = "".join(dict.fromkeys("".join(ends.values())))
    unspaced = "".join(dict.fromkeys("".join(ends[lang.name] for lang in known
                                             if not lang.spaced)))
    pattern = rf"(?<=[{re.escape(every)}])\s+"
    if unspaced:
        pattern += rf"|(?<=[{re.escape(unspaced)}])"
    return re.compile(pattern + _BLOCK_BREAKS)
_PARTS = re.compile(r"[-'’/]")
_LATIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-]*")
MAX_REFERENCE_CHARS = 20_000
"""Only the first 20,000 characters of a reference are read: bounded work per request."""


@dataclass(slots=True)
class PreparedReference:
    citation_id: str
    text: str
    numbers: frozenset[float]
    words: frozenset[str]
    windows: list[str]
    window_words: list[frozenset[str]]
    window_numbers: list[frozenset[float]]
    _names: frozenset[str] | None = None

    @property
    def names(self) -> frozenset[str]:
        """Every word of the text as a name (:func:`_names`), read on first use: most
        references of a request are never asked for a name (a sentence with none, a
        Chinese name looked for as written)."""
        if self._names is None:
            self._names = _names(self.text)
        return self._names

    def has_name(self, entity: str) -> bool:
        norm = normalise_entity(entity)
        if not norm:
            return True
        if HAN_CHAR.search(entity):
            return entity in self.text
        return norm in self.names


_T = TypeVar("_T")


def prepare(citation_id: str, title: str, content: str) -> PreparedReference:
    text = f"{title}\n\n{content}"[:MAX_REFERENCE_CHARS] if title else content[
        :MAX_REFERENCE_CHARS]
    sentences = [s.strip() for s in _sentence_end(languages()).split(text)
                 if s and s.strip()]
    windows = _paired(sentences, lambda a, b: f"{a} {b}")
    window_words = _paired([frozenset(content_words(s)) for s in sentences], operator.or_)
    words = frozenset().union(*window_words)
    numbers = [reference_numbers(s) for s in sentences]
    window_numbers = _paired(numbers, operator.or_)
    # a number does not span a sentence end, so the text's are its sentences' together
    return PreparedReference(citation_id, text, frozenset().union(*numbers), words, windows,
                             window_words, window_numbers)


def _paired(single: list[_T], join: Callable[[_T, _T], _T]) -> list[_T]:
    """A reference's windows: each sentence's (``single``), then each two neighbours'
    joined."""
    return single + [join(a, b) for a, b in itertools.pairwise(single)]


def _names(text: str) -> frozenset[str]:
    """Every word of ``text`` as a name, normalised, and the parts of a compound one
    (IL-6 holds IL and 6); the Latin words inside Chinese text too (东航MU5735航班 holds
    MU5735)."""
    names: set[str] = set()
    for word in set(_WORD.findall(text)) | set(_LATIN.findall(half_width(text))):
        names.add(normalise_entity(word))
        if not word.isalnum():
            names.update(normalise_entity(part) for part in _PARTS.split(word))
    return frozenset(names)
