"""The four kinds of keyword the extractor finds, collected in order of discovery."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

MAX_PHRASE_WORDS = 4
"""Most words of one subject phrase: a longer run of content words makes several."""


@dataclass(slots=True)
class KeywordParts:
    """Quoted phrases (kept verbatim), subject phrases (runs of content words),
    constraints (a comparator with its number: "under $100") and qualifiers ("best")."""

    quoted: list[str] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    qualifiers: list[str] = field(default_factory=list)

    def extend(self, other: KeywordParts) -> None:
        self.quoted += other.quoted
        self.phrases += other.phrases
        self.constraints += other.constraints
        self.qualifiers += other.qualifiers

    def ordered(self) -> list[str]:
        """Most telling first: what the user quoted, what they search for, its limits,
        then how they rank it. Case-insensitive duplicates dropped."""
        seen: set[str] = set()
        out: list[str] = []
        for kw in (*self.quoted, *self.phrases, *self.constraints, *self.qualifiers):
            key = kw.casefold()
            if kw and key not in seen:
                seen.add(key)
                out.append(kw)
        return out


@dataclass(slots=True)
class PhraseRun:
    """The run of content words being read, in any language: a break (a stop word,
    punctuation, a constraint, a qualifier) ends it, and it becomes subject phrases of at
    most :data:`MAX_PHRASE_WORDS` words each, joined by ``join`` (spaces in English; none
    between Chinese words)."""

    parts: KeywordParts
    join: Callable[[list[str]], str] = " ".join
    words: list[str] = field(default_factory=list)

    def add(self, word: str) -> None:
        self.words.append(word)

    def end(self) -> None:
        """The run so far as subject phrases; a new run starts."""
        while self.words:
            self.parts.phrases.append(self.join(self.words[:MAX_PHRASE_WORDS]))
            del self.words[:MAX_PHRASE_WORDS]
