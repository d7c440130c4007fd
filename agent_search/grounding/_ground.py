"""The support decision, sentence by sentence.

A sentence with something to check is ``supported`` by a reference when the reference
states every number and every name of the sentence and one of its windows holds most of
the sentence's content words (with the embedding model, a close meaning counts too).
The cited references are tried first, together (a sentence may draw on two); then every
reference of the request, one by one: a sentence one of them supports gets that
reference as an added citation. Otherwise the sentence is ``unsupported``, and the
reason names what is missing: a number or name no reference states (or that differs from
what its cited reference says), or that no reference says anything close.

Conservative by design: a single number or name that no reference holds is enough to
flag a sentence, however close the rest of it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray

from agent_search.errors import RunError
from agent_search.grounding._budget import (
    MAX_SENTENCE_CHARS,
    OVER_BUDGET,
    TOO_LONG,
    Budget,
)
from agent_search.grounding._claims import (
    Claims,
    _english_words,
    content_words,
    extract,
    load_chinese,
    number_found,
    stem,
)
from agent_search.grounding._meaning import Meanings, shipped
from agent_search.grounding._polarity import opposite, unreadable
from agent_search.grounding._quantities import miscounted
from agent_search.grounding._references import MAX_REFERENCE_CHARS, PreparedReference, prepare
from agent_search.grounding._related import load as load_related
from agent_search.grounding._segment import Span, segment, whole
from agent_search.language import HAN_CHAR

Status = Literal["supported", "unsupported", "no_claim", "unchecked"]
"""``unchecked``: the sentence may hold a claim and the check could not decide (it failed,
or the sentence is past the bounds of the check): never to be read as supported."""
Embed = Callable[[Sequence[str]], NDArray[np.float32]]



@dataclass(frozen=True, slots=True)
class Thresholds:
    """When a reference window is close enough to a sentence to support it. The defaults
    were chosen on one half of bench/bench_grounding.py's labelled set (docs/grounding.md).
    """

    coverage: float = 0.6
    """Share of a sentence's content words one window of a reference must hold."""
    similarity: float = 0.75
    """Cosine similarity (all-MiniLM-L6-v2) between the sentence and the window that counts
    as saying the same when the words overlap less (a rewording)..."""
    coverage_with_similarity: float = 0.35
    """... as long as the window still holds this share of the sentence's words."""
    coverage_with_numbers: float = 0.35
    """The share that is enough when the sentence states numbers and one window states
    them all: the numbers anchor it to that passage, and a rewording keeps them where
    it changes the words around them."""


MAX_MEANING_WINDOW_WORDS = 12
"""A window's words (those the sentence does not hold) compared by meaning, at most."""
MEANING_FROM = 0.4
"""The share of its words a cited window must hold before the rest of a sentence's words
are aligned with it by meaning (:mod:`agent_search.grounding._meaning`); it bounds how
many sentences pay for the model (~17 words embedded each). A rewording by a model
changes half a sentence's words or more ("the relationship remained once X was
controlled for" for "the association held after accounting for X"), so a sentence at
0.4-0.5 is read too. On the templated set's English tune half, none of the neighbours'
sentences that 0.4 lets in gained enough to pass: 16 unsupported sentences passed at
0.5, the same 16 at 0.4."""
MIN_WORDS = 2
"""A sentence with fewer content words and no number or name has nothing to check."""
MAX_SENTENCES = 200
"""Sentences of one answer checked; later ones are ``unchecked`` with a reason."""
MAX_ANSWER_CHARS = 20_000
"""Characters of an answer split into sentences (to the last line break before it); the
rest is one ``unchecked`` entry: bounded work whatever the model wrote."""
LONG_ANSWER = "not checked: a long answer"

_META = re.compile(r"\b(?:I|I'm|I've|I'd)\b(?!\.)|\b(?i:me|my|references?|sources?)\b"
                   r"|我(?![国省市县区军方校院])|参考|资料|来源")
"""A sentence in the first person or about the references, with no number or name in it,
speaks about the answer ("I could not find...", "The references do not say...", "我没有找到").
我国, 我省, 我军, 我方 ("our country", ...) are the usage of Chinese news, not the first person."""


