"""Ordering and top-N: "sorted by total desc", "in alphabetical order", "highest total",
"the 5 most expensive", "latest", "cheapest" (one asked for: limit 1)."""

from __future__ import annotations

import re

from agent_search.query.dsl import NUMERIC_KINDS, TEMPORAL_KINDS
from agent_search.query.nl._lexicon import (
    WordTable,
    is_plural,
    overlaps,
    plural_forms,
    words_of,
)
from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._reading._schema import (
    Candidate,
    FieldMention,
    field_for,
    title_field,
)
from agent_search.query.nl._rules._measures import ADJECTIVE, linked

SUPERLATIVES: WordTable[tuple[str, str]] = WordTable((
    (r"most expensive|priciest|costliest|highest[- ]priced|dearest", ("money", "desc")),
    (r"least expensive|cheapest|lowest[- ]priced|most affordable", ("money", "asc")),
    (r"longest", ("duration", "desc")),
    (r"shortest", ("duration", "asc")),
    (r"latest|newest|most recent(?:ly)?|recent(?:ly)?|last", ("date", "desc")),
    (r"oldest|earliest", ("date", "asc")),
    (r"largest|biggest", ("size", "desc")),
    (r"smallest", ("size", "asc")),
    (r"cheap|inexpensive|affordable|budget", ("money", "asc")),
    (r"expensive|pricey|premium", ("money", "desc")),
))
"""Superlatives → the dimension of the field they order by, and the direction."""
SUPERLATIVE = re.compile(r"\b(?P<s>" + SUPERLATIVES.alternatives + r")\b", re.I)
_FIELD_SUPERLATIVE = re.compile(r"\b(?P<dir>highest|lowest|most|fewest|least|largest|"
                                r"smallest|biggest|greatest|max(?:imum)?|min(?:imum)?)\s+",
                                re.I)
_ASCENDING_WORDS = frozenset({"lowest", "fewest", "least", "smallest", "min", "minimum"})
_ALPHA = re.compile(r"\b(?:alphabetical(?:ly)?|a-z|a to z|z-a|z to a)\b", re.I)
_SORT = re.compile(r"\b(?:sort(?:ed)?|order(?:ed)?)\s+by\s+(?P<f>[\w ]{1,40}?)"
                   r"(?:\s+(?P<dir>asc|ascending|desc|descending))?(?:$|[,.;]|\s+(?:and|with|in|for)\b)",
                   re.I)
_THEN_DIRECTION = re.compile(r"\s*(?:in\s+)?(?:an?\s+|the\s+)?(?P<dir>asc|ascending|increasing|"
                             r"desc|descending|decreasing)\b(?:\s+order\b)?", re.I)
"""A direction said after the field and a word ("sorted by price *in descending order*")."""
_TOP = re.compile(r"\b(?:top|first|last|the)\s+(?P<n>\d{1,4})\b|"
                  r"\b(?P<m>\d{1,4})\s+(?=(?:\w+est|most|least|fewest)\b)", re.I)


def _own(q: Question) -> list[Candidate]:
    return [c for c in q.candidates if c.relation is None]


def sort_by(q: Question, plan: Plan) -> None:
    """"sorted by total desc": an order on the target's field of that name or label."""
    own = _own(q)
    for m in _SORT.finditer(q.low):
        cand = _field_named(own, m.group("f").strip())
        if cand is None:
            continue
        said, end = m.group("dir"), m.end()
        then = _THEN_DIRECTION.match(q.low, end) if said is None else None
        if then is not None:
            said, end = then.group("dir"), then.end()
        direction = "desc" if (said or "").lower().startswith(("desc", "decr")) else "asc"
        plan.order(cand.field.name, direction, (m.start(), end),
                   f"\"{q.low[m.start():end].strip()}\"")


def _field_named(cands: list[Candidate], phrase: str) -> Candidate | None:
    """The first of ``cands`` whose name (in either number) or label is ``phrase``."""
    return next((c for c in cands if phrase in plural_forms(words_of(c.field.name))
                 or (c.field.label and phrase == c.field.label.lower())), None)


