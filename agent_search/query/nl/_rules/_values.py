"""Known values: equality on categorical fields, matched to the values the database holds.

Exact (case-insensitive; values of three characters or fewer must match case too: "NY"),
another number of a value ("computer" for "computers"), or fuzzy (rapidfuzz) for
misspellings; on the target's fields, one relation away ("tracks in the Jazz genre" →
``genre.Name = 'Jazz'``) or two ("tracks by AC/DC" → ``album.artist.Name``). Several values
of one field become ``in``; "not"/"except" before a value negates it; the same words
matching equally well in two fields ("Iron Maiden albums": a title or an artist) become
an ``or`` of both readings.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz, process

from agent_search.language import HAN_CHAR, fold_width, to_simplified
from agent_search.query.dsl import ModelSchema
from agent_search.query.nl._lexicon import (
    STOPWORDS,
    WORD,
    find_phrase,
    overlaps,
    plural_forms,
    words_of,
)
from agent_search.query.nl._plan import EXACT_CONFIDENCE, Plan, Question
from agent_search.query.nl._reading._demonyms import derived_values
from agent_search.query.nl._reading._schema import Candidate, Span, near_field, spans_outside
from agent_search.query.nl._reading._value_index import ValueIndex, value_index
from agent_search.query.nl._rules._values_zh import chinese_matches, known_values

FUZZY_CUTOFF = 88.0
"""Minimum rapidfuzz ratio (0..100) for a misspelt query word to stand for a known value."""
MIN_FUZZY_CHARS = 6
"""Shorter words are only matched exactly ("word" is not a misspelt "World")."""
VARIANT_CONFIDENCE = 0.97
"""A value matched in another number ("computer" for "computers")."""
AMBIGUOUS_CONFIDENCE = 0.9
"""A parse that kept several readings of one value is less sure than an exact one."""
TIE_MARGIN = 0.2
"""Exact matches of the same words in two fields whose preferences differ by less are
both kept, as an ``or``."""

_NEGATION = re.compile(r"(?:(?:\bnot|n[’']t)\s+(?:[a-z]+\s+)?|\b(?:except|excluding|"
                       r"other than|without|but not|no)\s+)"
                       r"(?:in\s+|from\s+|the\s+|by\s+|of\s+|a\s+)*[\"'`‘’“”]*\s*$", re.I)
"""A negation right before a value, perhaps with its verb between ("not in Paris", "do not
use English", "don't speak Dutch")."""
_ZH_NEGATION = re.compile(r"(?:不是|不在|不属于|并非|除了|除|不包括|不含|排除|非)"
                          r"(?:在|于|来自|住在|位于|属于)?\s*$")
"""The same in Chinese, right before the value ("不是北京的客户", "除了上海")..."""
_ZH_EXCEPT_AFTER = re.compile(r"\s*(?:以外|之外)")
"""... or right after it ("北京以外的客户")."""


@dataclass(slots=True)
class Match:
    """Words of the question standing for a known value of a field."""

    path: str
    value: str
    span: Span
    score: float
    """How likely this field is the one meant (:func:`preference`)."""
    confidence: float
    """How sure the match is: 1 exact, less for another number or a misspelling."""


def values(q: Question, plan: Plan) -> None:
    """Equality on the known values the question names (see module)."""
    found = _value_matches(q, plan)
    by_path: dict[tuple[str, bool], list[Match]] = {}
    for match in sorted(_best_matches(found, plan), key=lambda c: c.span[0]):
        negated = _negated(q, plan, match)
        readings = other_readings(match, found)
        if readings and not negated:
            first = _first_link(q, [match, *readings])
            if first is None:
                _either(q, plan, [match, *readings])
                continue
            match = first
        by_path.setdefault((match.path, negated), []).append(match)
    for (path, negated), matches in by_path.items():
        if plan.full():
            break
        _equality(q, plan, path, negated, matches)


def _value_matches(q: Question, plan: Plan) -> list[Match]:
    """Every known value the question may name, exactly or misspelt; a word of a field's
    name is no value of it ("Option" inside "package option")."""
    index = value_index(q.candidates, q.serials)
    found = exact_matches(q, index)
    found.extend(fuzzy_matches(q, index, [m.span for m in found] + plan.used))
    names = [m.span for m in q.fields if m.strong]
    return [m for m in found if not any(_inside_longer(m.span, n) for n in names)]


def _inside_longer(span: Span, name: Span) -> bool:
    """``span`` lies inside ``name``, which is longer."""
    return name[0] <= span[0] and span[1] <= name[1] and name[1] - name[0] > span[1] - span[0]


def names_outside_phrases(low: str, schemas: Sequence[ModelSchema],
                          mentions: Mapping[str, list[Span]]) -> dict[str, list[Span]]:
    """``mentions`` without the model names written inside a known value of several words
    ("airlines" inside the airline "American Airlines": the question names an airline,
    not the table, and the value, read whole, is not read as "American" → United States
    with the rest a table's name)."""
    phrases = {v for value in known_values(schemas) if " " in (v := value.lower()) and v in low}
    if not phrases:
        return dict(mentions)
    inside = [span for v in phrases for span in find_phrase(low, v)]
    return spans_outside(mentions, inside)


def _negated(q: Question, plan: Plan, match: Match) -> bool:
    """The value is negated ("not Jazz"); a Chinese negation ("除了", "以外") is used up:
    understood, no text to match."""
    said = _negation(q.low, match.span)
    if said is not None and HAN_CHAR.search(q.low[match.span[0]:match.span[1]]):
        plan.used.append(said)
    return said is not None


def _as_written(text: str) -> str:
    """Case kept, width and script made one (short values must match case)."""
    return to_simplified(fold_width(text))


def _negation(low: str, span: Span) -> Span | None:
    """Where the negation of the value at ``span`` is said, if it is."""
    start = max(0, span[0] - 25)
    m = _NEGATION.search(low[start:span[0]])
    if m is None and HAN_CHAR.search(low[span[0]:span[1]]):
        m = _ZH_NEGATION.search(low[start:span[0]])
        if m is None:
            after = _ZH_EXCEPT_AFTER.match(low, span[1])
            return after.span() if after else None
    return (start + m.start(), start + m.end()) if m else None


def exact_matches(q: Question, index: ValueIndex) -> list[Match]:
    """Runs of words equal to a known value (exact first, then other forms of it), and
    values with punctuation at an end found as phrases."""
    hits: list[tuple[Span, int, str]] = []
    variants: list[tuple[Span, int, str]] = []
    words = [m.span() for m in WORD.finditer(q.low)]
    for i in range(len(words)):
        for n in range(1, min(index.max_words, len(words) - i) + 1):
            span = (words[i][0], words[i + n - 1][1])
            text = q.low[span[0]:span[1]]
            exact = index.exact.get(text, ())
            hits.extend((span, pos, value) for pos, value in exact)
            if not exact and len(text) >= 4:
                variants.extend((span, pos, value) for form in _other_forms(text, n)
                                for pos, value in index.exact.get(form, ()))
    hits.extend(_punctuated(q, index))
    hits.extend(chinese_matches(q, index))
    return [*_as_matches(q, hits, EXACT_CONFIDENCE), *_as_matches(q, variants,
                                                                  VARIANT_CONFIDENCE)]


def _punctuated(q: Question, index: ValueIndex) -> list[tuple[Span, int, str]]:
    """Values starting or ending with other than a letter or digit ("Co.", "C++"),
    which no run of words is: found as phrases."""
    return [(span, pos, value) for pos, value, vlow in index.odd
            if vlow in q.low  # most are not: skip the call
            for span in find_phrase(q.low, vlow)]


def _other_forms(text: str, n: int) -> list[str]:
    """Other forms of ``n`` words a value may be named by: "computer" for "computers",
    "Kyle" for "Kyle's", and for one or two words "France" for "French", "Asia" for
    "Asian"."""
    forms = set(plural_forms(text)) - {text}
    if text.endswith(("'s", "’s")):  # "Kyle's id"
        forms.add(text[:-2])
    if n <= 2:
        forms |= set(derived_values(text))
    return sorted(forms)


def _as_matches(q: Question, hits: list[tuple[Span, int, str]], base: float) -> list[Match]:
    """Hits (span, candidate, value) as matches; short values ("NY", "USA") must match
    case and all."""
    found: list[Match] = []
    for span, pos, value in hits:
        if len(value) <= 3 and _as_written(q.quote(span)) != _as_written(value):
            continue
        cand = q.candidates[pos]
        found.append(Match(cand.path, value, span, preference(q, cand, span, base), base))
    return found


def fuzzy_matches(q: Question, index: ValueIndex, taken: list[Span]) -> list[Match]:
    """Misspelt values: runs of 1–3 words not yet matched against the known values."""
    if not index.choices:
        return []
    words = [(m.group(0), m.span()) for m in WORD.finditer(q.low)]
    taken = list(taken)
    out: list[Match] = []
    for n in (3, 2, 1):
        for i in range(len(words) - n + 1):
            span = (words[i][1][0], words[i + n - 1][1][1])
            text = q.low[span[0]:span[1]]
            if not _worth_fuzzy(text, [w for w, _ in words[i:i + n]], span, taken):
                continue
            for _choice, ratio, idx in process.extract(
                    text, index.choices, scorer=fuzz.ratio, score_cutoff=q.fuzzy_cutoff,
                    limit=3):
                pos, value = index.owners[idx]
                cand = q.candidates[pos]
                base = ratio / 100.0 * 0.9
                out.append(Match(cand.path, value, span, preference(q, cand, span, base), base))
            if any(c.span == span for c in out):
                taken.append(span)
    return out


def _worth_fuzzy(text: str, words: list[str], span: Span, taken: list[Span]) -> bool:
    """A run of ``words`` worth looking up as a misspelt value: long enough, over no words
    matched, not Chinese (Chinese values are found inside the question, exactly), and not
    only stop words and numbers."""
    return len(text) >= MIN_FUZZY_CHARS and not any(overlaps(span, t) for t in taken) \
        and not HAN_CHAR.search(text) and not all(w in STOPWORDS or w.isdigit() for w in words)


def preference(q: Question, cand: Candidate, span: Span, base: float) -> float:
    """How likely ``cand`` is the field meant for a value at ``span`` (≥ ``base``): its
    field or model named close by, own fields before related ones, two hops last."""
    score = base
    near = near_field(span[0], q.fields, lambda c: c.path == cand.path, window=30)
    if near is None:  # "Jazz genre": the field or its model named right after the value
        near = near_field(span[1], q.fields, lambda c: c.path == cand.path, window=12)
    if near is not None:
        score += 0.5
    if cand.relation is not None and cand.schema.id == q.target.id:
        score -= 0.2  # a self-relation (Employee.reportsto) only when named
    elif cand.relation is not None:
        score += _relation_preference(q, cand, span)
    else:
        score += 0.15
    if len(cand.field.values) <= 50:
        score += 0.1
    return score


def _relation_preference(q: Question, cand: Candidate, span: Span) -> float:
    assert cand.relation is not None
    score = 0.0
    spans = list(q.models.get(cand.schema.id, []))
    rel_words = find_phrase(q.low, words_of(cand.relation.name))
    if cand.second is not None:  # two hops: only when nothing closer holds it
        rel_words += find_phrase(q.low, words_of(cand.second.name))
        score -= 0.15
    close = [s for s in [*spans, *rel_words]
             if abs(s[0] - span[1]) < 30 or abs(span[0] - s[1]) < 30]
    if close:
        score += 0.4
    elif spans or rel_words:
        score += 0.2
    if cand.relation.type == "hasMany":
        score -= 0.1
    return score


def _best_matches(found: list[Match], plan: Plan) -> list[Match]:
    """Longest matches first, then the most likely field; no two overlapping, none over
    words already understood."""
    chosen: list[Match] = []
    for match in sorted(found, key=lambda c: (-(c.span[1] - c.span[0]), -c.score)):
        if plan.free(match.span) and not any(overlaps(match.span, c.span) for c in chosen):
            chosen.append(match)
    return chosen


def other_readings(match: Match, found: list[Match]) -> list[Match]:
    """Equally exact matches of the same words in other fields, nearly as likely
    (within :data:`TIE_MARGIN`): the query does not say which one is meant."""
    return [c for c in found if c.span == match.span and c.path != match.path
            and c.confidence == match.confidence == EXACT_CONFIDENCE
            and c.score >= match.score - TIE_MARGIN]


def _first_link(q: Question, matches: list[Match]) -> Match | None:
    """The same field of one model reached by two links of the target ("Kyle" as
    ``student.name`` or ``friend.name`` of a table ``friend(student_id, friend_id)``): the
    link whose column comes first, by the convention of such tables that the owner comes
    before what it owns (follower → followed, from → to); ``None`` when the readings are
    anything else."""
    fields = [f.name.lower() for f in q.target.fields]
    rels = {r.name: r for r in q.target.relations if r.type == "hasOne"}
    ranked: list[tuple[int, Match]] = []
    reached: set[tuple[str, str]] = set()  # (field path past the link, model linked)
    for m in matches:
        rel_name, _, rest = m.path.partition(".")
        rel = rels.get(rel_name)
        if rel is None or "." in rest or rel.foreign.lower() not in fields:
            return None
        ranked.append((fields.index(rel.foreign.lower()), m))
        reached.add((rest, rel.model.lower()))
    return min(ranked, key=lambda r: r[0])[1] if len(reached) == 1 else None


def _either(q: Question, plan: Plan, matches: list[Match]) -> None:
    """One condition read several ways: their ``or``, with a note saying so."""
    if plan.full():
        return
    plan.wheres.append({"or": [{"field": c.path, "op": "=", "value": c.value}
                               for c in matches]})
    plan.notes.append(" or ".join(f"{c.path} = {c.value!r}" for c in matches)
                      + f" (\"{q.quote(matches[0].span)}\" could be any of these)")
    plan.value_conditions += 1
    plan.evidence += max(2.0 if "." not in c.path else 1.5 for c in matches)
    plan.confidence = min(plan.confidence, AMBIGUOUS_CONFIDENCE)
    plan.used.append(matches[0].span)


_EQUALITY_OPS = {(False, False): "=", (False, True): "!=", (True, False): "in",
                 (True, True): "not in"}
"""The operator by (several values, negated)."""


def _equality(q: Question, plan: Plan, path: str, negated: bool,
              matches: list[Match]) -> None:
    """``=`` / ``!=`` one value, ``in`` / ``not in`` several, noting any inexact match."""
    found = list(dict.fromkeys(c.value for c in matches))
    why = _unsayable(q, path, negated, matches)
    if why is not None:
        span = (min(c.span[0] for c in matches), max(c.span[1] for c in matches))
        plan.cannot_say(span, q.quote(span), why)
        return
    many = len(found) > 1
    if many and not negated and _all_of(q, path, matches):
        for v in found:  # "countries that speak both English and Dutch": each one
            plan.wheres.append({"field": path, "op": "=", "value": v})
        plan.notes.append(f"{path} = each of {found!r}")
        _matched(plan, matches, 1.5)
        return
    op, value = _EQUALITY_OPS[many, negated], found if many else found[0]
    plan.wheres.append({"field": path, "op": op, "value": value})
    plan.notes.append(f"{path} {op} {value!r}" + "".join(
        f" (\"{q.quote(c.span)}\" ≈ {c.value!r})" for c in matches
        if q.low[c.span[0]:c.span[1]] != c.value.lower()))
    _matched(plan, matches, 2.0 if "." not in path else 1.5)


def _matched(plan: Plan, matches: list[Match], weight: float) -> None:
    """The plan as sure as its least sure match; each match is evidence (``weight`` per
    exact one) and uses its words."""
    plan.confidence = min(plan.confidence, *(c.confidence for c in matches))
    plan.value_conditions += 1
    plan.evidence += sum(c.confidence * weight for c in matches)
    plan.used.extend(c.span for c in matches)


_BOTH = re.compile(r"\bboth\b|都|同时")
_NONE_OF = re.compile(r"\b(?:(?:do|does|did)\s+not|(?:don|doesn|didn)['’]t|without|but\s+not)\b",
                      re.I)
"""A negated verb ("do not speak English"): none of the related rows has the value — not
"other than English" or "that are not English" (some related row has another)."""


def _unsayable(q: Question, path: str, negated: bool, matches: list[Match]) -> str | None:
    """Why values the question states can't be said as a condition on ``path``, if they
    can't: a value of the rows the target has many of under a negated verb ("countries
    that do not speak English") means that none of them has it, while a condition through the
    relation is met by any one row ("has a language other than English"); "both English
    and French" of a field each row holds once (the rows are not the ones holding
    both)."""
    rel = _to_many(q, path)
    if negated and rel is not None:
        return _none_of(q, rel, matches)
    if not negated and rel is None:
        return _both(q, path, matches)
    return None


def _none_of(q: Question, rel: str, matches: list[Match]) -> str | None:
    """Values of the rows the target has many of (through ``rel``) under a negated verb:
    "none of them has it", which a condition through the relation does not say."""
    said = _negation(q.low, min(c.span for c in matches))
    if said is None or not _NONE_OF.search(q.low[max(0, said[0] - 8):said[1]]):
        return None
    return (f"a condition through {rel} is met by any one of them, not by none; "
            "'none of them' can't be said here")


def _both(q: Question, path: str, matches: list[Match]) -> str | None:
    """"both X and Y" of a field each row of the target holds once."""
    first = min(c.span[0] for c in matches)
    if len({c.value for c in matches}) < 2 or not _BOTH.search(q.low[max(0, first - 40):first]):
        return None
    return f"each row holds one {path}, so 'both' is not said of these rows"


def _to_many(q: Question, path: str) -> str | None:
    """The name of the hasMany relation ``path`` goes through first, if it does."""
    rel = q.target.relation(path.split(".", 1)[0]) if "." in path else None
    return rel.name if rel is not None and rel.type == "hasMany" else None


def _all_of(q: Question, path: str, matches: list[Match]) -> bool:
    """Values joined by "and" (not "or") on a field of rows the target has many of: each
    is required ("countries that speak English and Dutch" speak both); on a field of the
    target itself "and" lists alternatives ("singers from France and Germany")."""
    if _to_many(q, path) is None:
        return False
    spans = sorted(c.span for c in matches)
    between = q.low[spans[0][1]:spans[-1][0]]
    return re.search(r"\band\b|&|和|与|及|以及", between) is not None and \
        re.search(r"\bor\b|或", between) is None