_ATTRIBUTION = re.compile(
    r"^\s*(?:(?:according to|based on|as (?:stated|described|reported|shown|noted) in|per)"
    r"\s+(?:the\s+)?(?:provided\s+|given\s+|cited\s+|available\s+)?"
    r"(?:references?|sources?|documents?|context|passages?|search results?)\s*[,:]\s*"
    r"|(?:the\s+)?(?:references?|sources?|documents?|passages?)\s+(?:(?:also\s+)?"
    r"(?:show|state|say|indicate|report|note|suggest|mention)s?)\s+that\s+"
    r"|(?:根据|据|按照|依据|从)[^，,。：:]{0,12}?(?:资料|参考|来源|信息|材料|文献|搜索结果|内容)"
    r"[^，,。：:]{0,6}?(?:来看|显示|所述|中)?[，,：:]\s*"
    r"|(?:参考)?(?:资料|材料|文献|搜索结果|来源)中?(?:显示|表明|指出|提到|称)[，,：:]?\s*)",
    re.IGNORECASE)
"""A lead-in that attributes the sentence to the references ("According to the references,",
"根据参考资料，"): the rest of the sentence is the claim, and is checked as one; the
lead-in alone does not make it a sentence about the answer."""


@dataclass(slots=True)
class GroundedSentence:
    """One sentence of an answer and what the references say about it."""

    text: str
    start: int
    end: int
    status: Status
    cited: list[str] = field(default_factory=list)
    support: list[str] = field(default_factory=list)
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "start": self.start, "end": self.end,
                "status": self.status, "cited": list(self.cited),
                "support": list(self.support), "reason": self.reason}


@dataclass(slots=True)
class _Check:
    """How one reference (or the cited ones together) fares against a sentence."""

    ids: list[str]
    missing_numbers: list[str]
    missing_names: list[str]
    coverage: float
    similarity: float = 0.0
    anchored: bool = False
    """The sentence states numbers (one of two digits or more: "two" or "5" anchors
    nothing), and one window states them all."""
    meaning: float = 0.0
    """The share of the sentence's weight its closest window holds when words aligned
    by meaning count too (:mod:`agent_search.grounding._meaning`; 0 when not read)."""

    @property
    def claims_held(self) -> bool:
        return not self.missing_numbers and not self.missing_names

    def close(self, t: Thresholds) -> bool:
        return self.coverage >= t.coverage or (
            self.similarity >= t.similarity and self.coverage >= t.coverage_with_similarity
        ) or (self.anchored and self.coverage >= t.coverage_with_numbers
              ) or self.meaning >= t.coverage

    def supports(self, t: Thresholds) -> bool:
        return self.claims_held and self.close(t)


def _coverage(claims: Claims, refs: Sequence[PreparedReference], *, exact: bool = False
              ) -> tuple[float, str]:
    """The best share of the sentence's content units one window holds, and that window.
    Its units are its content words and its numbers: a rewording keeps the numbers of
    its source where it changes its words ("grew thicker" for "thickened"), so a number
    the window states counts as a word it shares; a word counts as held where the window
    holds one WordNet relates to it ("stays" for "remains"); and a common word weighs
    less than a rare one (a rewording adds and drops "became", "brought" freely).
    ``exact``: the sentence's own words only (no related words, no part of a Chinese
    word). Kept on ``claims``: one verdict asks for the same references more than once."""
    key = (tuple(id(r) for r in refs), exact)
    found: tuple[float, str] | None = claims.memo.get(key)
    if found is None:
        found = claims.memo[key] = _best_window(claims, refs, exact)
    return found


def _best_window(claims: Claims, refs: Sequence[PreparedReference], exact: bool
                 ) -> tuple[float, str]:
    units: _Units | None = claims.memo.get(("units", exact))
    if units is None:  # the same for every reference the sentence is held against
        units = claims.memo["units", exact] = _Units(claims, exact)
    nums = claims.numbers
    total = units.total + len(nums)
    if not total:
        return 1.0, ""
    best, most_same, window = 0.0, 0.0, ""
    for ref in refs:
        parts = units.parts_in(ref.text)  # the Chinese words some part of which it holds
        entries = units.within(ref.words)  # the words it holds, or a word related to
        if (units.held(ref.words, ref.text, parts, entries)[0] + len(nums)) / total <= best:
            continue  # no window of this reference can do better
        for text, held, values in zip(ref.windows, ref.window_words, ref.window_numbers,
                                      strict=True):
            found = sum(number_found(n, values) for n in nums)
            aligned, same = units.held(held, text, parts, entries)
            share = (aligned + found) / total
            if (share, same) > (best, most_same):
                best, most_same, window = share, same, text
    return best, window


