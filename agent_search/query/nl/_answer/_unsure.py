"""When the parse is unsure: a reason to answer nothing rather than something wrong.

A wrong set of records is worse than none: an agent cites it. After the extractors ran,
these checks compare what the question *says* with what the plan *computes*, and each
returns a reason when a part of the question found no place in the plan:

- a **superlative** ("the highest", "the most common", "the fewest") with nothing to
  order by and no maximum or minimum computed: the records or groups shown are not the
  one asked for ("Which grade has the most students?" listing every grade);
- a superlative **of an aggregate** ("the category with the highest average price")
  without groups ordered by that aggregate: the answer is not per group;
- an **aggregate word** ("average", "sum") computing nothing, and not a field's name: the
  records shown are not the number asked for; or, beside other numbers computed, not
  its own function ("the average person for each job" counted per job);
- a **condition** stated and placed on no field ("more than 2" where no field counts):
  the rows shown would not meet it;
- an **order** asked ("ordered by", "in descending order") with nothing to order by;
- "how many **different**" with no distinct values counted: the number of records is not
  the number asked for;
- a **possessive** naming another model ("Kyle's *friends*") while the answer is the
  possessor's model;
- "**both** … and …" with fewer than two conditions understood;
- conditions on **two fields of the rows the target has many of** (each met by any one
  of those rows, not by the same one, as asked);
- a condition the DSL **can't say** (:meth:`Plan.cannot_say`: "no cartoons directed by
  X", "do not speak English" through a hasMany relation, "both X and Y" of one field);
- a **negation** ("not", "no", "never", "without", "n't") that no extractor read and no
  negated condition carries ("artists with no albums" listing every artist, "tracks that
  are not longer than 5 minutes" listing the longer ones).

The checks are rules of the language, not of a schema: each is one regular expression and
one test of the plan, in :data:`CHECKS`, run in that order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from agent_search.query.nl._lexicon import overlaps
from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._reading._schema import every_span, overlaps_any

EXTREME = re.compile(
    r"(?<!\bat )\b(?:highest|lowest|largest|smallest|biggest|greatest|fewest|least|most|"
    r"maximum|minimum|longest|shortest|oldest|youngest|earliest|newest|cheapest|tallest|"
    r"heaviest|lightest|richest|poorest)\b(?! of\b)", re.I)
"""True superlatives ("at most 3", "at least 2", "most of" are comparisons or quantities)."""
EXTREME_OF_AGGREGATE = re.compile(
    r"\b(?:highest|lowest|largest|smallest|biggest|greatest|most|least|fewest|maximum|"
    r"minimum|max|min|top)\s+(?:average|avg|mean|total|sum|combined|overall)\b", re.I)
AGGREGATE_WORD = re.compile(r"\b(?:average|avg|mean|sum|median)\b", re.I)
ORDER_ASKED = re.compile(
    r"\b(?:order(?:ed)?|sort(?:ed)?|rank(?:ed)?)\s+(?:\w+\s+){0,2}?by\b|"
    r"\b(?:ascending|descending|increasing|decreasing|alphabetical(?:ly)?)\b", re.I)
DISTINCT_COUNT = re.compile(r"\bhow many\s+(?:different|distinct|unique)\b|"
                            r"\bnumber of\s+(?:different|distinct|unique)\b", re.I)
POSSESSIVE = re.compile(r"\b\w+['’]s\s+(?=\w)", re.I)
NEGATION = re.compile(r"\b(?:not|no|never|without|none|neither|nor|except|excluding)\b|n['’]t\b",
                      re.I)
BOTH = re.compile(r"\bboth\s+(?:the\s+|their\s+|its\s+)?", re.I)
NEGATED_OPS = frozenset({"!=", "not in", "not like", "is null"})
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'|`[^`]*`|“[^”]*”")

Check = Callable[[Question, Plan, bool], "str | None"]


def unsure(q: Question, plan: Plan, grouped: bool) -> str | None:
    """The first reason (of :data:`CHECKS`) to answer nothing, or None."""
    for check in CHECKS:
        reason = check(q, plan, grouped)
        if reason is not None:
            return reason
    return None


def _said(pattern: re.Pattern[str], q: Question, plan: Plan) -> Iterator[re.Match[str]]:
    """Matches of ``pattern`` in the question, outside quotes, not written as a name
    (capitalised mid-sentence: "Greatest Hits" is a value) and not part of a value a
    condition compares with ("albums with greatest hits in the title")."""
    quoted = [m.span() for m in _QUOTED.finditer(q.low)]
    values = " ".join(_values(plan.wheres)).lower()
    for m in pattern.finditer(q.low):
        if overlaps_any(m.span(), quoted) or m.group(0).lower() in values:
            continue
        if m.start() > 0 and q.text[m.start():m.start() + 1].isupper():
            continue
        yield m


def _conditions(wheres: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every condition, those an ``or`` / ``and`` joins before the join itself."""
    for w in wheres:
        for nested in (w.get("or"), w.get("and")):
            if nested:
                yield from _conditions(list(nested))
        yield w


