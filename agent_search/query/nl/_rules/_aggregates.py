"""Questions that ask the database for numbers: "the average, minimum and maximum age",
"the number of teachers from each hometown", "the most common citizenship", "countries
with more than two channels".

- an aggregate word (average/mean, maximum, minimum, total/sum) before a numeric field of
  the target → ``avg(Field)`` ...;
- "each/every/per X" where X is a field of the target, or a model the target points at
  (its title field) → ``group_by``, with ``count`` when nothing else is computed;
- "the most common/frequent/popular X" → group by X, order by ``count`` desc, one answer;
  "the X with the most / the greatest number of <target>" → the same, on X;
- "X with/that have more than / at least N <target>" → group by X, ``having count > N``.

Only fields the question names are grouped or computed on; a word left over stays a
warning of the parser.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from agent_search.query.dsl import NUMERIC_KINDS, TEXT_KINDS
from agent_search.query.nl._answer._children import (
    child_function,
    child_group,
    count_of_children,
    per_target,
)
from agent_search.query.nl._lexicon import find_phrase, is_plural, overlaps, plural_forms, words_of
from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._reading._schema import (
    Candidate,
    FieldMention,
    Span,
    is_plain,
    relation_field,
)
from agent_search.query.nl._rules._aggregate_words import (
    COMMON,
    EACH,
    FN,
    FN_NAME,
    GLUE,
    HAVING,
    HAVING_AFTER,
    HAVING_OP,
    HOW_MANY,
    MOST_OF,
    NUMBER_WORDS,
    WEAK_FN,
    add_group,
)


def aggregates(q: Question, plan: Plan) -> None:
    """Aggregates, groups, "most common" and count conditions on groups (see module)."""
    _distinct_count(q, plan)
    count_of_children(q, plan)
    _functions(q, plan)
    _groups(q, plan)
    child_function(q, plan)
    _most_common(q, plan)
    _most_of_target(q, plan)
    _having(q, plan)
    per_target(q, plan)


def _own_mentions(q: Question) -> list[FieldMention]:
    return sorted((m for m in q.own_mentions if is_plain(m.candidate)),
                  key=lambda m: m.span[0])


def _next_field(q: Question, pos: int, accept: set[str] | None) -> FieldMention | None:
    """The target's field named right after ``pos`` (only glue words between)."""
    for m in _own_mentions(q):
        if m.span[0] < pos:
            continue
        if not GLUE.match(q.low[pos:m.span[0]]):
            return None
        if accept is None or m.candidate.field.kind in accept:
            return m
    return None


def _distinct_count(q: Question, plan: Plan) -> None:
    """"how many different nationalities": ``count(distinct Nationality)`` — a field of the
    target counted, not its records; a numeric field only when "different" is said (the
    number of *passengers* is an amount, not how many amounts there are)."""
    for m in HOW_MANY.finditer(q.low):
        first = _next_field(q, m.end(), None)
        if first is None or not _counts_values(q, m, first):
            continue
        plan.used.append(m.span())
        for listed in _listed(q, first):  # "different series names and contents": each
            plan.compute(f"count(distinct {listed.candidate.field.name})",
                         m.group(0).strip(), listed.span)
        return


def _counts_values(q: Question, m: re.Match[str], named: FieldMention) -> bool:
    """"how many" at ``m`` counts the values of the field ``named`` right after it: not
    when the words are part of a field's name ("number of rooms" for ``num_rooms``), and
    said of a plural or with "different" — of a number only with "different" (the number
    of *passengers* is an amount, not how many amounts there are)."""
    if named.span[0] - m.end() > 1 or any(
            f.span[0] <= m.start() and m.end() < f.span[1] for f in q.fields):
        return False
    if named.candidate.field.kind in NUMERIC_KINDS:
        return bool(m.group("distinct"))
    return bool(m.group("distinct")) or is_plural(q.low[named.span[0]:named.span[1]])