class _Entry(NamedTuple):
    """A content word of the sentence as windows are searched for it."""

    word: str
    """Its stem."""
    weight: float
    related: frozenset[str] | None
    """The stems related to it (None: none, or only the word itself is looked for)."""

    @property
    def plain(self) -> bool:
        """Of weight 1 with nothing related: counted with others like it, as a set."""
        return self.weight == 1.0 and self.related is None

    @property
    def chinese(self) -> bool:
        """A Chinese word of two characters or more: a window may hold part of it."""
        return len(self.word) > 1 and HAN_CHAR.search(self.word) is not None


class _Units:
    """A sentence's content words ready to be aligned with window after window: each
    with its weight and what else may stand for it (WordNet's related words; for a
    Chinese word, its parts), in one fixed order, so two windows that hold the same
    words sum the same weights to the same float."""

    __slots__ = ("chinese", "entries", "plain", "total")

    def __init__(self, claims: Claims, exact: bool) -> None:
        related = {} if exact else claims.related
        entries = [_Entry(w, claims.weights.get(w, 1.0), related.get(w))
                   for w in sorted(set(claims.words))]
        self.total = sum(e.weight for e in entries)
        # words of weight 1 with nothing related (all of a Chinese sentence's): counted
        # at once, as a set
        self.plain = frozenset(e.word for e in entries if e.plain)
        self.entries = tuple(e for e in entries if not e.plain)
        self.chinese = () if exact else tuple((e.word, e.weight) for e in entries if e.chinese)

    def parts_in(self, text: str) -> tuple[tuple[str, float], ...]:
        """The Chinese words of which ``text`` holds a part (only they can be held in
        part by a window of it)."""
        return tuple((w, weight) for w, weight in self.chinese if _chinese_share(w, text))

    def within(self, words: frozenset[str]) -> tuple[_Entry, ...]:
        """The weighed words (not :attr:`plain`) that ``words`` holds, themselves or a
        word related to them: the only ones a window of that text can hold."""
        return tuple(e for e in self.entries if e[0] in words
                     or (e[2] is not None and not e[2].isdisjoint(words)))

    def held(self, held: frozenset[str], text: str, parts: tuple[tuple[str, float], ...],
             entries: tuple[_Entry, ...]) -> tuple[float, float]:
        """The weight of the words that window ``held`` (its words; ``text``, as
        written) holds, themselves or a word aligned with them (``parts``: the Chinese
        words that may be held in part); and of those it holds themselves. Of two
        windows that hold as much, the one with the sentence's own words is the one it
        was drawn from: whose assertions are compared with it."""
        same = float(len(self.plain & held))
        aligned = 0.0
        for w, weight, related in entries:
            if w in held:
                same += weight
            elif related is not None and not related.isdisjoint(held):
                aligned += weight
        for w, weight in parts:
            if w not in held:
                aligned += _chinese_share(w, text) * weight
        return same + aligned, same


def _chinese_share(word: str, text: str) -> float:
    """How much of a Chinese word ``text`` holds where jieba cut the two differently:
    all of it when the word is inside one of the text's words (平均 in 平均水平), else
    the share of its two-character runs the text holds (粮食产量 against 粮食总产量:
    粮食 and 产量 of 粮食, 食产, 产量)."""
    if word in text:
        return 1.0
    pairs = [word[i:i + 2] for i in range(len(word) - 1)]
    return sum(p in text for p in pairs) / len(pairs)


def _check(claims: Claims, refs: Sequence[PreparedReference], *, held_only: bool = False
           ) -> _Check:
    """How ``refs`` fare against the sentence. ``held_only``: the overlap is measured only
    when they state its numbers and names (else 0.0) — a caller that sets aside what
    lacks them does not pay for the windows it would never read."""
    numbers = frozenset().union(*(r.numbers for r in refs))
    missing_numbers = [n.text for n in claims.numbers if not number_found(n, numbers)]
    missing_names = [e for e in claims.entities if not _named(e, refs)]
    check = _Check([r.citation_id for r in refs], missing_numbers, missing_names, 0.0)
    if held_only and not check.claims_held:
        return check
    check.coverage, _ = _coverage(claims, refs)
    check.anchored = _anchored(claims, refs)
    return check