def _compared(wheres: list[dict[str, Any]]) -> Iterator[Any]:
    """Every value a condition compares with (each of a list of them)."""
    for w in _conditions(wheres):
        value = w.get("value")
        yield from value if isinstance(value, list) else [value]


def _values(wheres: list[dict[str, Any]]) -> Iterator[str]:
    return (v for v in _compared(wheres) if isinstance(v, str))


@dataclass(frozen=True)
class _Unmet:
    """A word asking for something (``pattern``) that the plan does not give unless
    ``given``: the reason says so with the words said (``{said}``)."""

    pattern: re.Pattern[str]
    given: Callable[[Plan, bool], bool]
    reason: str


def _unmet(rule: _Unmet, q: Question, plan: Plan, grouped: bool) -> str | None:
    """The rule's reason, when the plan does not give what the question first asks by it."""
    if rule.given(plan, grouped):
        return None
    said = next((m.group(0) for m in _said(rule.pattern, q, plan)), None)
    return None if said is None else rule.reason.format(said=repr(said))


def _ordered(plan: Plan, grouped: bool) -> bool:
    """Records or groups are ordered, or a maximum or minimum is computed."""
    extreme_fn = any(a.lower().startswith(("max(", "min(")) for a in plan.aggregates)
    return bool(plan.orders or plan.aggregate_orders or extreme_fn)


def _groups_ranked(plan: Plan, grouped: bool) -> bool:
    """Groups are ordered by an aggregate."""
    return bool(grouped and plan.group_by and plan.aggregate_orders)


def _values_counted(plan: Plan, grouped: bool) -> bool:
    """Distinct values are counted, or groups formed (one per value)."""
    return bool(any("distinct" in a.lower() for a in plan.aggregates) or plan.group_by)


superlative_without_order = partial(_unmet, _Unmet(
    EXTREME, _ordered, "could not tell what {said} is measured by; no records are shown "
    "(they would not be the one asked for)"))
superlative_of_ungrouped_aggregate = partial(_unmet, _Unmet(
    EXTREME_OF_AGGREGATE, _groups_ranked, "{said} ranks groups by an aggregate, and no "
    "groups to rank were understood; no answer is shown (it would not be per group)"))
order_not_placed = partial(_unmet, _Unmet(
    ORDER_ASKED, _ordered, "{said} asks for an order, and no field to order by was "
    "understood; no records are shown (they would not be in the order asked for)"))
distinct_not_counted = partial(_unmet, _Unmet(
    DISTINCT_COUNT, _values_counted, "{said} counts values, and no field whose values to "
    "count was understood; no count is given (the number of records would not be it)"))


