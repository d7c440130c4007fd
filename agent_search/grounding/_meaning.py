"""English words aligned by meaning with the embedding model, where neither their stems
nor WordNet align them.

A model that rewords its source writes words WordNet does not relate to the source's in
any of its senses ("ashore" for "landfall", "physician" in a text on "doctors" is
related, "inland flooding" for "rivers crested" is not): the overlap of
:mod:`agent_search.grounding._ground` then holds too little of the sentence's weight and
flags a faithful sentence. Here the sentence's words that the window it is closest to
does not hold (themselves or a related word) are embedded one by one with the offline
MiniLM the project ships (:func:`agent_search.embedding.shipped_embedder`, as the query
parser reads a question's words against a schema's names), and so are the window's words
the sentence does not hold; a sentence word whose nearest window word is at a cosine of
:data:`MEANING` or more counts as held, at its weight.

Only a borderline sentence is read this way — its numbers and names held, and a cited
window holding a share of its words between ``MEANING_FROM`` and ``coverage`` — so a
sentence whose words match costs nothing more. The model is read from the data home
given (:func:`shipped`) and looked up per call, never held here: the embedding package
keeps a bounded number loaded, and a process that grounds for many homes (a test suite)
must not keep one per home. The vectors of words are kept in one bounded cache for the
process (:data:`_SHIPPED_VECTORS`). A word is never aligned with one that says its
opposite (a WordNet antonym, a direction word of the other pole, the same word with a
negating prefix): MiniLM puts "safe" and "unsafe" at 0.81, and such a pair is a
contradiction to flag, not a rewording.
Without the model (not installed, failed to load) the check is lexical, as before.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agent_search.embedding import VectorCache
from agent_search.grounding._antonyms import antonyms, lemmas
from agent_search.grounding._polarity import pole_en_word
from agent_search.grounding._polarity_words import NEGATING_PREFIXES_EN

Embed = Callable[[Sequence[str]], NDArray[np.float32]]

MEANING = 0.58
"""Cosine (all-MiniLM-L6-v2, one word each side) at which a word counts as aligned:
chosen on the tune half of bench/grounding_natural.json and of the templated set
(docs/grounding.md). Unrelated words sit near 0.4 ("car" / "banana" 0.39), a close word
above 0.6 ("rain" / "rainfall" 0.80, "hurricane" / "storm" 0.69)."""
MAX_WORDS = 40
"""Words embedded for one sentence at most (its own and its window's): a bound on cost."""
_CACHE = 8192


class Meanings:
    """Word vectors from ``embed`` (texts → unit rows), kept in ``vectors`` (by default a
    cache of its own)."""

    def __init__(self, embed: Embed, vectors: VectorCache | None = None) -> None:
        self._embed = embed
        self._vectors = vectors if vectors is not None else VectorCache(_CACHE)

    def vectors(self, words: Sequence[str]) -> NDArray[np.float32]:
        """One unit row per word, in order."""
        return self._vectors.get(self._embed, words)

    def aligned(self, own: Sequence[str], others: Sequence[str]) -> list[bool]:
        """For each word of ``own``, whether a word of ``others`` means about the same
        (:data:`MEANING`) and not its opposite."""
        if not own or not others:
            return [False] * len(own)
        vectors = self.vectors([*own, *others])
        similarity = vectors[: len(own)] @ vectors[len(own):].T
        out = []
        for i, word in enumerate(own):
            order = np.argsort(-similarity[i])
            out.append(any(similarity[i, j] >= MEANING and not opposed(word, others[j])
                           for j in order[:3]))
        return out


def opposed(a: str, b: str) -> bool:
    """Whether lower-cased words ``a`` and ``b`` say opposite things: WordNet antonyms,
    direction words of opposite poles of one axis ("shrinks" / "enlarges"), or one is the
    other with a negating prefix ("unsafe" / "safe")."""
    if lemmas(a) & antonyms(lemmas(b)):
        return True
    pa, pb = pole_en_word(a), pole_en_word(b)
    if pa is not None and pb is not None and pa[0] == pb[0] and pa[1] != pb[1]:
        return True
    return any(long.startswith(p) and long[len(p):] in (short, short.rstrip("s"))
               for long, short in ((a, b), (b, a)) for p in NEGATING_PREFIXES_EN)


_SHIPPED_VECTORS = VectorCache(_CACHE)
"""The shipped model's word vectors, one cache for the process, whatever data home the
model is loaded from (the same model file gives the same vectors)."""
_HOMES: OrderedDict[str, weakref.ref[Any] | None] = OrderedDict()
"""Per data home, the embedder warmed there (a weak reference: the embedding package
keeps a bounded number of models loaded, and this must not keep more), or None when the
model could not be loaded there (not tried again)."""
_MAX_HOMES = 64
_HOMES_LOCK = threading.Lock()


def shipped(home: Path | str | None = None) -> Meanings | None:
    """The offline MiniLM as shipped, read from data home ``home`` (the default home
    when None), loaded now if it is not yet; None when it cannot be (the check is then
    lexical). Its embedder is looked up per call
    (:func:`agent_search.embedding.shipped_embedder`), not held: only the word vectors
    are kept, in one cache for the process."""
    from agent_search._locations import default_home
    from agent_search.embedding import shipped_embedder

    where = Path(home) if home is not None else default_home()
    key = str(where)
    known, warmed = _recall(key)
    if known and warmed is None:
        return None
    try:
        embedder = shipped_embedder(where)
        if warmed is None or warmed() is not embedder:  # not loaded yet, or dropped since
            embedder.embed(["warm"])
        found: weakref.ref[Any] | None = weakref.ref(embedder)
    except Exception:  # no model installed, or it failed to load: lexical only
        found = None
    _remember(key, found)
    if found is None:
        return None
    return Meanings(lambda texts: shipped_embedder(where).embed(texts), _SHIPPED_VECTORS)


def _recall(key: str) -> tuple[bool, weakref.ref[Any] | None]:
    """Whether data home ``key`` was tried, and its embedder then (None: it failed),
    marked as the most recently used."""
    with _HOMES_LOCK:
        known = key in _HOMES
        warmed = _HOMES.get(key)
        if known:
            _HOMES.move_to_end(key)
    return known, warmed


def _remember(key: str, found: weakref.ref[Any] | None) -> None:
    """Keep what loading the model at data home ``key`` gave, the least recently used
    home dropped past :data:`_MAX_HOMES`."""
    with _HOMES_LOCK:
        _HOMES[key] = found
        _HOMES.move_to_end(key)
        while len(_HOMES) > _MAX_HOMES:
            _HOMES.popitem(last=False)