def _named(name: str, refs: Sequence[PreparedReference]) -> bool:
    """Whether ``refs`` state ``name`` (or cannot spell it: :func:`_translated`)."""
    return any(r.has_name(name) for r in refs) or _translated(name, refs)


def _anchored(claims: Claims, refs: Sequence[PreparedReference]) -> bool:
    """Whether the sentence states a number of two digits or more and one window of
    ``refs`` states all its numbers (:attr:`_Check.anchored`)."""
    return any(sum(c.isdigit() for c in n.text) >= 2 for n in claims.numbers) and any(
        all(number_found(n, values) for n in claims.numbers)
        for r in refs for values in r.window_numbers)


_ACRONYM = re.compile(r"[A-Z]{2,6}")


def _translated(name: str, refs: Sequence[PreparedReference]) -> bool:
    """Whether ``name`` is an acronym in Latin capitals ("GDP", "CPI") and every one of
    ``refs`` is Chinese with none: such a reference spells the term out in Chinese
    (地区生产总值, 居民消费价格), so the acronym cannot be looked for in its letters and
    is left to the words around it, as a word would be."""
    return _ACRONYM.fullmatch(name) is not None and all(
        HAN_CHAR.search(r.text) and not _ACRONYM.search(r.text) for r in refs)


def _no_claim_reason(span: Span, claims: Claims, checked: str) -> str | None:
    if span.kind == "code":
        return "code"
    if claims.numbers or claims.entities:
        return None
    text = span.text.rstrip()
    if span.kind == "heading" or text.endswith((":", "：")):
        return "a heading or an introduction"
    if text.endswith(("?", "？")):
        return "a question"
    if len(set(claims.words)) < MIN_WORDS:
        return "nothing to check"
    if _META.search(checked):
        return "about the answer or its references, not a claim"
    return None


def _quote(items: Sequence[str]) -> str:
    return ", ".join(f"“{i}”" for i in items[:3])


def _markers(cids: Sequence[str], fmt: str) -> str:
    return ", ".join(fmt.replace("{id}", c) for c in cids)


@dataclass(slots=True)
class _Sentence:
    """One claim sentence on its way to a verdict (``bare``: without its markers and
    without a lead-in that attributes it to the references)."""

    span: Span
    bare: str
    cited: list[str]
    claims: Claims