def aggregate_not_computed(q: Question, plan: Plan, grouped: bool) -> str | None:
    if grouped:
        return None
    names = [m.span for m in q.fields]
    if any(isinstance(w.get("value"), dict) for w in plan.wheres):  # "above average"
        names += plan.used  # compared with a computed value (query/nl/_computed.py)
    for m in _said(AGGREGATE_WORD, q, plan):
        if not overlaps_any(m.span(), names):
            return (f"{m.group(0).lower()!r} is not computed (no field to compute it on "
                    "was understood); no records are shown (they are not the number "
                    "asked for)")
    return None


_FUNCTION_WORDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:average|avg|mean)\b", re.I), "avg("),
    (re.compile(r"\bsum\b", re.I), "sum("),
)
"""An aggregate word and the function it asks for (grammar, not a schema)."""


def function_not_computed(q: Question, plan: Plan, grouped: bool) -> str | None:
    """"How old is the *average* person for each job" answered with a count per job:
    numbers are computed, and not the function a word asks for (the same word naming a
    field, "Average_Price", asks for nothing): the numbers shown are not the ones asked
    for."""
    if not grouped:
        return None  # aggregate_not_computed reads these words then
    computed = repr([plan.aggregates, plan.aggregate_orders, plan.having, plan.wheres,
                     plan.orders]).lower()
    names = [m.span for m in q.fields]
    for pattern, function in _FUNCTION_WORDS:
        if function in computed:
            continue
        for m in _said(pattern, q, plan):
            if not overlaps_any(m.span(), names):
                return (f"{m.group(0).lower()!r} asks for {function[:-1]}(), which is not "
                        "computed; no numbers are shown (they are not the ones asked for)")
    return None


_PER_GROUP = re.compile(r"\b(?:for|in|of|by)\s+(?:each|every|different|various|all\s+the\s+"
                        r"different)\b|\bper\b|\beach\s+of\b|\bgrouped\s+by\b", re.I)


def group_not_made(q: Question, plan: Plan, grouped: bool) -> str | None:
    """"the total revenue for each manufacturer", "the average age for different job
    titles": a function asked per group, computed once over every row (no group read)
    is not the numbers asked for."""
    if not plan.aggregates or plan.group_by or plan.answer_model is not None:
        return None
    for m in _said(_PER_GROUP, q, plan):
        if plan.free(m.span()):
            return (f"{m.group(0).lower()!r} asks for one number per group, and no group "
                    "was understood; nothing is computed (one number over every row "
                    "would not be it)")
    return None


def possessed_not_answered(q: Question, plan: Plan, grouped: bool) -> str | None:
    """"Kyle's friends" asks for the friends: a model named right after a possessive
    that is not the one answered (nor part of a field of it: "the channel's *series*
    name") means the answer is the possessor's own row."""
    answered = {plan.target.id.lower(), (plan.answer_model or "").lower()}
    for m in POSSESSIVE.finditer(q.low):  # the possessor is mostly a name: no _said
        for model_id, spans in q.models.items():
            end = next((b for a, b in spans if a == m.end()), None)
            if end is not None and model_id.lower() not in answered and \
                    not _own_field_at(q, (m.end(), end)):
                return (f"{q.text[m.start():end]!r} asks for {model_id} records, and the "
                        f"answer understood is of {plan.target.id}; no records are shown")
    return None


def _own_field_at(q: Question, span: tuple[int, int]) -> bool:
    """A field of the target's own is named at ``span``."""
    return any(f.candidate.relation is None and overlaps(f.span, span) for f in q.fields)


def negation_not_read(q: Question, plan: Plan, grouped: bool) -> str | None:
    if _negated(plan.wheres):
        return None
    for m in _said(NEGATION, q, plan):
        if not overlaps_any(m.span(), plan.used):
            return (f"{m.group(0)!r} was not understood as a condition; no records are "
                    "shown (they would include the ones it excludes)")
    return None


