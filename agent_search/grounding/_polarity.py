"""What a sentence asserts, beyond the words it shares with a reference: whether it
negates them, and which way it says they go.

Word overlap sees the same words in "X is associated with Y" and "X is not associated
with Y"; stop words (not, no, more, after) are out of it by design. So when a reference
window supports a sentence in words, numbers and names, both are read once more:

- **negation** — a cue (not, no, never, without, fails to, lacks, absence of, n't;
  不, 没有, 未, 无…) negates the next few content words of its clause (its scope). When
  one text negates words the other states and never negates, they say opposite things
  ("the reference says the opposite"). The scope must share two of its words with the
  other text (or its only one), so "A reduced B but not C" does not contradict "A
  reduced B". A negating prefix counts as a cue: "unaffected" against "affected",
  "non-smokers" against "smokers", 不支持 against 支持.
- **direction** — a word on an axis (amount: increase / decrease, higher / lower, more /
  less; time: before / after; sign: positive / negative; valence: risk / protection;
  升高 / 降低, 增加 / 减少, 之前 / 之后…, :mod:`agent_search.grounding._polarity_words`)
  with the content words around it (and the words WordNet relates to them: "quitting"
  and "quit"). A sentence whose direction word has only opposite-pole words of the same
  axis around the same content words in the reference (most of all, said of the same
  word) says the opposite. "reduced the risk" is a benefit (an amount word turns the
  valence word after it, or said of it: "the benefit is smaller"), a direction word
  under a negation is not compared ("did not increase" is no "decrease"), nor "high" or
  "low" naming a kind ("high blood pressure": WordNet's antonyms still set them apart).

It reads English and Chinese, each by its rules (:data:`RULES`, by the language the
text is classified as). :func:`unreadable` says when a sentence cannot be read
(another language, or too long for a clause-level reading to mean anything): a check
that cannot decide must not pass the sentence as supported.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from agent_search.grounding._antonyms import antonyms, lemmas
from agent_search.grounding._claims import _STOP, stem
from agent_search.grounding._polarity_words import (
    ATTRIBUTIVE_EN,
    CLAUSE_BREAKS_EN,
    CLAUSE_BREAKS_ZH,
    COUNT_ADJECTIVES_EN,
    DIRECTIONS_EN,
    DIRECTIONS_ZH,
    NEGATING_HEADS_ZH,
    NEGATING_PREFIXES_EN,
    NEGATION_EN,
    NEGATION_ZH,
    NOMINAL_NEGATION_EN,
    NOT_NEGATION_EN,
    NOT_NEGATION_ZH,
    SHORT_STEM_PREFIXES_EN,
)
from agent_search.grounding._related import related_stems
from agent_search.language import (
    CHINESE,
    ENGLISH,
    HAN_CHAR,
    HANGUL,
    HANGUL_JAMO,
    KANA_LETTERS,
    classify,
    jieba_tokenizer,
)

SCOPE = 3
"""Content words after a negation cue that it negates (within its clause)."""
CONTEXT = 4
"""Tokens either side of a direction word whose content words say what it is about."""
MAX_TOKENS = 80
"""Longest sentence (words, or Chinese words) read: beyond, clauses nest too deep for
a reading by clause to say what the sentence asserts."""

_TOKEN_EN = re.compile(r"[A-Za-z][A-Za-z'’\-]*|\d+(?:\.\d+)?|[.,;:!?()\[\]]")
_BREAK = frozenset("".join(lang.sentence_ends + lang.clause_ends for lang in (ENGLISH, CHINESE))
                   + "()[]（）")
"""Where a clause ends: the sentence and clause ends of both languages, and brackets."""
_BREAK_ZH = _BREAK - {".", ","}
"""In Chinese text an ASCII point or comma is inside a number (4.3万, 1,200)."""
_OTHER_SCRIPT = re.compile(r"[\u0370-\u03ff\u0400-\u04ff\u0590-\u06ff\u0900-\u0dff"
                           r"\u0e00-\u0eff" + KANA_LETTERS + HANGUL_JAMO + HANGUL + "]")
"""Greek, Cyrillic, Hebrew, Arabic, Indic, Thai/Lao, kana (not its middle dot ・, which
Chinese writes in foreign names), Hangul: scripts not read. A few such letters (γ-tubulin,
α) are names and symbols; a fifth of the letters is another language."""
_FOREIGN_LATIN = frozenset((
    "der", "das", "und", "nicht", "ist", "mit", "von", "ein", "eine", "sich", "auch", "wird",
    "le", "la", "les", "et", "est", "une", "des", "du", "pas", "que", "qui", "sont", "dans",
    "avec", "el", "los", "las", "es", "una", "del", "por", "para", "se", "su", "os", "um",
    "não", "são", "il", "gli", "della", "che", "non", "è", "sono", "het", "een", "niet",
    "zijn", "och", "att", "är", "inte"))
"""Function words of other languages written in Latin letters (none an English word)."""


@dataclass(frozen=True, slots=True)
class _Cue:
    scope: frozenset[str]
    start: int
    end: int
    head: str = ""
    """The first word of the scope: what the cue negates (the verb of "did not exist")."""
    nominal: bool = False
    """A cue that negates the thing named next ("lacking X", "without X")."""
    numbers: frozenset[str] = frozenset()
    """The numbers its clause states, as written (:func:`_clause_numbers`)."""


@dataclass(frozen=True, slots=True)
class _Direction:
    axis: str
    pole: int
    context: frozenset[str]
    start: int
    end: int
    near: tuple[str, ...] = ()
    """The words of ``context`` as written, lower-cased (:func:`_widened`)."""
    heads: frozenset[str] = frozenset()
    """The content words next to it, one each side in its clause: what it is said of
    ("a bigger effect", "blood pressure drop")."""


@dataclass(frozen=True, slots=True)
class _Opposable:
    """A word that has antonyms (WordNet), with its lemmas and the words around it."""

    lemmas: frozenset[str]
    context: frozenset[str]
    start: int
    end: int
    near: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Reading:
    rules: _Rules = field(compare=False)
    """The rules it was read by."""
    text: str
    words: frozenset[str]
    full: frozenset[str]
    """The content words as written (lower-cased), for negating prefixes."""
    negated: frozenset[str]
    cues: tuple[_Cue, ...]
    prefixed: tuple[tuple[str, str, int, int], ...]
    """(negated word, the whole word, start, end) of each word with a negating prefix,
    words as written."""
    directions: tuple[_Direction, ...]
    opposable: tuple[_Opposable, ...] = ()
    """Its words that have antonyms, not under a negation (English)."""
    lemmas: frozenset[str] = frozenset()
    """The lemmas of all of them."""
    plain: frozenset[str] = frozenset()
    """Its content words stated outside any negation's reach."""


