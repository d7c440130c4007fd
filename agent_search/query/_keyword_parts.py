"""The four kinds of keyword the extractor finds, collected in order of discovery."""

from __future__ import annotations

from dataclasses import dataclass, field


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