def _negated(wheres: list[dict[str, Any]]) -> bool:
    """Some condition excludes: ``!=``, ``not in``, ``not like``, ``is null``, or a count
    of related rows compared with zero ("with no albums")."""
    return any(w.get("op") in NEGATED_OPS or (
        str(w.get("field", "")).startswith("count(") and w.get("value") == 0)
        for w in _conditions(wheres))


def condition_not_placed(q: Question, plan: Plan, grouped: bool) -> str | None:
    if not plan.unplaced:
        return None
    return (f"no records are shown: they would not meet {plan.unplaced[0]!r}, which is "
            "about no field the question names")


def condition_not_sayable(q: Question, plan: Plan, grouped: bool) -> str | None:
    if not plan.unsayable:
        return None
    return f"no records are shown: they would not meet {plan.unsayable[0]}"


def both_not_met(q: Question, plan: Plan, grouped: bool) -> str | None:
    """"both … and …" joins two conditions; with fewer understood, one found no place
    ("students who both have friends and are liked"). A field named right after "both"
    ("both the name and the age") asks for fields, not conditions."""
    if len(plan.wheres) + len(plan.having) >= 2:
        return None
    for m in _said(BOTH, q, plan):
        if not any(f.span[0] == m.end() for f in q.fields):
            return ("'both … and …' asks for two conditions together, and fewer were "
                    "understood; no records are shown")
    return None


def one_row_not_said(q: Question, plan: Plan, grouped: bool) -> str | None:
    """Conditions on two fields of the rows the target has many of ("both English and
    French are official languages": ``Language`` and ``IsOfficial``) are each met by any
    one of those rows, not by the same row, as the question means."""
    fields = _child_paths(q, plan)
    rel_name = next((r for r, paths in fields.items() if len(paths) > 1), None)
    if rel_name is None or plan.answer_model is not None:
        return None
    return (f"conditions on {' and '.join(sorted(fields[rel_name]))} would each be met by "
            f"any one of the {rel_name}, not by the same one; no records are shown")


def _child_paths(q: Question, plan: Plan) -> dict[str, set[str]]:
    """The conditions' fields of rows the target has many of, by the relation to them."""
    fields: dict[str, set[str]] = {}
    for path in _paths(plan.wheres):
        rel = q.target.relation(path.split(".", 1)[0]) if "." in path else None
        if rel is not None and rel.type == "hasMany":
            fields.setdefault(rel.name, set()).add(path)
    return fields


_NUMBER = re.compile(r"(?<![\w.,])\d+(?:\.\d+)?(?![\w.,]?\w)")


def number_not_placed(q: Question, plan: Plan, grouped: bool) -> str | None:
    """A number no rule read ("teachers who teach grade 5", with no grade field on the
    teachers) is a condition lost: the records shown would not meet it."""
    names = [m.span for m in q.fields] + every_span(q.models)
    read = {float(v) for v in _numbers([*plan.wheres, *plan.having])}
    read |= {float(plan.limit)} if plan.limit else set()
    for m in _said(_NUMBER, q, plan):
        if float(m.group(0)) not in read and \
                not overlaps_any(m.span(), [*plan.used, *names]):
            return (f"no records are shown: the number {m.group(0)!r} was not understood "
                    "as a condition (they would not meet it)")
    return None


def _numbers(wheres: list[dict[str, Any]]) -> Iterator[float]:
    return (float(v) for v in _compared(wheres)
            if isinstance(v, int | float) and not isinstance(v, bool))


def _paths(wheres: list[dict[str, Any]]) -> Iterator[str]:
    return (str(w["field"]) for w in _conditions(wheres) if "field" in w)


CHECKS: tuple[Check, ...] = (
    condition_not_placed,
    condition_not_sayable,
    number_not_placed,
    both_not_met,
    one_row_not_said,
    superlative_of_ungrouped_aggregate,
    superlative_without_order,
    order_not_placed,
    aggregate_not_computed,
    function_not_computed,
    group_not_made,
    distinct_not_counted,
    possessed_not_answered,
    negation_not_read,
)
"""The checks, in the order their reasons are given (one reason per question)."""