@dataclass(frozen=True, slots=True)
class _Token:
    text: str      # lower-cased
    key: str       # what it is compared by ("" for a break or a function word)
    start: int
    end: int
    brk: bool


def _tokens_en(text: str) -> list[_Token]:
    out = []
    for m in _TOKEN_EN.finditer(text):
        low = m.group(0).lower().replace("’", "'").removesuffix("'s").rstrip("'-")
        brk = low in _BREAK or low in CLAUSE_BREAKS_EN
        content = not brk and low not in _STOP and len(low) > 1 and not low[0].isdigit()
        out.append(_Token(low, stem(low) if content else "", m.start(), m.end(), brk))
    return out


def _tokens_zh(text: str) -> list[_Token]:
    out, pos = [], 0
    # without the HMM for words not in the dictionary: cues and direction words are in
    # it, and the HMM is most of jieba's time
    for word in jieba_tokenizer().lcut(text, HMM=False):
        start, pos = pos, pos + len(word)
        w = word.strip().lower()
        if not w:
            continue
        brk = w in _BREAK_ZH or w in CLAUSE_BREAKS_ZH
        content = not brk and w not in CHINESE.stopwords and any(c.isalnum() for c in w)
        out.append(_Token(w, (stem(w) if w.isascii() else w) if content else "", start, pos,
                          brk))
    return out


def _is_cue_zh(tokens: list[_Token], i: int) -> bool:
    return tokens[i].text in NEGATION_ZH


_NO_LONGER = ("no", "longer")


def _is_cue_en(tokens: list[_Token], i: int) -> bool:
    """Whether the token at ``i`` negates what follows. In "no longer" the cue is
    "longer" (it negates the clause after it, as "not" does), not "no" (which negates
    the one thing named next)."""
    t = tokens[i].text
    previous = tokens[i - 1].text if i else ""
    following = tokens[i + 1].text if i + 1 < len(tokens) else ""
    if _NO_LONGER in ((t, following), (previous, t)):
        return t == "longer"
    if (t, following) in NOT_NEGATION_EN or (previous, t) in NOT_NEGATION_EN:
        return False
    if t in COUNT_ADJECTIVES_EN and _plural(following):
        return False
    return t in NEGATION_EN or t.endswith("n't")