@dataclass(frozen=True, slots=True)
class _Judge:
    """What every verdict on one answer shares: its references, the similarity of a
    sentence to a reference, the citation format and the thresholds."""

    refs: dict[str, PreparedReference]
    similarity: Callable[[_Sentence, PreparedReference], float]
    fmt: str
    t: Thresholds
    meanings: Meanings | None
    budget: Budget

    def _attempt(self, sentence: _Sentence, group: list[PreparedReference], check: _Check,
                 cited: bool = False) -> tuple[Status, str] | None:
        """What ``group`` (``check`` its words, numbers and names against the sentence)
        says of the sentence: None when it does not hold it; else ``supported``, or
        ``unsupported`` (it says the opposite) or ``unchecked`` with why."""
        if check.claims_held and not check.close(self.t):
            check.similarity = max(self.similarity(sentence, r) for r in group)
            if cited and not check.close(self.t) and check.coverage >= MEANING_FROM:
                check.meaning = _by_meaning(sentence, group, check.coverage, self)
        if not check.supports(self.t):
            return None
        return _asserts(sentence, group, self.fmt) or ("supported", "")

    def by_cited(self, out: GroundedSentence, sentence: _Sentence,
                 cited_refs: list[PreparedReference]) -> str:
        """The cited references together: ``out`` supported (or unchecked) when they hold
        the sentence and say what it asserts; else why they say the opposite, if they do."""
        together = _check(sentence.claims, cited_refs)
        outcome = self._attempt(sentence, cited_refs, together, cited=True)
        if outcome is None:
            return ""
        if outcome[0] == "unsupported":
            return outcome[1]
        out.status, out.reason = outcome
        if out.status == "supported":
            out.support = [r.citation_id for r in cited_refs
                           if _check(sentence.claims, [r]).coverage > 0 or len(cited_refs) == 1]
            out.support = out.support or together.ids
        return ""

    def by_others(self, out: GroundedSentence, sentence: _Sentence,
                  cited_refs: list[PreparedReference], opposed: str = "") -> str:
        """The other references, closest first: ``out`` supported with the citation added
        (or unchecked) by the first that holds the sentence and says what it asserts; else
        why one that holds its words says the opposite, if one does. When the cited
        references hold the sentence and say the opposite (``opposed``), another one
        overrides them only if it holds the sentence's own words at least as closely:
        a neighbour on the same topic that holds fewer of them, some only through
        related words, is not the sentence's source."""
        held = self._others(sentence, cited_refs, bool(opposed))
        opposed = ""
        for candidate in held[:3]:
            outcome = self._attempt(sentence, [self.refs[candidate.ids[0]]], candidate)
            if outcome is None:
                continue
            if outcome[0] == "unsupported":
                opposed = opposed or outcome[1]
                continue
            out.status, out.support = outcome[0], candidate.ids
            out.reason = outcome[1] or _added(sentence, candidate.ids, self.fmt)
            return ""
        return opposed

    def span_verdict(self, i: int, span: Span, marker: re.Pattern[str]) -> GroundedSentence:
        """The entry of the answer's ``i``-th span: ``unchecked`` past the answer's bounds
        (sentences, budget), else its ``no_claim`` entry or its verdict."""
        if i >= MAX_SENTENCES:
            return _unchecked(span, marker, LONG_ANSWER)
        if self.budget.exhausted:
            return _unchecked(span, marker, OVER_BUDGET)
        sentence = _safe_sentence(span, marker, self.budget)
        out = self.safe_verdict(sentence, marker) if isinstance(sentence, _Sentence) \
            else sentence
        self.budget.rest()
        return out

    def _others(self, sentence: _Sentence, cited_refs: list[PreparedReference],
                opposed: bool) -> list[_Check]:
        """The other references that hold the sentence's numbers and names, closest first;
        when the cited ones say the opposite (``opposed``), only those that hold its own
        words at least as closely as the cited ones do."""
        claims = sentence.claims
        held = [c for c in (_check(claims, [r], held_only=True) for r in self.refs.values()
                            if r not in cited_refs) if c.claims_held]
        if opposed:
            floor = _coverage(claims, cited_refs, exact=True)[0]
            held = [c for c in held
                    if _coverage(claims, [self.refs[c.ids[0]]], exact=True)[0] >= floor]
        return sorted(held, key=lambda c: c.coverage, reverse=True)

    def safe_verdict(self, sentence: _Sentence, marker: re.Pattern[str]) -> GroundedSentence:
        """The verdict, or the sentence ``unchecked`` should the check fail on it."""
        try:
            return _verdict(sentence, self)
        except Exception as exc:  # the sentence says the check failed
            return _unchecked(sentence.span, marker, _failed(exc))


def _by_meaning(sentence: _Sentence, group: list[PreparedReference], coverage: float,
                judge: _Judge) -> float:
    """The share of an English sentence's weight that the window of ``group`` closest to
    it holds (``coverage``) once its words the window does not hold are aligned by
    meaning with the window's (:mod:`agent_search.grounding._meaning`); 0.0 when the
    sentence or window is Chinese, the model is not at hand or the answer's bound of
    embedded words is spent. (WordNet's relations read from the window's side, "held"
    listing "control", aligned too loosely: a neighbour's sentence on the same topic
    passed on its five-letter stems, "responsible" for "refused".)"""
    claims = sentence.claims
    _, window = _coverage(claims, group)
    if not window or HAN_CHAR.search(window) or HAN_CHAR.search(sentence.bare):
        return 0.0
    own = _unheld(sentence, window)
    total = sum(claims.weights.get(k, 1.0) for k in set(claims.words)) + len(claims.numbers)
    if not total or coverage + _weight(claims, own) / total < judge.t.coverage:
        return 0.0  # not close enough even were every word aligned: nothing to embed
    aligned = _aligned(own, _foreign(claims, window), judge)
    return 0.0 if aligned is None else coverage + _weight(claims, aligned) / total


def _foreign(claims: Claims, window: str) -> list[str]:
    """The window's English words that are not the sentence's (bounded in number): what
    the sentence's unheld words may mean."""
    return list(dict.fromkeys(w for w in _english_words(window)
                              if stem(w) not in claims.words))[:MAX_MEANING_WINDOW_WORDS]