def _listed(q: Question, first: FieldMention) -> Iterator[FieldMention]:
    """The target's field named at ``first`` and each listed right after it ("names and
    contents", "name, age")."""
    named: FieldMention | None = first
    while named is not None:
        yield named
        after = _next_field(q, named.span[1], None)
        joined = after is not None and re.match(r"\s*(?:,|and)",
                                                q.low[named.span[1]:after.span[0]])
        named = after if joined else None


def _functions(q: Question, plan: Plan) -> None:
    """"the average age", "the average, minimum and maximum age": functions of numeric
    fields of the target, when at least one word is a real aggregate word."""
    found = list(plan.unclaimed(FN, q.low))
    if all(m.group("fn").lower() in WEAK_FN for m in found):
        return
    for m in found:
        word = m.group("fn").lower()
        if word == "total" and re.match(r"\s+number\b", q.low[m.end():]):
            continue  # "the total number of X" is a count
        if _in_field_name(q, m.span()):
            continue  # "total points" names the field Total_Points: no function of points
        target = _function_field(q, m, found)
        if target is not None:
            plan.compute(f"{FN_NAME[word]}({target.candidate.field.name})", m.group(0),
                         m.span(), target.span)


def _in_field_name(q: Question, span: tuple[int, int]) -> bool:
    """The word at ``span`` is part of a name of one of the target's fields as said
    ("total points" for ``Total_Points``, "average age" for ``Average_Age``)."""
    return any(m.span[0] <= span[0] and span[1] < m.span[1] for m in _own_mentions(q))


def _function_field(q: Question, m: re.Match[str],
                    found: list[re.Match[str]]) -> FieldMention | None:
    """The numeric field the function word at ``m`` is of: named right after it (or
    within two words), or in a list ("average, minimum and maximum age") the field after
    the list's last word."""
    target = _next_field(q, m.end(), set(NUMERIC_KINDS)) or _near_field(q, m.end())
    if target is not None:
        return target
    later = [x for x in found if x.start() > m.start()]
    if not later or not GLUE.match(q.low[m.end():later[0].start()]):
        return None
    return _next_field(q, later[-1].end(), set(NUMERIC_KINDS))


def _near_field(q: Question, pos: int) -> FieldMention | None:
    """A numeric field of the target named within two words after ``pos``, no other field
    between ("the average expected life expectancy")."""
    after = [m for m in _own_mentions(q) if m.span[0] >= pos]
    if not after or after[0].candidate.field.kind not in NUMERIC_KINDS:
        return None
    gap = q.low[pos:after[0].span[0]]
    return after[0] if len(gap.split()) <= 2 and not re.search(r"[,;?]", gap) else None


Group = tuple[list[str], tuple[int, int]]
"""The fields a group is by, and where the question names it."""


def group_field(q: Question, pos: int) -> Group | None:
    """A group at ``pos``: the first of :data:`_GROUP_READINGS` that reads one there."""
    return next((found for read in _GROUP_READINGS if (found := read(q, pos)) is not None),
                None)


def _own_group(q: Question, pos: int) -> Group | None:
    """The target's field named at ``pos``."""
    m = _next_field(q, pos, None)
    return ([m.candidate.field.name], m.span) if m is not None and m.span[0] - pos <= 2 \
        else None


def _key_group(q: Question, pos: int) -> Group | None:
    """A key of the target named in full at ``pos`` ("each student id")."""
    key = next((x for x in q.own_mentions if x.strong
                and 0 <= x.span[0] - pos <= 2 and not is_plain(x.candidate)
                and not x.candidate.field.primary), None)
    return None if key is None else ([key.candidate.field.name], key.span)


def _related_group(q: Question, pos: int) -> Group | None:
    """A model the target points at, named at ``pos`` or called by the relation's name
    ("each student" of a link table's ``student``): grouped by its key and title."""
    for rel, other, title in q.titled_links():
        if other.id.lower() == q.target.id.lower():
            continue  # "the phone number of each employee" groups nothing
        spans = q.models.get(other.id, []) + [
            s for form in plural_forms(words_of(rel.name)) for s in find_phrase(q.low, form)]
        span = next((s for s in sorted(spans) if 0 <= s[0] - pos <= 2), None)
        if span is not None:
            return [rel.foreign, relation_field(rel.name, title)], span
    return None