def _plural(word: str) -> bool:
    """Whether an English word reads as a plural noun ("businesses", "cells"; not
    "progress", "success", "analysis")."""
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "is", "us"))


def _scope(tokens: list[_Token], i: int, size: int) -> tuple[list[str], int]:
    """The content words a cue at ``i`` negates (``size`` at most), and where its scope
    ends."""
    scope: list[str] = []
    end = tokens[i].end
    for t in tokens[i + 1:]:
        if t.brk or len(scope) >= size:
            break
        if t.key:
            scope.append(t.key)
            end = t.end
    return scope, end


def _key(word: str) -> str:
    return stem(word) if word.isascii() else word


def _prefixed_zh(token: _Token) -> str | None:
    """The word a negating head negates (不支持 → 支持), if any."""
    w = token.text
    if len(w) >= 2 and w[0] in NEGATING_HEADS_ZH and w not in NOT_NEGATION_ZH \
            and w not in NEGATION_ZH:
        return w[1:]
    return None


def _prefixed_en(token: _Token) -> str | None:
    """The word a negating prefix negates ("unaffected" → "affected"), if any: only a
    content word has one."""
    w = token.text
    if not token.key:
        return None
    for prefix in NEGATING_PREFIXES_EN:
        rest = w[len(prefix):]
        shortest = 3 if prefix in SHORT_STEM_PREFIXES_EN else 5
        if w.startswith(prefix) and len(rest) >= shortest and rest[0].isalpha():
            return rest
    return None


def _index_en() -> tuple[dict[str, tuple[str, int]], dict[str, tuple[str, int]]]:
    """The English direction words as whole words and as prefixes (five letters or more,
    or ending in a hyphen), each to its (axis, pole)."""
    whole: dict[str, tuple[str, int]] = {}
    prefixes: dict[str, tuple[str, int]] = {}
    for axis, poles in DIRECTIONS_EN.items():
        for pole, entries in enumerate(poles):
            for e in entries:
                (prefixes if len(e) >= 5 or e[-1] == "-" else whole)[e] = (axis, pole)
    return whole, prefixes


_WHOLE_EN, _PREFIX_EN = _index_en()
_PREFIX_LENGTHS = sorted({len(p) for p in _PREFIX_EN})


def _pole_en(word: str) -> tuple[str, int] | None:
    found = _WHOLE_EN.get(word)
    if found is None:
        found = next((_PREFIX_EN[word[:n]] for n in _PREFIX_LENGTHS
                      if n <= len(word) and word[:n] in _PREFIX_EN), None)
    return found


def pole_en_word(word: str) -> tuple[str, int] | None:
    """The pole of an English token: a hyphenated word not listed whole by its first part
    ("up-regulated" is listed, "lower-than-expected" is "lower")."""
    found = _pole_en(word)
    if found is None and "-" in word[1:]:
        found = _pole_en(word.split("-")[0])
    return found


def _pole_zh(word: str) -> tuple[str, int] | None:
    for axis, poles in DIRECTIONS_ZH.items():
        for pole, entries in enumerate(poles):
            if word in entries:
                return axis, pole
    return None


def _clause_context(tokens: list[_Token], i: int) -> tuple[frozenset[str], tuple[str, ...]]:
    """Content words within :data:`CONTEXT` tokens of ``i``, in its clause, but the
    word at ``i``; and the same as written (to be widened only when compared:
    :func:`_widened`)."""
    near = [t for step in (-1, 1) for t in _clause_side(tokens, i, step, CONTEXT)]
    context = frozenset(t.key for t in near if t.key) - {tokens[i].key}
    return context, tuple(sorted({t.text for t in near if t.key and t.text.isascii()}))


def _heads(tokens: list[_Token], i: int) -> frozenset[str]:
    """The first content word each side of ``i`` in its clause."""
    firsts = (next((t.key for t in _clause_side(tokens, i, step) if t.key), "")
              for step in (-1, 1))
    return frozenset(key for key in firsts if key)


