"""Derived forms of values: "French" → France, "Asian" → Asia, "Bulgarian" → Bulgaria.

Demonyms come from the ``countryinfo`` package's country data (read once, lazily: about
70 ms); other derived forms from general English endings (-n, -an, -ian, -ean: "Asian" →
"Asia", "European" → "Europe", "Canadian" → "Canada"). The parser only uses a form when
it is a value the database holds.
"""

from __future__ import annotations

import importlib.resources
import json
from functools import lru_cache
from importlib.abc import Traversable
from typing import Any


@lru_cache(maxsize=1)
def _demonyms() -> dict[str, tuple[str, ...]]:
    """Lower-cased demonym → the country's names (common name and other spellings)."""
    out: dict[str, list[str]] = {}
    try:
        folder = importlib.resources.files("countryinfo") / "data"
        files = [f for f in folder.iterdir() if f.name.endswith(".json")]
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError):
        return {}
    for path in files:
        for demonym, names in _country(path):
            out.setdefault(demonym, []).extend(names)
    return {k: tuple(dict.fromkeys(v)) for k, v in out.items()}


def _country(path: Traversable) -> list[tuple[str, list[str]]]:
    """One country file's demonyms (lower-cased), each with the country's names; none
    when the file can't be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return _demonyms_of(data)


def _demonyms_of(data: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """A country record's demonyms (its comma-separated ``demonym``), each with its name
    and its alternative spellings longer than three letters (not codes)."""
    names = [data.get("name")] + [s for s in data.get("altSpellings") or [] if len(s) > 3]
    kept = [n for n in names if isinstance(n, str)]
    return [(d.strip().lower(), kept) for d in str(data.get("demonym") or "").split(",")
            if d.strip()]


@lru_cache(maxsize=4096)
def derived_values(word: str) -> tuple[str, ...]:
    """Lower-cased values ``word`` may stand for: the countries of a demonym, then the
    base forms of a word ending in -n / -an / -ian / -ean."""
    low = word.lower()
    out = [n.lower() for n in _demonyms().get(low, ())]
    if len(low) >= 5 and low.endswith("n"):
        out += [low[:-1], low[:-2] + "e", low[:-3] + "a", low[:-2], low[:-3]]
    return tuple(dict.fromkeys(f for f in out if len(f) >= 3))
