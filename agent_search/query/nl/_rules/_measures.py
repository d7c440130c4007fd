"""Numeric fields named by what they measure, not by their name.

- superlative adjectives ("youngest", "tallest", "richest", "most populous", "largest")
  → an order on the target's numeric or date field whose name holds a noun of what the
  adjective measures (English language data below: "young" measures *age*, or *birth*
  dates in the other direction); one asked for when the model is named in the singular;
- "in ascending order of age", "ordered by earnings descending", "sorted by their names"
  → an order on the field named near the words;
- a number right after a numeric field ("grade 10", "a population of 80000", "birth year
  is either 1948 or 1949") → ``=`` / ``in`` on that field.

No table, column or value of any database is named here: fields are found by the words
of their own names.
"""

from __future__ import annotations

import re

from agent_search.query.dsl import NUMERIC_KINDS, TEMPORAL_KINDS, TEXT_KINDS
from agent_search.query.nl._lexicon import WordTable, words_of
from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._reading._schema import Candidate, FieldMention, is_plain

# adjective (superlative forms) → (nouns it measures, direction on them); general
# English, shared by every schema
_ADJECTIVES: WordTable[tuple[tuple[str, ...], str]] = WordTable((
    (r"youngest", (("age",), "asc")),
    (r"oldest|eldest", (("age",), "desc")),
    (r"tallest|highest", (("height", "elevation", "altitude"), "desc")),
    (r"shortest|lowest", (("height",), "asc")),
    (r"heaviest", (("weight", "mass"), "desc")),
    (r"lightest", (("weight", "mass"), "asc")),
    (r"richest|wealthiest", (("worth", "wealth", "income", "earning", "salary"), "desc")),
    (r"poorest", (("worth", "wealth", "income", "earning", "salary"), "asc")),
    (r"most populous|most populated|most populace", (("population",), "desc")),
    (r"least populous|least populated", (("population",), "asc")),
    (r"largest|biggest", (("area", "size", "capacity", "volume", "population"), "desc")),
    (r"smallest", (("area", "size", "capacity", "volume", "population"), "asc")),
    (r"most highly rated|highest rated|best rated|top rated",
     (("rating", "rate", "score"), "desc")),
    (r"lowest rated|worst rated", (("rating", "rate", "score"), "asc")),
))
ADJECTIVE = re.compile(r"\b(?P<a>" + _ADJECTIVES.alternatives + r")\b", re.I)
_BIRTH = re.compile(r"\bbirth|\bborn\b|\bdob\b", re.I)
_DIRECTION = re.compile(r"\b(?P<d>ascending|descending|increasing|decreasing|asc|desc|"
                        r"alphabetical)\b", re.I)
_ORDER_WORDS = re.compile(r"\b(?:order(?:ed)?|sort(?:ed)?|rank(?:ed)?)\s+(?:them\s+|it\s+)?"
                          r"(?:by|of|on)\b|\border\s+of\b", re.I)
_EQUALS = re.compile(r"\s*(?:(?:is|are|was|were|of|=|equals?|equal\s+to|being|being\s+"
                     r"either|either|exactly)\s+)*(?P<nums>-?\d+(?:\.\d+)?(?:\s*(?:,|or|and|"
                     r",\s*or)\s*-?\d+(?:\.\d+)?)*)\b(?!\s*(?:%|percent|[a-z]))", re.I)
_NUM = re.compile(r"-?\d+(?:\.\d+)?")


def _own_numeric(q: Question, temporal: bool = True) -> list[Candidate]:
    kinds = NUMERIC_KINDS | (TEMPORAL_KINDS if temporal else frozenset())
    return [c for c in q.candidates if c.relation is None and c.field.kind in kinds
            and is_plain(c)]


def linked(c: Candidate) -> bool:
    """A plain field of a model the target points at (hasOne, one hop): one value per
    row of the target, as its own fields have."""
    return c.relation is not None and c.relation.type == "hasOne" and c.second is None \
        and is_plain(c)


def _related_numeric(q: Question) -> list[Candidate]:
    """Numeric and date fields of the models the target points at (hasOne): what a
    superlative measures when the target has no such field ("the tallest poker player"
    by the height of the person it is)."""
    kinds = NUMERIC_KINDS | TEMPORAL_KINDS
    return [c for c in q.candidates if linked(c) and c.field.kind in kinds]


_COMPARATIVES: dict[str, tuple[str, ...]] = {
    "older": ("age",), "younger": ("age",), "taller": ("height",), "shorter": ("height",),
    "heavier": ("weight", "mass"), "lighter": ("weight", "mass"),
    "richer": ("worth", "wealth", "income", "earning", "salary"),
    "wealthier": ("worth", "wealth", "income", "earning", "salary"),
    "poorer": ("worth", "wealth", "income", "earning", "salary")}
"""Comparatives and the nouns they measure (general English, as :data:`_ADJECTIVES`)."""


def measured_by(q: Question, word: str) -> Candidate | None:
    """The numeric field a comparative measures ("taller than 200": a height), the
    target's own, else one of a model it points at; None for other words."""
    nouns = _COMPARATIVES.get(word.lower())
    if nouns is None:
        return None
    own = _own_numeric(q, temporal=False)
    related = [c for c in _related_numeric(q) if c.field.kind in NUMERIC_KINDS]
    return _measuring(own, nouns) or _measuring(related, nouns)