def alphabetical(q: Question, plan: Plan) -> None:
    """"alphabetical", "a-z" / "z-a": an order on the target's title field."""
    for m in _ALPHA.finditer(q.low):
        title = title_field(plan.target)
        if title:
            direction = "desc" if m.group(0).lower() in ("z-a", "z to a") else "asc"
            plan.order(title, direction, m.span(), "alphabetical")


def field_superlative(q: Question, plan: Plan) -> None:
    """"highest total", "fewest milliseconds": an order on the numeric or date field
    named right after the word."""
    mentions = sorted(q.fields, key=lambda x: x.span[0])
    for m in _FIELD_SUPERLATIVE.finditer(q.low):
        cand = _measure_at(mentions, m.end())
        if cand is None:
            continue
        word = m.group("dir").lower()
        direction = "asc" if word in _ASCENDING_WORDS else "desc"
        plan.order(cand.path, direction, (m.start(), m.end()),
                   f"{word} {words_of(cand.field.name)}")


def _measure_at(mentions: list[FieldMention], at: int) -> Candidate | None:
    """The numeric or date field named right at ``at``: the target's own, else one of a
    model it points at ("the greatest height" of a poker player is its person's)."""
    near = [c for span, c, _ in mentions if 0 <= span[0] - at <= 1
            and c.field.kind in NUMERIC_KINDS | TEMPORAL_KINDS and c.second is None]
    return next((c for c in near if c.relation is None), None) or next(
        (c for c in near if linked(c)), None)


def superlatives(q: Question, plan: Plan) -> None:
    """"most expensive", "latest", "cheapest": an order on the target's field of that
    dimension (money, date, duration, size); none to order by is a warning (except for
    "last" and "recent", which are often just words)."""
    named = [x.span for x in q.fields]
    for m in plan.unclaimed(SUPERLATIVE, q.low):
        if any(overlaps(m.span(), n) for n in named):
            continue  # "last name" is a field, not "latest"
        word = m.group("s").lower()
        dim, direction = SUPERLATIVES[word]
        cand = _measured_by(q, dim, m.end())
        if cand is not None:
            plan.order(cand.field.name, direction, m.span(), f"\"{word}\"")
        elif word not in ("last", "recent"):
            plan.warnings.append(f"no field to order {word!r} by")


def _measured_by(q: Question, dim: str, at: int) -> Candidate | None:
    """The target's field a superlative of dimension ``dim`` said at ``at`` orders by:
    the nearest of that dimension (for size, else a price), else the number field named
    right after ("shortest life expectancy")."""
    own = _own(q)
    own_mentions = q.own_mentions
    cand = field_for(own, dim, own_mentions, at)
    if cand is None and dim == "size":
        cand = field_for(own, "money", q.fields, at)
    return cand or next((x.candidate for x in own_mentions if 0 <= x.span[0] - at <= 1
                         and x.candidate.field.kind in NUMERIC_KINDS), None)


_ONE_WITH = re.compile(r"\b(?:the|which|what)\s+(?P<noun>[a-z]+)\s+(?:with|that\s+has|"
                       r"who\s+has|which\s+has)\s+the\s+(?:\w+est|most|least|fewest)\b")


def _one_with(low: str) -> str:
    """The noun of "the school with the largest enrollment" when the question names no
    model (the school is read from its fields): singular, one is asked for."""
    m = _ONE_WITH.search(low)
    return m.group("noun") if m else ""


def top_n(q: Question, plan: Plan) -> None:
    """"top 5", "the 3": a limit; a superlative with the model named in the singular
    ("the cheapest track") asks for one."""
    for m in plan.unclaimed(_TOP, q.low):
        n = int(m.group("n") or m.group("m"))
        if n >= 1:
            plan.limit = n
            plan.notes.append(f"limit {n}")
            plan.used.append(m.span())
            return
    spans = q.target_spans
    if plan.orders and any(p.search(q.low) for p in (
            SUPERLATIVE, _FIELD_SUPERLATIVE, ADJECTIVE)):
        first = q.low[spans[0][0]:spans[0][1]] if spans else _one_with(q.low)
        if first and not is_plural(first):
            plan.limit = 1
            plan.notes.append("limit 1 (one asked for)")