def _aligned(own: dict[str, str], theirs: list[str], judge: _Judge) -> list[str] | None:
    """The keys of ``own`` whose word the model aligns with one of ``theirs``; None when
    there is nothing to align, no model or the answer's bound of embedded words is spent."""
    meanings = judge.meanings if own and theirs else None
    if meanings is None or not judge.budget.take_meaning(len(own) + len(theirs)):
        return None
    aligned = meanings.aligned(list(own.values()), theirs)
    return [k for k, ok in zip(own, aligned, strict=True) if ok]


def _weight(claims: Claims, keys: Iterable[str]) -> float:
    """The summed weight of the sentence's words ``keys`` (stems)."""
    return sum(claims.weights.get(k, 1.0) for k in keys)


def _unheld(sentence: _Sentence, window: str) -> dict[str, str]:
    """The sentence's content words ``window`` does not hold, themselves or a word
    related to them: stem → the word as written."""
    held = frozenset(content_words(window))
    own: dict[str, str] = {}
    for word in _english_words(sentence.bare):
        key, related = stem(word), sentence.claims.related.get(stem(word))
        if key not in held and (related is None or related.isdisjoint(held)):
            own.setdefault(key, word)
    return own


def _verdict(sentence: _Sentence, judge: _Judge) -> GroundedSentence:
    """The cited references first, together; then the others, one by one."""
    span = sentence.span
    out = GroundedSentence(span.text, span.start, span.end, "unsupported",
                           cited=list(sentence.cited))
    if not judge.refs:
        out.reason = "there is no reference to check it against"
        return out
    cited_refs = [judge.refs[c] for c in sentence.cited if c in judge.refs]
    opposed = judge.by_cited(out, sentence, cited_refs) if cited_refs else ""
    if out.status != "unsupported":
        return out
    opposed = judge.by_others(out, sentence, cited_refs, opposed) or opposed
    if out.status == "unsupported":
        out.reason = opposed or _why_not(sentence, judge.refs, cited_refs, judge.fmt)
    return out


def _added(sentence: _Sentence, ids: list[str], fmt: str) -> str:
    """The reason of a sentence another reference supports: the citation added."""
    said = f"not said by the cited {_markers(sentence.cited, fmt)}; " if sentence.cited \
        else "no citation; "
    return f"{said}added {_markers(ids, fmt)}"


def _asserts(sentence: _Sentence, refs: list[PreparedReference], fmt: str
             ) -> tuple[Status, str] | None:
    """None when ``refs``, which hold the sentence's words, numbers and names, also say
    what it asserts; ``("unsupported", why)`` when the window that holds its words says
    the opposite (a negation or a direction the other lacks); ``("unchecked", why)`` when
    the sentence cannot be read for it (a language not read, too long)."""
    why = unreadable(sentence.bare)
    ids = _markers([r.citation_id for r in refs], fmt)
    if why is not None:
        return "unchecked", f"not checked: {why} (its words are in {ids})"
    _, window = _coverage(sentence.claims, refs)
    against = opposite(sentence.bare, window) if window else None
    if against is not None:
        return "unsupported", f"the reference says the opposite ({ids}): {against}"
    count = miscounted(sentence.bare, window) if window else None
    if count is not None:
        return "unsupported", f"“{count}” is not what {ids} counts with that number"
    return None


def _why_not(sentence: _Sentence, refs: dict[str, PreparedReference],
             cited_refs: list[PreparedReference], fmt: str) -> str:
    claims = sentence.claims
    everywhere = _check(claims, list(refs.values()))
    missing = everywhere.missing_numbers or everywhere.missing_names
    if missing:
        verb = "appears" if len(missing) == 1 else "appear"
        return f"{_quote(missing)} {verb} in no reference"
    if cited_refs:
        cited = _check(claims, cited_refs)
        what = cited.missing_numbers or cited.missing_names
        if what:
            return (f"{_quote(what)} is not what {_markers(cited.ids, fmt)} says; "
                    "no other reference supports the sentence")
    coverage, _ = _coverage(claims, list(refs.values()))
    return f"no reference says this (at best {round(coverage * 100)}% of its words)"


