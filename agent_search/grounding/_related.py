"""English words a rewording may put for a word, from WordNet, for the word overlap.

A model that rewords its source changes words for words of the same meaning: "stays"
for "remains", "rain" for "rainfall", "inspection" for "inspectors", "roughly" for
"about". The overlap of a sentence with a reference window compares five-letter stems,
which sees none of these; here each word is taken back to its lemma (WordNet's morphy:
its irregular form, or a regular ending off) and given the stems of the lemmas WordNet
relates to it in their common senses — its synonyms, the adjectives it is similar to,
its derivations, and its hypernym low in the hierarchy (tools/wordnet_related.py says
which, and derives ``_data/related.tsv`` from WordNet 3.0; licence in
``_data/LICENSE-WordNet.txt``). Read on first use.

The lemma's own stem is among them, so an inflection the stem cut misses ("stays" for
"stay", "men" for "man") is aligned too.
"""

from __future__ import annotations

import functools
import math
from importlib import resources

from agent_search.grounding._antonyms import lemmas_in

STEM = 5
"""The stem length of the overlap (agent_search/grounding/_claims.py)."""


@functools.lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, str], dict[str, str]]:
    """lemma → its SemCor count and related stems (``count<TAB>stems``, split on use);
    irregular form → lemma."""
    data = resources.files("agent_search.grounding") / "_data"
    related = dict(line.split("\t", 1) for line in
                   (data / "related.tsv").read_text(encoding="utf-8").splitlines())
    forms = dict(line.split("\t", 1) for line in
                 (data / "related_forms.tsv").read_text(encoding="utf-8").splitlines())
    return related, forms


def load() -> None:
    """Read the tables now (a one-time cost that must not count against an answer)."""
    _tables()


@functools.lru_cache(maxsize=16384)
def related_stems(word: str) -> tuple[frozenset[str], float]:
    """The stems WordNet relates to lower-cased ``word`` (its lemma's included; empty
    for a word it does not know), and the word's weight in the overlap:
    ``1 / (1 + log10(1 + n))`` for a lemma SemCor tags ``n`` times — 1 for a rare word,
    about 0.3 for "become" or "bring", which a rewording adds or drops freely."""
    related, forms = _tables()
    lemmas = lemmas_in(word, related, forms)
    out: set[str] = set()
    count = 0
    for lemma in lemmas:
        tagged, stems = related[lemma].split("\t")
        out.add(lemma[:STEM])
        out.update(stems.split())
        count = max(count, int(tagged))
    return frozenset(out), 1 / (1 + math.log10(1 + count))
