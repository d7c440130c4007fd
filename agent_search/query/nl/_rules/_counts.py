"""Counts over relations: "artists with more than 5 albums" → ``count(albums) > 5`` over
a hasMany relation of the target, named by the relation or by its model; "owners who
have no dogs", "singers that do not have any song", "artists without albums" →
``count(dogs) = 0`` (counted over the rows the caller may see)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from agent_search.query.dsl import ModelSchema, RelationSchema
from agent_search.query.nl._lexicon import plural_forms, words_of
from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._reading._schema import model_phrases

COUNT_OPS = {"more than": ">", "over": ">", "greater than": ">", "at least": ">=",
             "less than": "<", "fewer than": "<", "under": "<", "at most": "<=",
             "no more than": "<=", "exactly": "=", "only": "=", "just": "="}
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
_HAVE = r"(?:have|has|had|own|owns|owned)"
_NONE = re.compile(r"\b(?:with\s+no|without(?:\s+any)?|having\s+no|" + _HAVE + r"\s+no|"
                   r"(?:(?:do|does|did)\s+not|(?:don|doesn|didn)['’]t)\s+" + _HAVE
                   + r"(?:\s+any)?)\s+(?P<rest>[^,.;?!]{1,60})", re.I)
"""None of the related rows: "who have no", "that do not have any", "without"."""
_NONE_VERB = re.compile(r"\b(?:(?:do|does|did)\s+not|(?:don|doesn|didn)['’]t|never)\s+"
                        r"(?!have\b|has\b|had\b)[a-z]{3,}(?:\s+(?:in|on|at|to|for|with|from))?"
                        r"\s+(?:any|a|an|the)\s+(?P<rest>[^,.;?!]{1,60})", re.I)
"""The same said with another verb ("users who did not write any review", "schools that
do not participate in the match"): none of the related rows, when they are named
directly (the target's own relation, not one through a link table: "drivers who did not
win any race" is not "drivers with no results")."""


def _stated_count(m: re.Match[str]) -> tuple[str, int]:
    """"more than 5" → (">", 5); "2 or more" → (">=", 2); "two" → ("=", 2)."""
    op = COUNT_OPS.get((m.group("cmp") or "").lower(), "=")
    if m.group("more"):
        op = ">=" if m.group("more").lower().startswith("or more") else "<="
    raw = m.group("n").lower()
    return op, int(raw) if raw.isdigit() else _NUMBER_WORDS[raw]


_Stated = Callable[[re.Match[str]], tuple[str, int]]
_RULES: tuple[tuple[re.Pattern[str], _Stated, bool, bool], ...] = (
    (_COUNT_CMP, _stated_count, False, True),
    (_COUNT_CMP_VERB, _stated_count, False, True),
    (_NONE, lambda m: ("=", 0), True, True),
    (_NONE_VERB, lambda m: ("=", 0), True, False),
)
"""How a count of related rows is said, the comparison it states, whether the rows
must be named unqualified ("no cartoons directed by Ben Jones" is none *of those*, which
a count of every related row does not say: silent, see :meth:`Plan.cannot_say`), and
whether they may be named through a link table."""
_CLAUSE_END = re.compile(r"\s*(?:$|(?:and|or|but)\b)", re.I)


def counts(q: Question, plan: Plan) -> None:
    """Each "with/having [comparator] N <relation>" (N a numeral or a number word up to
    ten), "who <verb> <comparator> N <relation>" and "who have no <relation>" on a hasMany
    relation of the target."""
    relations = [r for r in q.target.relations if r.type == "hasMany"]
    for pattern, stated, unqualified, through in _RULES if relations else ():
        for m in pattern.finditer(q.low):
            found = _relation_at(q, relations, m.group("rest"), through)
            if found is None or not plan.free((m.start(), m.start("rest"))):
                continue  # else the model name is "used"
            rel, phrase = found
            if unqualified and not _CLAUSE_END.match(m.group("rest")[len(phrase):]):
                plan.cannot_say(m.span(), q.quote(m.span()).strip(), "a count of only some of the "
                                f"related rows ({rel.name}) can't be said")
                continue
            op, n = stated(m)
            path = f"count({rel.name})"
            plan.add(path, op, n, (m.start(), m.start("rest") + len(phrase)),
                     f"{path} {op} {n} (\"{m.group(0).strip()}\")")
            plan.value_conditions += 1


def _relation_at(q: Question, relations: list[RelationSchema], rest: str,
                 through: bool = True) -> tuple[RelationSchema, str] | None:
    """The first of ``relations`` whose rows ``rest`` starts by naming (``through``: or
    the model they link to), and the words."""
    for rel in relations:
        phrase = _named_relation(rest, rel, q.by_id.get(rel.model.lower())) or \
            (_named_through(rest, q, rel) if through else None)
        if phrase is not None:
            return rel, phrase
    return None


def _named_relation(rest: str, rel: RelationSchema, other: ModelSchema | None) -> str | None:
    """The name of ``rel`` (or of its model) that ``rest`` starts with, longest first."""
    phrases = plural_forms(words_of(rel.name))
    if other is not None:
        phrases |= model_phrases(other)
    return _said_first(rest, phrases)


def _said_first(rest: str, phrases: Iterable[str]) -> str | None:
    """The longest of ``phrases`` (ties: in order) that ``rest`` starts with, whole."""
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
        phrase = _said_first(rest, model_phrases(other))
        if phrase is not None:
            return phrase
    return None