def _getter(ref: Any) -> Callable[[str], Any]:
    """A reference's fields, whether it is a dict or an item."""
    if isinstance(ref, dict):
        return ref.get

    def get(key: str) -> Any:
        return getattr(ref, key, None)

    return get


def _content(ref: Any) -> str:
    """The start of a reference's title and content (to see which language it is in)."""
    get = _getter(ref)
    return f"{get('title') or ''} {str(get('content') or '')[:MAX_REFERENCE_CHARS]}"


class _OverBudget(RunError):
    """The references alone took the answer's bound: no sentence can be checked (a run
    limit, hence a RunError of the package)."""


def _prepare_refs(references: Sequence[Any], budget: Budget) -> dict[str, PreparedReference]:
    out: dict[str, PreparedReference] = {}
    for ref in references:
        if budget.exhausted:
            raise _OverBudget
        budget.rest()
        get = _getter(ref)
        cid = get("citation_id")
        if cid and cid not in out:
            out[str(cid)] = prepare(str(cid), str(get("title") or ""), _text(get))
    return out


def _text(get: Callable[[str], Any]) -> str:
    """A reference's content, and a database row's fields: what they hold."""
    content = str(get("content") or "")
    data = get("data")
    if isinstance(data, dict) and data:
        content += "\n" + _row_text(data)
    return content


def _row_text(data: dict[Any, Any]) -> str:
    """A row's fields as one line ("stock: 85; price: 9.99."), internal ones (``__*``)
    left out; bounded like any reference text."""
    fields = (f"{k}: {v}" for k, v in data.items() if not str(k).startswith("__"))
    return "; ".join(fields)[:MAX_REFERENCE_CHARS] + "."


def ground(answer: str, references: Sequence[Any], *, citation_format: str = "#ref:{id}",
           embed: Embed | None = None, thresholds: Thresholds | None = None,
           budget: Budget | None = None, meanings: Meanings | Literal["shipped"] | None
           = "shipped", home: Path | str | None = None) -> list[GroundedSentence]:
    """Check each sentence of ``answer`` against ``references`` (items or dicts with
    ``citation_id``, ``title``, ``content``). ``embed`` (texts → unit vectors) lets a close
    rewording count as support; without it the decision is lexical. Blocking CPU work:
    call it in a worker thread from async code. ``budget`` (by default a fresh
    :class:`Budget`) bounds its cost: past it, the sentences left are ``unchecked``.
    ``meanings`` aligns an English sentence's words with a reference's by meaning where
    the words alone hold too little of it (:mod:`agent_search.grounding._meaning`): by
    default the offline MiniLM as shipped, read from data home ``home`` (the default
    home when None: pass the configuration's ``home``), loaded on first use; None: words
    alone.

    Fails closed: should the check fail on a sentence, that sentence is ``unchecked`` with
    the reason; should it fail as a whole (the references cannot be read), every sentence
    is — never an empty list, which would read as "nothing to flag"."""
    from agent_search.citation import marker_regex

    marker = marker_regex(citation_format)
    budget = budget if budget is not None else Budget()
    try:
        by_meaning = _load(answer, references, marker, meanings, home)
        budget.start()
        refs = _prepare_refs(references, budget)
    except _OverBudget:
        return unchecked(answer, OVER_BUDGET, citation_format=citation_format)
    except Exception as exc:  # any failure shows, sentence by sentence
        return unchecked(answer, _failed(exc), citation_format=citation_format)
    cut = _cut(answer)
    try:
        spans = segment(answer[:cut], marker)
    except Exception as exc:
        return unchecked(answer, _failed(exc), citation_format=citation_format)
    judge = _Judge(refs, _similarity(embed), citation_format, thresholds or Thresholds(),
                   by_meaning, budget)
    return [judge.span_verdict(i, span, marker) for i, span in enumerate(spans)] \
        + _rest(answer, cut)


def _load(answer: str, references: Sequence[Any], marker: re.Pattern[str],
          meanings: Meanings | Literal["shipped"] | None, home: Path | str | None
          ) -> Meanings | None:
    """The resources the answer needs, loaded once per process (not the answer's cost):
    jieba's when it or a reference is Chinese, WordNet's tables, and the meaning model
    (None, remembered, when it cannot be) when ``meanings`` is "shipped" and the answer
    cites: only the cited references are read by meaning, so an answer with no marker
    (a research run's parts) never loads it."""
    if HAN_CHAR.search(answer[:MAX_ANSWER_CHARS]) or any(HAN_CHAR.search(_content(r))
                                                      for r in references):
        load_chinese()
    load_related()
    if meanings != "shipped":
        return meanings
    return shipped(home) if marker.search(answer, 0, MAX_ANSWER_CHARS) is not None else None