def _clause_side(tokens: list[_Token], i: int, step: int, reach: int | None = None
                 ) -> Iterator[_Token]:
    """The tokens of ``i``'s clause on one side of it (``step`` -1: before, 1: after),
    nearest first, at most ``reach`` away."""
    j = i + step
    while 0 <= j < len(tokens) and not tokens[j].brk and (reach is None
                                                         or abs(j - i) <= reach):
        yield tokens[j]
        j += step


@functools.lru_cache(maxsize=4096)
def _widened(near: tuple[str, ...]) -> frozenset[str]:
    """The stems WordNet relates to English words (their lemmas' among them): a
    rewording puts "quitting" for "quit", "gain" for "benefit" around the same direction
    word, and the two must still be seen to speak of the same thing. Read only when two
    contexts are compared: most words read never are."""
    return frozenset().union(*(related_stems(word)[0] for word in near))


def _shared(a_context: frozenset[str], a_near: tuple[str, ...], b_context: frozenset[str],
            b_near: tuple[str, ...]) -> int:
    """How many words two contexts share, a word counting where one side's related
    words hold the other's."""
    return max(len(a_context & (b_context | _widened(b_near))),
               len(b_context & (a_context | _widened(a_near))))


def _valence(poles: list[tuple[str, int] | None], tokens: list[_Token], i: int, pole: int
             ) -> int | None:
    """The pole of a valence word at ``i`` as the words just before it turn it: "reduced
    the risk" is a benefit, "increased the risk" a harm; "protects against the risk" is
    a benefit (a valence word before it decides). None when it is the object of a word
    with no direction the check knows ("cuts the risk", "curbs their risk": a content
    word, then a determiner): what that does to the risk is unknown, so it is not
    compared. With nothing before it, an amount word it is the subject of turns it the
    same way (:func:`_predicate`): "the benefit is smaller" is "a smaller benefit"."""
    for j in range(i - 1, max(-1, i - 4), -1):
        if tokens[j].brk:
            break
        before = poles[j]
        if before is not None and before[0] == "amount":
            return pole ^ before[1]
        if before is not None and before[0] == "valence":
            return before[1]
        if tokens[j].key and j == i - 2 and tokens[i - 1].text in _DETERMINERS:
            return None  # the object of a verb the check does not know
    after = _predicate(poles, tokens, i)
    return pole if after is None else pole ^ after


def _predicate(poles: list[tuple[str, int] | None], tokens: list[_Token], i: int
               ) -> int | None:
    """The pole of an amount word said of the word at ``i`` ("risk was lower", "benefit
    is smaller"): the next content word of its clause, with only function words (a
    copula, an adverb of the stop list) between."""
    for j in range(i + 1, min(len(tokens), i + 4)):
        if tokens[j].brk:
            return None
        after = poles[j]
        if after is not None and after[0] == "amount":
            return after[1]
        if tokens[j].key:
            return None
    return None


_DETERMINERS = frozenset({"the", "a", "an", "their", "its", "his", "her", "our", "your",
                          "this", "that", "these", "those", "my"})


def _directions(tokens: list[_Token], language: _Rules, negated_at: set[int]
                ) -> list[_Direction]:
    poles = [language.pole(t.text) for t in tokens]
    out = []
    for i, found in enumerate(poles):
        if found is None or i in negated_at or _attributive(tokens, poles, i):
            continue
        axis, pole = found
        if axis == "valence":
            turned = _valence(poles, tokens, i, pole)
            if turned is None:
                continue
            pole = turned
        context, near = _clause_context(tokens, i)
        out.append(_Direction(axis, pole, context, tokens[i].start, tokens[i].end, near,
                              _heads(tokens, i)))
    return out


def _attributive(tokens: list[_Token], poles: list[tuple[str, int] | None], i: int) -> bool:
    """Whether the word at ``i`` is a scale adjective in its positive degree before a
    noun with no direction of its own ("high blood pressure", "low-lying land"): it names
    a kind of thing, not a way things went, and is compared as an antonym only ("high"
    against "low" before the same words). Before a valence word it still turns it ("a
    high risk")."""
    following = tokens[i + 1] if i + 1 < len(tokens) else None
    return tokens[i].text in ATTRIBUTIVE_EN and following is not None \
        and bool(following.key) and poles[i + 1] is None


