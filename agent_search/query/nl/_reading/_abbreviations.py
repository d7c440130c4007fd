"""Column names written in abbreviations ("acc_bal", "cust_name", "apt_type_code",
"dst_ap") said in full in the question ("account balance", "customer name", "apartment
type code", "destination airport").

No list of abbreviations: a word of the name abbreviates a word of the question when its
letters say so — the start of the word ("acc" of "account", "cust" of "customer"), or its
consonants in order after the same first letter ("dst" of "destination", "apt" of
"apartment"). A single short word guesses too much ("age" is the start of "agent",
"car" of "career"), so only a name of two words or more is read, and only as a whole: every
word of the name in order, one question word each, the others said as they are. A name
of one word is read as initials only ("dob": "date of birth", "gdp": "gross domestic
product"), three letters or more, one a word.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_search.query.nl._lexicon import STOPWORDS, stem

Span = tuple[int, int]

_VOWELS = frozenset("aeiou")
MAX_PREFIX = 4
"""A start of a word this long or shorter is an abbreviation ("cust"); a longer one is
a word of its own ("count" of "country")."""
MIN_GAIN = 2
"""The question's word is this many letters longer than the abbreviation or more (not a
plural or a past tense: "type" / "typed")."""


def abbreviates(short: str, word: str) -> bool:
    """``short`` is an abbreviation of ``word``: its start ("acc" → "account"), or the
    same first letter and consonants only after it, in order ("dst" → "destination")."""
    if not (len(short) >= 2 and len(word) >= len(short) + MIN_GAIN) or short[0] != word[0]:
        return False
    return _start_of(short, word) or _consonants_of(short, word)


def _start_of(short: str, word: str) -> bool:
    """``short`` (three letters to :data:`MAX_PREFIX`) starts ``word``."""
    return 3 <= len(short) <= MAX_PREFIX and word.startswith(short)


def _consonants_of(short: str, word: str) -> bool:
    """``short``'s letters after the first are consonants of ``word``'s rest, in order."""
    if any(ch in _VOWELS for ch in short[1:]) or not short.isalpha():
        return False
    rest = iter(word[1:])
    return all(ch in rest for ch in short[1:])


def _same(name_word: str, word: str) -> bool:
    return name_word == word or stem(name_word) == stem(word)


def abbreviated_spans(words: Sequence[tuple[str, int, int]], name: str) -> list[Span]:
    """Where the question says the name ``name`` (its words, lower-cased, space
    separated) with one or more of its words in full: runs of as many question words,
    each the name's word itself or written out (:func:`abbreviates`), at least one written
    out. Empty for a name of one word or one with a stopword abbreviated."""
    parts = name.split()
    if len(parts) < 2:
        return []
    runs = (words[i:i + len(parts)] for i in range(len(words) - len(parts) + 1)
            if words[i][0][:1] == parts[0][:1])  # every reading starts with the same letter
    return [(run[0][1], run[-1][2]) for run in runs if _written_out(parts, run)]


def _written_out(parts: list[str], run: Sequence[tuple[str, int, int]]) -> bool:
    """Each question word of ``run`` is its part of the name or the part written out (no
    stopword either side), and one at least is written out."""
    spelled = 0
    for part, (word, _, _) in zip(parts, run, strict=True):
        if _same(part, word):
            continue
        if part in STOPWORDS or word in STOPWORDS or not abbreviates(part, word):
            return False
        spelled += 1
    return spelled > 0


MIN_INITIALS = 3
"""Initials this many or more: two letters match too many pairs of words."""
MAX_INITIALS = 6


def initials_spans(words: Sequence[tuple[str, int, int]], name: str) -> list[Span]:
    """Where the question writes out a name of one word that is initials ("dob" → "date
    of birth", "omim" → "online mendelian inheritance in man"): a run of words whose first
    letters spell it, with or without its function words ("gdp" → "gross domestic
    product"), starting and ending on a word that is not one."""
    if not _may_be_initials(name, words):
        return []
    out: list[Span] = []
    for i, (first, start, _) in enumerate(words):
        if first[0] != name[0] or first in STOPWORDS:
            continue
        out += [(start, words[j][2])
                for j in range(i + MIN_INITIALS - 1, min(len(words), i + 2 * len(name)))
                if _spells(name, [w for w, _, _ in words[i:j + 1]])]
    return out


def _spells(name: str, run: list[str]) -> bool:
    """The first letters of the words ``run``, with or without its function words, are
    ``name`` (not itself one of them), the last word not a function word."""
    if run[-1] in STOPWORDS or name in run:
        return False
    return name in ("".join(w[0] for w in run),
                    "".join(w[0] for w in run if w not in STOPWORDS))


def _may_be_initials(name: str, words: Sequence[tuple[str, int, int]]) -> bool:
    """``name`` is one word of letters, as long as initials are, each letter a word's
    first."""
    return " " not in name and MIN_INITIALS <= len(name) <= MAX_INITIALS and \
        name.isalpha() and set(name) <= {w[0] for w, _, _ in words}


def written_out(words: Sequence[tuple[str, int, int]], name: str) -> list[Span]:
    """Where the question (its :func:`~agent_search.query.nl._lexicon.word_spans`) writes
    out the field name ``name`` (its words, space separated): :func:`abbreviated_spans`
    and :func:`initials_spans`."""
    return [*abbreviated_spans(words, name), *initials_spans(words, name)]