def _cut(answer: str) -> int:
    """Where the checked part of ``answer`` ends: at the last line break before
    :data:`MAX_ANSWER_CHARS`."""
    if len(answer) <= MAX_ANSWER_CHARS:
        return len(answer)
    return answer.rfind("\n", 0, MAX_ANSWER_CHARS) + 1 or MAX_ANSWER_CHARS


def _rest(answer: str, cut: int) -> list[GroundedSentence]:
    """The part of ``answer`` past ``cut``, as one ``unchecked`` entry."""
    rest = answer[cut:]
    if not rest.strip():
        return []
    start = cut + len(rest) - len(rest.lstrip())
    end = cut + len(rest.rstrip())
    return [GroundedSentence(answer[start:end], start, end, "unchecked", reason=LONG_ANSWER)]


def _sentence(span: Span, marker: re.Pattern[str], budget: Budget
              ) -> GroundedSentence | _Sentence:
    """A span with its claims, or its ``no_claim`` entry (``unchecked`` when it is too
    long to be read as one claim)."""
    if span.kind != "code" and len(span.text) > MAX_SENTENCE_CHARS:
        return _unchecked(span, marker, TOO_LONG)
    cited = list(dict.fromkeys(m.group("id") for m in marker.finditer(span.text)))
    bare = marker.sub(" ", span.text)
    lead = _ATTRIBUTION.match(bare)
    bare = bare[lead.end():] if lead else bare
    claims = extract(bare, budget) if span.kind != "code" else Claims()
    reason = _no_claim_reason(span, claims, bare)
    if reason is not None:
        return GroundedSentence(span.text, span.start, span.end, "no_claim", cited=cited,
                                reason=reason)
    return _Sentence(span, bare, cited, claims)


def _safe_sentence(span: Span, marker: re.Pattern[str], budget: Budget
                   ) -> GroundedSentence | _Sentence:
    """The span with its claims, or ``unchecked`` should reading them fail."""
    try:
        return _sentence(span, marker, budget)
    except Exception as exc:
        return _unchecked(span, marker, _failed(exc))


def _failed(exc: BaseException) -> str:
    detail = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else ""
    return f"the check could not run ({type(exc).__name__}{': ' + detail if detail else ''})"


def _unchecked(span: Span, marker: re.Pattern[str], reason: str) -> GroundedSentence:
    cited = list(dict.fromkeys(m.group("id") for m in marker.finditer(span.text)))
    return GroundedSentence(span.text, span.start, span.end, "unchecked", cited=cited,
                            reason=reason)


def unchecked(answer: str, reason: str, *, citation_format: str = "#ref:{id}"
              ) -> list[GroundedSentence]:
    """Every sentence of ``answer`` as ``unchecked`` with ``reason``: what a caller reports
    when the check could not run, so no sentence reads as fine. Should even the split into
    sentences fail, the whole answer is one entry."""
    from agent_search.citation import marker_regex

    marker = marker_regex(citation_format)
    cut = _cut(answer)
    try:
        spans = segment(answer[:cut], marker)
    except Exception:
        spans = whole(answer[:cut])
    return [_unchecked(span, marker, reason) for span in spans] + _rest(answer, cut)


def _similarity(embed: Embed | None) -> Callable[[_Sentence, PreparedReference], float]:
    """Cosine similarity between a sentence and the reference window closest in words,
    embedded on first use and cached; 0.0 without a model."""
    if embed is None:
        return lambda sentence, ref: 0.0
    cache: dict[str, NDArray[np.float32]] = {}

    def vector(text: str) -> NDArray[np.float32]:
        if text not in cache:
            cache[text] = embed([text])[0]
        return cache[text]

    def similarity(sentence: _Sentence, ref: PreparedReference) -> float:
        _, window = _coverage(sentence.claims, [ref])
        if not window:
            return 0.0
        return float(np.dot(vector(sentence.bare), vector(window)))

    return similarity