_GROUP_READINGS = (_own_group, _key_group, _related_group)
"""What "each <X>" may group by, in the order tried."""


def _groups(q: Question, plan: Plan) -> None:
    for m in plan.unclaimed(EACH, q.low):
        found = group_field(q, m.end()) or _group_named_before(q, plan, m)
        if found is None:
            continue
        for field in found[0]:
            add_group(q, plan, field, (m.start(), found[1][1]), m.group(0).strip())
    if plan.group_by and "count" not in plan.aggregates and (
            not plan.aggregates or re.search(r"\b(?:how many|number of|count)\b", q.low)):
        plan.count_implied = not plan.aggregates and not re.search(
            r"\b(?:how many|number of|count)\b", q.low)
        plan.aggregates.insert(0, "count")


_EACH_ALONE = re.compile(r"\s*(?:$|[?.,;!]|for\b|of\b|in\b|with\b|and\b)")


def _group_named_before(q: Question, plan: Plan,
                        m: re.Match[str]) -> Group | None:
    """"the different government forms and the total population of each": "each" with
    nothing after it stands for the categorical field named last before it."""
    if not _EACH_ALONE.match(q.low, m.end()):
        return None
    before = [x for x in _own_mentions(q) if x.span[1] <= m.start() and _categorical(x)
              and x.candidate.field.kind in TEXT_KINDS and not x.candidate.field.primary]
    return ([before[-1].candidate.field.name], m.span()) if before else None


def _categorical(m: FieldMention) -> bool:
    """A field whose values name groups: text with known values, or a small integer
    ("grade")."""
    field = m.candidate.field
    return bool(field.values) or field.kind in TEXT_KINDS or field.kind == "integer"


_IS_THE = re.compile(r"\s+(?:that|which)?\s*(?:is|are|was|were)\s+(?:the\s+)?$", re.I)


def _most_common(q: Question, plan: Plan) -> None:
    """"the most common X", "the most common <target> X" and "the X that is (the) most
    common": group by X, the largest group first."""
    for m in COMMON.finditer(q.low):
        found = _common_after(q, m) or _common_before(q, m)
        if found is not None:
            _order_by_count(q, plan, found[0].candidate.field.name, found[1],
                            "asc" if m.group("dir").lower() == "least" else "desc", m.group(0))


def _common_after(q: Question, m: re.Match[str]) -> tuple[FieldMention, Span] | None:
    """"the most common X", "the most common <target> X": a categorical field of the
    target named right after, and the words read."""
    pos = m.end()
    named = _target_named_at(q, pos)  # "the most common singer citizenship"
    if named is not None:
        pos = named[1] + (1 if q.low[named[1]:named[1] + 1] == " " else 0)
    target = _next_field(q, pos, None)
    if target is None or target.span[0] != pos or not _categorical(target):
        return None
    return target, (m.start(), target.span[1])


def _common_before(q: Question, m: re.Match[str]) -> tuple[FieldMention, Span] | None:
    """"the nationality that is (the) most common": a categorical field of the target
    named before, and the words read."""
    before = q.low[:m.start()]
    target = next((x for x in reversed(_own_mentions(q)) if x.span[1] <= m.start()
                   and _IS_THE.fullmatch(" " + before[x.span[1]:])), None)
    if target is None or not _categorical(target):
        return None
    return target, (target.span[0], m.end())


def _order_by_count(q: Question, plan: Plan, field: str, span: tuple[int, int],
                    direction: str, why: str) -> None:
    add_group(q, plan, field, span, why.strip())
    if "count" not in plan.aggregates:
        plan.aggregates.insert(0, "count")
    plan.aggregate_orders.append({"field": "count", "order": direction})
    plan.limit = plan.limit or 1