@dataclass(frozen=True, slots=True)
class _Rules:
    """How the check reads one language: one entry per language (:data:`RULES`, keyed by
    the :class:`~agent_search.language.Language` record's name) rather than a branch on
    it in every step."""

    tokens: Callable[[str], list[_Token]]
    is_cue: Callable[[list[_Token], int], bool]
    nominal: frozenset[str]
    """Cues whose scope is the one content word after them."""
    prefixed: Callable[[_Token], str | None]
    pole: Callable[[str], tuple[str, int] | None]
    unreadable: Callable[[str], str | None]
    """Why a sentence in the language cannot be read (too long, another language
    written in its letters), or None."""
    antonyms: bool = False
    """Words with antonyms (WordNet's, English) are compared (:func:`_antonym`)."""
    aligns: bool = False
    """A contradiction of direction words needs the two aligned to each other
    (:func:`_agreed`)."""
    finds_words: bool = False
    """Words of a reading are found again in its text as written (:func:`_in_other`)."""


def _too_long(tokens: int) -> str | None:
    return "too long to check what it asserts" if tokens > MAX_TOKENS else None


def _unreadable_en(sentence: str) -> str | None:
    words = [w.lower() for w in re.findall(r"[A-Za-z][A-Za-z'’]*", sentence)]
    if _foreign_latin(words):
        return _FOREIGN
    return _too_long(len(words))