def _measuring(cands: list[Candidate], nouns: tuple[str, ...]) -> Candidate | None:
    """The first field (in the order of ``nouns``) whose name holds one of them."""
    for noun in nouns:
        for c in cands:
            words = words_of(c.field.name).split()
            if any(w.startswith(noun) for w in words):  # "age", "ages", "aged"
                return c
    return None


def adjectives(q: Question, plan: Plan) -> None:
    """"the youngest teacher" → order by age asc (or birth date desc), limit 1 when the
    model is named in the singular (see :func:`ordering.top_n`)."""
    cands = _own_numeric(q)
    for m in plan.unclaimed(ADJECTIVE, q.low):
        if _named_after(q, m.end()) is not None or \
                re.match(r"\s+(?:number|amount|count|total)\b", q.low[m.end():]):
            continue  # "the highest earnings": the field says itself; "the largest number
            # of languages" counts, it measures nothing
        word = m.group("a").lower()
        nouns, direction = _ADJECTIVES[word]
        found = _measured(q, cands, nouns, direction)
        if found is not None:
            plan.order(found[0].path, found[1], m.span(), f"\"{word}\"")


def _measured(q: Question, cands: list[Candidate], nouns: tuple[str, ...],
              direction: str) -> tuple[Candidate, str] | None:
    """The field an adjective measuring ``nouns`` orders by, and in which direction: the
    target's own, else (for age) its birth date the other way round, else a related
    model's."""
    cand = _measuring(cands, nouns)
    if cand is not None:
        return cand, direction
    births = [c for c in cands if _BIRTH.search(words_of(c.field.name))]
    if births and nouns == ("age",):
        return births[0], "desc" if direction == "asc" else "asc"
    cand = _measuring(_related_numeric(q), nouns)
    return None if cand is None else (cand, direction)


def _named_after(q: Question, pos: int) -> FieldMention | None:
    return next((m for m in q.own_mentions
                 if 0 <= m.span[0] - pos <= 1 and is_plain(m.candidate)), None)


def ordered_by(q: Question, plan: Plan) -> None:
    """"in ascending order of age", "ordered by their earnings descending", "sorted by
    name": an order on the field named within a few words of the order words."""
    marks = [(m.span(), m.group("d").lower()) for m in _DIRECTION.finditer(q.low)]
    marks += [(m.span(), "") for m in _ORDER_WORDS.finditer(q.low)]
    own = [m for m in q.fields if _orderable(m)]
    direction = next(("desc" for _, d in marks if d in ("descending", "decreasing", "desc")),
                     "asc")
    for span, word in sorted(marks):
        # "ordered by X" names X after it; "X descending" may name it before
        best = _nearest(q, own, span, after_only=not word)
        if best is not None and all(o["field"] != best.candidate.field.name
                                    for o in plan.orders):
            plan.order(best.candidate.field.name, direction, span, q.quote(span))
            plan.used.append(best.span)
    for span, _ in marks:
        plan.used.append(span)


def _orderable(m: FieldMention) -> bool:
    """A field of the target's own a question may order by (not its key)."""
    field = m.candidate.field
    return m.candidate.relation is None and not field.primary and \
        field.kind in NUMERIC_KINDS | TEMPORAL_KINDS | TEXT_KINDS


def _nearest(q: Question, mentions: list[FieldMention], span: tuple[int, int], *,
             after_only: bool = False) -> FieldMention | None:
    """The field named closest after the order words (within 4 words), else before."""
    ranked: list[tuple[int, FieldMention]] = []
    for m in mentions:
        after = m.span[0] >= span[1]
        if not after and (after_only or m.span[1] > span[0]):
            continue
        gap = q.low[span[1]:m.span[0]] if after else q.low[m.span[1]:span[0]]
        words = len(gap.split())
        if words <= 4 and not re.search(r"[,;]|\band\b", gap):  # before, or weak: ranked lower
            ranked.append((words * 2 + (not after) + 3 * (not m.strong), m))
    return min(ranked, key=lambda r: r[0])[1] if ranked else None


def field_numbers(q: Question, plan: Plan) -> None:
    """"grade 10", "a population of 80000", "birth year is either 1948 or 1949": the
    numbers right after a numeric field named in full."""
    for mention in sorted(q.fields, key=lambda x: x.span[0]):
        cand = mention.candidate
        m = _EQUALS.match(q.low, mention.span[1])
        if m is None or not _takes_numbers(mention) or not plan.free(m.span("nums")):
            continue
        span = m.span("nums")
        numbers = [_as_written(n) for n in _NUM.findall(m.group("nums"))]
        if cand.field.kind == "integer" and any(isinstance(n, float) for n in numbers):
            continue
        if len(numbers) == 1:
            plan.add(cand.path, "=", numbers[0], span,
                     f"{cand.path} = {numbers[0]} (\"{q.quote((mention.span[0], span[1]))}\")")
        else:
            plan.add(cand.path, "in", numbers, span, f"{cand.path} in {numbers}")
        plan.value_conditions += 1


def _as_written(number: str) -> int | float:
    """``"10"`` → 10, ``"1.5"`` → 1.5: an integer unless written with a decimal point."""
    return float(number) if "." in number else int(number)


def _takes_numbers(mention: FieldMention) -> bool:
    """A plain numeric field named in full, the target's or one it points at."""
    cand = mention.candidate
    rel = cand.relation
    return mention.strong and cand.field.kind in NUMERIC_KINDS and is_plain(cand) and \
        cand.second is None and (rel is None or rel.type == "hasOne")
