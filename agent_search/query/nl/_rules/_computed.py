"""Conditions against a computed value: "products that cost more than the average price",
"singers older than average", "employees whose salary is below the mean" → ``{"field":
"price", "op": ">", "value": {"aggregate": "avg(price)"}}``, which the database computes
over the rows the caller may search (see :mod:`agent_search.query.dsl`).

The field compared is, in this order: the target's numeric field named right after
"average" ("the average price"); the one a comparative measures ("older" → age, a money
word → the target's one money field); the one named just before the comparison ("whose
price is above average"). No field found, or two money fields to choose from: the
condition can't be placed and the question is answered by nothing rather than by a
guess (right or silent). Only the target's own numeric fields: the average is over the
same model. Runs before the aggregate rules, which would read "the average price" as a
request for the number itself.
"""

from __future__ import annotations

import re

from agent_search.query.dsl import NUMERIC_KINDS
from agent_search.query.nl._lexicon import WordTable
from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._reading._schema import Candidate, FieldMention, dimension, is_plain
from agent_search.query.nl._rules._aggregate_words import GLUE
from agent_search.query.nl._rules._measures import measured_by

_ABOVE = (r"(?:more|greater|higher|larger|bigger|longer|older|taller|heavier|richer|"
          r"wealthier|pricier|costlier|more\s+expensive)\s+than|above|over|exceeding|"
          r"exceeds")
_BELOW = (r"(?:less|fewer|lower|smaller|shorter|younger|lighter|poorer|cheaper|"
          r"less\s+expensive)\s+than|below|under")
_AT_LEAST = r"at\s+least|no\s+less\s+than|not\s+less\s+than"
_AT_MOST = r"at\s+most|no\s+more\s+than|not\s+more\s+than"
_OPS = WordTable(((_AT_LEAST, ">="), (_AT_MOST, "<="), (_ABOVE, ">"), (_BELOW, "<")))
_COMPUTED = re.compile(
    r"\b(?P<cmp>" + _OPS.alternatives + r")"
    r"[\s-]+(?:the\s+|their\s+|its\s+)?(?P<fn>average|mean)\b", re.I)
_MONEY = re.compile(r"\b(?:costs?|costing|cheaper|pricier|costlier|expensive|paid|pays?)\b",
                    re.I)
_BEFORE = re.compile(r"^\s*(?:(?:is|are|was|were|be|being|that|which|of|stays?)\s+)*$", re.I)
_COMPARATIVE = re.compile(r"\b(?P<w>[a-z]+er)\s+than\b", re.I)
_VERB = re.compile(r"\b(?:costs?|costing|priced|paid|earns?|earning|weighs?|weighing)\s+$",
                   re.I)
"""A verb naming the measure right before the comparison ("cost more than"): part of it."""


def computed_values(q: Question, plan: Plan) -> None:
    """Each "<comparison> the average [field]" on a field of the target (see module)."""
    for m in plan.unclaimed(_COMPUTED, q.low):
        op = _OPS[m.group("cmp")]
        named = _named_after(q, m.end())
        cand, end = (named.candidate, named.span[1]) if named is not None else (
            _implied(q, m), m.end())
        if cand is None:
            plan.cannot_place(m.span(), m.group(0))
            continue
        verb = _VERB.search(q.low, 0, m.start())
        start = verb.start() if verb is not None else m.start()
        span = (start, end)
        name = cand.field.name
        plan.add(name, op, {"aggregate": f"avg({name})"}, span,
                 f"{name} {op} avg({name}) (\"{q.quote(span)}\")")


def _numeric_own(q: Question) -> list[FieldMention]:
    return sorted((f for f in q.own_mentions
                   if f.candidate.field.kind in NUMERIC_KINDS and is_plain(f.candidate)),
                  key=lambda f: f.span[0])


def _named_after(q: Question, pos: int) -> FieldMention | None:
    """The target's numeric field named right after ``pos`` ("the average *price*"),
    glue words or the target's own name between ("the average product price")."""
    for f in _numeric_own(q):
        if f.span[0] < pos:
            continue
        gap = q.low[pos:f.span[0]]
        for start, end in q.target_spans:
            if pos <= start and end <= f.span[0]:
                gap = gap.replace(q.low[start:end], " ")
        return f if GLUE.match(gap) else None
    return None


def _implied(q: Question, m: re.Match[str]) -> Candidate | None:
    """The field the comparison is about when "average" names none: what a comparative
    measures, the one money field for a money word, else the field named just before."""
    comparative = _COMPARATIVE.search(m.group("cmp"))
    if comparative is not None:
        measured = measured_by(q, comparative.group("w"))
        if measured is not None and measured.relation is None:
            return measured
    if _MONEY.search(q.low[:m.end()]):
        money = [c for c in q.candidates if c.relation is None
                 and dimension(c.field) == "money" and is_plain(c)]
        return money[0] if len(money) == 1 else None
    before = [f for f in _numeric_own(q) if f.span[1] <= m.start()
              and _BEFORE.match(q.low[f.span[1]:m.start()])]
    return before[-1].candidate if before else None
