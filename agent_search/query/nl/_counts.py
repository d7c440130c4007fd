"""Counts over relations: "artists with more than 5 albums" → ``count(albums) > 5`` over
a hasMany relation of the target, named by the relation or by its model."""

from __future__ import annotations

import re

from agent_search.query.dsl import ModelSchema, RelationSchema
from agent_search.query.nl._lexicon import plural_forms, words_of
from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._schema import model_phrases

COUNT_OPS = {"more than": ">", "over": ">", "greater than": ">", "at least": ">=",
             "less than": "<", "fewer than": "<", "under": "<", "at most": "<=",
             "no more than": "<=", "exactly": "="}
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
                 "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_OPS = "|".join(sorted(COUNT_OPS, key=len, reverse=True))
_N = r"(?P<n>\d{1,6}|" + "|".join(_NUMBER_WORDS) + r")\s+"
_TAIL = r"(?P<more>or\s+(?:more|fewer|less)\s+)?(?P<rest>[^,.;?!]{1,60})"
_COUNT_CMP = re.compile(r"\b(?:with|having|has|have|had)\s+(?:(?P<cmp>" + _OPS + r")\s+)?"
                        + _N + _TAIL, re.I)
_COUNT_CMP_VERB = re.compile(r"\b(?:who|that|which)\s+[a-z]+\s+(?P<cmp>" + _OPS + r")\s+"
                             + _N + _TAIL, re.I)
"""The same after any verb, with a comparator ("teachers who teach at least two courses")."""


def counts(q: Question, plan: Plan) -> None:
    """Each "with/having [comparator] N <relation>" (N a numeral or a number word up to
    ten) and "who <verb> <comparator> N <relation>" on a hasMany relation of the target."""
    relations = [r for r in q.target.relations if r.type == "hasMany"]
    if not relations:
        return
    for m in [*_COUNT_CMP.finditer(q.low), *_COUNT_CMP_VERB.finditer(q.low)]:
        for rel in relations:
            phrase = _named_relation(m.group("rest"), rel, q.by_id.get(rel.model.lower()))
            if phrase is None:
                phrase = _named_through(m.group("rest"), q, rel)
            if phrase is None:
                continue
            if plan.free((m.start(), m.start("rest"))):  # else the model name is "used"
                _add_count(plan, m, rel, (m.start(), m.start("rest") + len(phrase)))
            break


def _named_relation(rest: str, rel: RelationSchema, other: ModelSchema | None) -> str | None:
    """The name of ``rel`` (or of its model) that ``rest`` starts with, longest first."""
    phrases = plural_forms(words_of(rel.name))
    if other is not None:
        phrases |= model_phrases(other)
    return next((p for p in sorted(phrases, key=lambda p: (-len(p), p))
                 if re.match(re.escape(p) + r"(?!\w)", rest)), None)


def _named_through(rest: str, q: Question, rel: RelationSchema) -> str | None:
    """The name of a model the related rows point at, when they are links ("teachers
    who teach at least two courses": a teacher's rows of a table linking teachers to
    courses, each one course): the count of those rows."""
    child = q.by_id.get(rel.model.lower())
    if child is None:
        return None
    for link in child.relations:
        other = q.by_id.get(link.model.lower())
        if link.type != "hasOne" or other is None or other.id == q.target.id:
            continue
        phrase = next((p for p in sorted(model_phrases(other), key=lambda p: (-len(p), p))
                       if re.match(re.escape(p) + r"(?!\w)", rest)), None)
        if phrase is not None:
            return phrase
    return None


def _add_count(plan: Plan, m: re.Match[str], rel: RelationSchema,
               span: tuple[int, int]) -> None:
    op = COUNT_OPS.get((m.group("cmp") or "").lower(), "=")
    if m.group("more"):
        op = ">=" if m.group("more").lower().startswith("or more") else "<="
    raw = m.group("n").lower()
    n = int(raw) if raw.isdigit() else _NUMBER_WORDS[raw]
    path = f"count({rel.name})"
    plan.add(path, op, n, span, f"{path} {op} {n} (\"{m.group(0).strip()}\")")
    plan.value_conditions += 1
