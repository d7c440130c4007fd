"""English antonyms from WordNet, for the polarity check.

WordNet 3.0's antonym pairs (3,457: thick / thin, widen / narrow, advance / retreat,
agonist / antagonist, strong / weak...) and the irregular forms of their words (fell →
fall, thinner → thin) ship in ``_data/`` (derived by tools/wordnet_antonyms.py; licence
in ``_data/LICENSE-WordNet.txt``), 76 KB read on first use. A word is taken back to its
lemma as WordNet's morphy does: its irregular form, or a regular ending taken off
("thinned" → "thin", "weaker" → "weak", "narrows" → "narrow").
"""

from __future__ import annotations

import functools
from collections.abc import Container, Mapping
from importlib import resources

ENDINGS = (("ies", "y"), ("es", "e"), ("es", ""), ("s", ""), ("ed", "e"), ("ed", ""),
            ("ing", "e"), ("ing", ""), ("er", ""), ("er", "e"), ("est", ""), ("est", "e"),
            ("ier", "y"), ("iest", "y"), ("ied", "y"))
"""WordNet's detachment rules (nouns, verbs, adjectives together)."""


@functools.lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, frozenset[str]], dict[str, str]]:
    data = resources.files("agent_search.grounding") / "_data"
    pairs: dict[str, set[str]] = {}
    for line in (data / "antonyms.tsv").read_text(encoding="utf-8").splitlines():
        a, b = line.split("\t")
        pairs.setdefault(a, set()).add(b)
        pairs.setdefault(b, set()).add(a)
    forms = dict(line.split("\t") for line in
                 (data / "antonym_forms.tsv").read_text(encoding="utf-8").splitlines())
    return {w: frozenset(v) for w, v in pairs.items()}, forms


@functools.lru_cache(maxsize=8192)
def lemmas(word: str) -> frozenset[str]:
    """The lemmas of lower-cased ``word`` that have an antonym (none for most words)."""
    pairs, forms = _tables()
    return frozenset(lemmas_in(word, pairs, forms))


def lemmas_in(word: str, known: Container[str], forms: Mapping[str, str]) -> set[str]:
    """The lemmas of lower-cased ``word`` that ``known`` holds: the word itself, its
    irregular form's lemma (``forms``: "went" → "go"), and what WordNet's detachment
    rules leave of it (with a doubled last consonant undone). Both WordNet tables, the
    antonyms and the related words, look a word up this one way."""
    found = {word} if word in known else set()
    if word in forms:
        found.add(forms[word])
    for ending, replacement in ENDINGS:
        if word.endswith(ending) and len(word) > len(ending) + 2:
            base = word[: -len(ending)] + replacement
            found.update(b for b in (base, undoubled(base)) if b in known)
    return found


def undoubled(base: str) -> str:
    """"thinn" (of "thinned", "thinner") → "thin"."""
    return base[:-1] if len(base) > 3 and base[-1] == base[-2] else base


def antonyms(lemma_set: frozenset[str]) -> frozenset[str]:
    pairs, _ = _tables()
    return frozenset().union(*(pairs.get(lemma, frozenset()) for lemma in lemma_set))