def _target_named_at(q: Question, pos: int) -> tuple[int, int] | None:
    return next((s for s in q.target_spans if s[0] >= pos and not q.low[pos:s[0]].strip()),
                None)


def _free_group_field(q: Question, plan: Plan, before: int) -> FieldMention | None:
    """The target's field named before ``before`` and not yet used: what is grouped."""
    cands = [m for m in _own_mentions(q) if m.span[1] <= before and plan.free(m.span)
             and not m.candidate.field.primary and _categorical(m)]
    return cands[-1] if cands else None


def _before_target(q: Question, pattern: re.Pattern[str]) -> Iterator[
        tuple[re.Match[str], int, Span]]:
    """Each naming of the target with ``pattern`` said in the 40 characters before it
    ("with the most *TV channels*"): the match, where it starts in the question, and where
    the target is named."""
    for span in q.target_spans:
        head = q.low[max(0, span[0] - 40):span[0]]
        m = pattern.search(head)
        if m is not None:
            yield m, span[0] - len(head) + m.start(), span


def _most_of_target(q: Question, plan: Plan) -> None:
    """"the country with the most TV channels": group the field by count of the target."""
    if plan.aggregate_orders:
        return
    for m, start, span in _before_target(q, MOST_OF):
        direction = "desc" if m.group("most") else "asc"
        group = _free_group_field(q, plan, start)
        if group is None:
            child_group(q, plan, start, (start, span[1]), direction, m.group(0))
            return
        _order_by_count(q, plan, group.candidate.field.name, (start, span[1]), direction,
                        m.group(0))
        plan.used.append(group.span)
        return


def _having(q: Question, plan: Plan) -> None:
    """"nationalities shared by at least two people": group by the named field, keep the
    groups whose count of target rows meets the number."""
    for m, start, span in _before_target(q, HAVING):
        if any(overlaps((start, span[1]), u) for u in plan.used if u != span):
            continue
        group = _free_group_field(q, plan, start)
        if group is None and not plan.group_by:
            continue
        op, n = _count_condition(m)
        if group is not None:
            add_group(q, plan, group.candidate.field.name, group.span, "grouped")
        if "count" not in plan.aggregates:
            plan.aggregates.insert(0, "count")
        plan.having.append({"aggregate": "count", "op": op, "value": n})
        plan.notes.append(f"count {op} {n} (\"{m.group(0).strip()}\")")
        plan.used.append((start, span[1]))
        return


def _count_condition(m: re.Match[str]) -> tuple[str, int]:
    """"at least two" → (">=", 2), "3 or more" → (">=", 3) (:data:`HAVING_OP`)."""
    words = " ".join(m.group(0).split()[:-1]).lower()
    op = HAVING_AFTER[m.group("after").lower()] if m.group("after") else next(
        (o for w, o in HAVING_OP.items() if words.startswith(w)), "=")
    raw = (m.group("n") or m.group("n2")).lower()
    return op, int(raw) if raw.isdigit() else NUMBER_WORDS[raw]


_FN_BEFORE = re.compile(r"\b(?P<fn>average|avg|mean|maximum|max|minimum|min|total|sum)\s+$",
                        re.I)


def stated_aggregate(q: Question, plan: Plan, cand: Candidate, pos: int) -> str | None:
    """The aggregate a comparison at ``pos`` is on, when groups are asked for and the
    field is named with an aggregate word right before it ("each form whose *average life
    expectancy* is longer than 72": ``avg(LifeExpectancy) > 72`` on the groups, not the
    rows) and that aggregate is computed; else None (a condition on the rows)."""
    if not plan.group_by or cand.relation is not None:
        return None
    for m in q.fields:
        if m.candidate.path != cand.path or m.span[1] > pos or \
                len(q.low[m.span[1]:pos].split()) > 2:
            continue
        fn = _FN_BEFORE.search(q.low[:m.span[0]])
        name = f"{FN_NAME[fn.group('fn').lower()]}({cand.field.name})" if fn else ""
        if name in plan.aggregates:
            return name
    return None