def _unreadable_zh(sentence: str) -> str | None:
    return _too_long(len(sentence) // 2)  # a Chinese word is about two characters


_ENGLISH = _Rules(_tokens_en, _is_cue_en, NOMINAL_NEGATION_EN, _prefixed_en, pole_en_word,
                  _unreadable_en, antonyms=True, aligns=True, finds_words=True)
_CHINESE = _Rules(_tokens_zh, _is_cue_zh, frozenset(), _prefixed_zh, _pole_zh,
                  _unreadable_zh)
RULES: dict[str, _Rules] = {"en": _ENGLISH, "zh": _CHINESE}
"""The check's rules by language name; a language without rules here is read by
English's (its sentences are mostly caught first as another script, :func:`unreadable`)."""


def _rules(text: str) -> _Rules:
    """The rules ``text`` is read by: its language's (:func:`agent_search.language.classify`)."""
    return RULES.get(classify(text).name, _ENGLISH)


def _negations(tokens: list[_Token], language: _Rules, text: str
               ) -> tuple[list[_Cue], set[int]]:
    """The negation cues of ``tokens`` (of ``text``) with their scopes, and the token
    positions under one (a direction word there is not compared)."""
    cues: list[_Cue] = []
    negated_at: set[int] = set()
    for i in range(len(tokens)):
        if not language.is_cue(tokens, i):
            continue
        nominal = tokens[i].text in language.nominal
        scope, end = _scope(tokens, i, 1 if nominal else SCOPE)
        if scope:
            cues.append(_Cue(frozenset(scope), tokens[i].start, end, scope[0], nominal,
                             _clause_numbers(tokens, i, text)))
            negated_at.update(range(i, i + 1 + SCOPE + 1))
    return cues, negated_at


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _clause_numbers(tokens: list[_Token], i: int, text: str) -> frozenset[str]:
    """The numbers written in the clause of the token at ``i``: what that clause counts
    (非食品价格上涨0.9% speaks of the 0.9%, not of the 7.0% of the clause before it)."""
    start = next((t.end for t in reversed(tokens[:i]) if t.brk), 0)
    end = next((t.start for t in tokens[i + 1:] if t.brk), len(text))
    return frozenset(_NUMBER.findall(text, start, end))


@functools.lru_cache(maxsize=1024)
def _read(text: str) -> _Reading:
    """What ``text`` asserts; cached, as a reference window supports many sentences (a
    window is at most two sentences of a reference's first 20,000 characters)."""
    language = _rules(text)
    tokens = language.tokens(text)
    cues, negated_at = _negations(tokens, language, text)
    prefixed = [(rest, t.text, t.start, t.end) for t in tokens
                if (rest := language.prefixed(t))]
    negated = frozenset().union(*(c.scope for c in cues))
    content = [t for t in tokens if t.key]
    opposable = _opposable(tokens, negated_at) if language.antonyms else []
    return _Reading(language, text, frozenset(t.key for t in content),
                    frozenset(t.text for t in content),
                    negated, tuple(cues), tuple(prefixed),
                    tuple(_directions(tokens, language, negated_at)), tuple(opposable),
                    frozenset().union(*(o.lemmas for o in opposable)),
                    frozenset(t.key for i, t in enumerate(tokens)
                              if t.key and i not in negated_at))


def _opposable(tokens: list[_Token], negated_at: set[int]) -> list[_Opposable]:
    out = []
    for i, t in enumerate(tokens):
        if not t.key or i in negated_at:
            continue
        found = lemmas(t.text)
        if found:
            context, near = _clause_context(tokens, i)
            out.append(_Opposable(found, context, t.start, t.end, near))
    return out


def _antonym(s: _Reading, w: _Reading) -> str | None:
    """A word of ``s`` whose antonym (WordNet) ``w`` states about the same words (one
    word around both in common), where ``w`` does not state the word itself about them
    nor ``s`` the antonym: "thinned" against "grew thicker", "agonist" against
    "antagonist". About them: a "lower risk" elsewhere in the window does not make
    "a low economic burden" the window's own words for "a high economic burden"."""
    for a in s.opposable:
        if _states(w, a.lemmas, a):
            continue
        opposite_words = antonyms(a.lemmas)
        for b in w.opposable:
            if b.lemmas & opposite_words and not _states(s, b.lemmas, b) and _near(a, b):
                return f"“{_quote(s, a.start, a.end)}”, where it says “{_quote(w, b.start, b.end)}”"
    return None


def _near(a: _Opposable, b: _Opposable) -> bool:
    return _shared(a.context, a.near, b.context, b.near) > 0


def _states(reading: _Reading, lemma_set: frozenset[str], about: _Opposable) -> bool:
    """Whether ``reading`` states a word of ``lemma_set`` around one of the words
    around ``about`` themselves (or with no words around it: then anywhere)."""
    return any(o.lemmas & lemma_set and (o.context & about.context or not o.context)
               for o in reading.opposable)


_FOREIGN = "a language the check does not read"


def _foreign_latin(words: list[str]) -> bool:
    """Whether lower-cased Latin ``words`` are another language's: a dozen words and no
    English function word, or more of another language's function words than English's."""
    english = sum(w in ENGLISH.function_words for w in words)
    foreign = sum(w in _FOREIGN_LATIN for w in words)
    return (len(words) >= 12 and not english) or (foreign >= 2 and foreign > english)


def unreadable(sentence: str) -> str | None:
    """Why what ``sentence`` asserts cannot be read (None when it can): a language other
    than English and Chinese, or a sentence too long."""
    other = len(_OTHER_SCRIPT.findall(sentence))
    if other >= 3 and other * 5 >= sum(c.isalpha() for c in sentence):
        return _FOREIGN
    return _rules(sentence).unreadable(sentence)


def _quote(reading: _Reading, start: int, end: int) -> str:
    return " ".join(reading.text[start:end].split())[:60]


def _inside(words: frozenset[str], text: str) -> frozenset[str]:
    """The Chinese words (two characters or more) of ``words`` written inside ``text``:
    jieba cuts a compound whole (贡献率), and the word it holds (贡献) is stated there."""
    return frozenset(w for w in words if len(w) >= 2 and HAN_CHAR.search(w) and w in text)


def _negation(a: _Reading, b: _Reading, *, head: bool = False) -> tuple[int, int] | None:
    """The span of a cue of ``a`` that negates words ``b`` states and never negates. With
    ``head``, ``b`` must state what the cue negates (its scope's first word): a sentence
    that rewords a reference's negation ("less than fifty years old" for "did not exist
    fifty years ago", "works without X" for "does not depend on X") shares the words
    around it, not the negated verb, and does not contradict it; nor does one where ``a``
    negates a thing ("lacking X", a nominal cue) it also names outside any negation ("the
    condition used to deplete X … cells lacking X": the sentence's "deplete X" is the
    other mention). Not a verb's negation: a five-letter stem of a verb ("do not
    express") is often a noun of the same text ("expression"). English only: a
    Chinese 非/不 before a noun makes a class set against that noun in the same clause
    (非食品价格 beside 食品价格), and the sentence's number tells which it speaks of."""
    for cue in a.cues:
        shared = cue.scope & b.words | _inside(cue.scope, b.text)
        if head and _aside(cue, a, b):
            continue
        if len(shared) >= min(2, len(cue.scope)) and not shared & b.negated:
            return cue.start, cue.end
    for rest, whole, start, end in a.prefixed:
        if rest in b.full and whole not in b.full and _key(rest) not in b.negated:
            return start, end
    return None


def _aside(cue: _Cue, a: _Reading, b: _Reading) -> bool:
    """Whether a cue of the reference ``a`` negates something other than what sentence
    ``b`` states: ``b`` does not state its head; or ``a`` names the thing it negates
    outside any negation too (English); or its clause counts with numbers ``b`` does not
    state while ``b`` states some (the numbers say which clause ``b`` rewords)."""
    if cue.head not in b.words or (cue.nominal and cue.head in a.plain and cue.head.isascii()):
        return True
    said = frozenset(_NUMBER.findall(b.text))
    return bool(cue.numbers and said and cue.numbers.isdisjoint(said))


def _in_other(reading: _Reading, words: frozenset[str]) -> str:
    """A few words of ``reading`` that are among ``words``, as written."""
    found = [t for t in _TOKEN_EN.finditer(reading.text)
             if stem(t.group(0).lower()) in words][:3] if reading.rules.finds_words else []
    if found:
        return _quote(reading, found[0].start(), found[-1].end())
    return next((w for w in words if w in reading.text), "")


def opposite(sentence: str, window: str) -> str | None:
    """Why ``window`` (the reference text that supports ``sentence`` in words) says the
    opposite of it, or None."""
    s, w = _read(sentence), _read(window)
    for check in _OPPOSITIONS:
        why = check(s, w)
        if why is not None:
            return why
    return None


def _negated_sentence(s: _Reading, w: _Reading) -> str | None:
    """The sentence negates words the window states and never negates."""
    span = _negation(s, w)
    if span is None:
        return None
    said = _in_other(w, _scope_at(s, span) & w.words)
    return f"“{_quote(s, *span)}”" + (f", where it says “{said}”" if said else "")


def _negated_window(s: _Reading, w: _Reading) -> str | None:
    """The window negates what the sentence states (:func:`_negation` with ``head``)."""
    span = _negation(w, s, head=True)
    return None if span is None else f"it says “{_quote(w, *span)}”"


def _turned(s: _Reading, w: _Reading) -> str | None:
    """A direction word of the sentence whose counterparts in the window all point the
    other way (aligned to each other where the language's rules ask it)."""
    aligns = s.rules.aligns
    for d in s.directions:
        near = _nearest(d, w.directions)
        if near and all(e.pole != d.pole and not (aligns and _agreed(e, s.directions))
                        for e in near):
            said = _quote(w, near[0].start, near[0].end)
            return f"“{_quote(s, d.start, d.end)}”, where it says “{said}”"
    return None



_OPPOSITIONS: tuple[Callable[[_Reading, _Reading], str | None], ...] = (
    _negated_sentence, _negated_window, _turned, _antonym)
"""The ways a window says the opposite of a sentence, in the order they are looked for:
the first found is the reason given."""

def _nearest(d: _Direction, others: tuple[_Direction, ...]) -> list[_Direction]:
    """The direction words of ``others`` on ``d``'s axis that share the most content words
    around them with ``d`` (none when none shares any), two more when the two are said of
    the same word (:attr:`_Direction.heads`): "a bigger effect" is the counterpart of "the
    effect was larger", not of "blood pressure drop" a few words off. (The same direction
    word counted as one word more made ties with a window that states the word
    elsewhere: "higher" swapped for "lower" passed where the window says "higher" of
    other things.)"""
    best, out = 0, []
    for e in others:
        shared = _shared(d.context, d.near, e.context, e.near) + 2 * bool(d.heads & e.heads) \
            if e.axis == d.axis else 0
        if shared > best:
            best, out = shared, [e]
        elif shared == best and shared:
            out.append(e)
    return out


def _agreed(e: _Direction, ours: tuple[_Direction, ...]) -> bool:
    """Whether a direction word of the sentence that ``e`` (the reference's) aligns with
    best agrees with it: then ``e`` is that word's counterpart, and another word of the
    sentence on the same axis around some of the same words speaks of something else
    ("brought pressure down …, in those with high blood pressure" against "blood pressure
    drop"). A contradiction needs a pair of words aligned to each other. English only:
    a Chinese clause packs several directions around the same few words (降低生产力并推动
    经济增长), so the alignment cannot tell them apart there (measured on the templated
    set's tune half, it let a fifth of the swapped Chinese sentences pass)."""
    return any(x.pole == e.pole for x in _nearest(e, ours))


def _scope_at(reading: _Reading, span: tuple[int, int]) -> frozenset[str]:
    for cue in reading.cues:
        if (cue.start, cue.end) == span:
            return cue.scope
    return frozenset(_key(p[0]) for p in reading.prefixed if (p[2], p[3]) == span)
