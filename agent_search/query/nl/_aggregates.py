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

from agent_search.query.dsl import NUMERIC_KINDS, TEXT_KINDS, ModelSchema, RelationSchema
from agent_search.query.nl._lexicon import find_phrase, is_plural, overlaps, plural_forms, words_of
from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._schema import Candidate, FieldMention, is_plain, title_field

_FN = re.compile(r"\b(?P<fn>average|avg|mean|maximum|max|minimum|min|total|sum|"
                 r"highest|lowest|largest|smallest|oldest|youngest)\b", re.I)
_FN_NAME = {"average": "avg", "avg": "avg", "mean": "avg", "maximum": "max", "max": "max",
            "minimum": "min", "min": "min", "total": "sum", "sum": "sum",
            "highest": "max", "largest": "max", "lowest": "min", "smallest": "min",
            "oldest": "max", "youngest": "min"}
_WEAK_FN = frozenset({"highest", "lowest", "largest", "smallest", "oldest", "youngest"})
"""Superlatives: an aggregate only beside a real aggregate word ("the maximum and lowest
age"), else an order of records ("the singer with the highest age")."""
_GLUE = re.compile(r"^(?:\s*(?:,|and|or|the|of|its|their|all|values?|\s)\s*)*$", re.I)
_HOW_MANY = re.compile(r"\b(?:how many|(?:total\s+)?number of|count(?:\s+of)?)\s+(?:the\s+|all\s+)?"
                       r"(?P<distinct>(?:different|distinct|unique)\s+)?", re.I)
_EACH = re.compile(r"\b(?:each|every|per)(?:\s+|$)(?:of\s+(?:the|these|those|its|their)\s+)?"
                   r"(?:different\s+|single\s+|listed\s+|distinct\s+)?", re.I)
_COMMON = re.compile(r"\b(?P<dir>most|least)\s+(?:common|frequent|popular|usual)(?:\s+|$)",
                     re.I)
_MOST_OF = re.compile(r"\b(?:(?P<most>most|(?:greatest|largest|highest|biggest)\s+(?:number|"
                      r"amount|count)\s+of)|(?P<least>least|fewest|(?:smallest|lowest)\s+"
                      r"(?:number|amount|count)\s+of))\s+(?:number\s+of\s+|of\s+(?:the\s+)?)?$",
                      re.I)
_N = r"(?:\d{1,6}|one|two|three|four|five|six|seven|eight|nine|ten)"
_HAVING = re.compile(r"\b(?:more than|over|greater than|at least|fewer than|less than|"
                     r"at most|exactly|only)\s+(?P<n>" + _N + r")\s+$"
                     r"|\b(?P<n2>" + _N + r")\s+or\s+(?P<after>more|fewer|less)\s+$", re.I)
_HAVING_AFTER = {"more": ">=", "fewer": "<=", "less": "<="}
_HAVING_OP = {"more than": ">", "over": ">", "greater than": ">", "at least": ">=",
              "fewer than": "<", "less than": "<", "at most": "<=", "exactly": "=",
              "only": "="}
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
                 "seven": 7, "eight": 8, "nine": 9, "ten": 10}


def aggregates(q: Question, plan: Plan) -> None:
    """Aggregates, groups, "most common" and count conditions on groups (see module)."""
    _distinct_count(q, plan)
    _count_of_children(q, plan)
    _functions(q, plan)
    _groups(q, plan)
    _child_function(q, plan)
    _most_common(q, plan)
    _most_of_target(q, plan)
    _having(q, plan)
    _per_target(q, plan)


def _own_mentions(q: Question) -> list[FieldMention]:
    return sorted((m for m in q.fields if m.candidate.relation is None
                   and is_plain(m.candidate)), key=lambda m: m.span[0])


def _next_field(q: Question, pos: int, accept: set[str] | None) -> FieldMention | None:
    """The target's field named right after ``pos`` (only glue words between)."""
    for m in _own_mentions(q):
        if m.span[0] < pos:
            continue
        if not _GLUE.match(q.low[pos:m.span[0]]):
            return None
        if accept is None or m.candidate.field.kind in accept:
            return m
    return None


def _distinct_count(q: Question, plan: Plan) -> None:
    """"how many different nationalities": ``count(distinct Nationality)`` — a field of the
    target counted, not its records."""
    for m in _HOW_MANY.finditer(q.low):
        target = _next_field(q, m.end(), None)
        if target is None or target.span[0] - m.end() > 1:
            continue
        if not (m.group("distinct") or is_plural(q.low[target.span[0]:target.span[1]])):
            continue
        plan.used.append(m.span())
        while target is not None:  # "different series names and contents": each one
            name = f"count(distinct {target.candidate.field.name})"
            if name not in plan.aggregates:
                plan.aggregates.append(name)
                plan.notes.append(f"{name} (\"{m.group(0).strip()}\")")
                plan.evidence += 1.0
            plan.used.append(target.span)
            target = _next_field(q, target.span[1], None)
            if target is not None and not re.match(r"\s*(?:,|and)", q.low[
                    plan.used[-1][1]:target.span[0]]):
                target = None
        return


def _count_of_children(q: Question, plan: Plan) -> None:
    """"how many languages are spoken in Aruba": the field counted is one of the rows the
    target has many of (a country's languages), so the rows counted are those, under the
    conditions said of the target (through their relation back); ``Result.total``."""
    if plan.answer_model is not None:
        return
    for m in _HOW_MANY.finditer(q.low):
        mention = next((x for x in sorted(q.fields, key=lambda x: x.span[0])
                        if x.span[0] >= m.end() and x.strong and x.candidate.second is None
                        and x.candidate.relation is not None
                        and x.candidate.relation.type == "hasMany"
                        and is_plain(x.candidate)), None)
        if mention is None:
            continue
        rel = mention.candidate.relation
        gap = q.low[m.end():mention.span[0]]  # "how many official languages": a field of
        for x in q.fields:  # the same rows may stand between
            if x.candidate.relation == rel and m.end() <= x.span[0] < mention.span[0]:
                gap = gap.replace(q.low[x.span[0]:x.span[1]], " ")
        if not _GLUE.match(gap):
            continue
        assert mention.candidate.relation is not None
        found = _answering_child(q, mention.candidate.relation)
        if found is None:
            continue
        child, back = found
        plan.answer_model, plan.answer_relation = child.id, back.name
        if m.group("distinct"):
            plan.aggregates.append(f"count(distinct {mention.candidate.field.name})")
        plan.notes.append(f"{child.id} of the {q.target.id} counted "
                          f"(\"{q.quote((m.start(), mention.span[1]))}\")")
        plan.evidence += 1.0
        plan.used.extend([m.span(), mention.span])
        return


def _functions(q: Question, plan: Plan) -> None:
    found = [m for m in _FN.finditer(q.low) if plan.free(m.span())]
    strong = [m for m in found if m.group("fn").lower() not in _WEAK_FN]
    if not strong:
        return
    for m in found:
        word = m.group("fn").lower()
        if word == "total" and re.match(r"\s+number\b", q.low[m.end():]):
            continue  # "the total number of X" is a count
        target = _next_field(q, m.end(), set(NUMERIC_KINDS)) or _near_field(q, m.end())
        if target is None:
            # "average, minimum and maximum age": the field after the last word of the list
            later = [x for x in found if x.start() > m.start()]
            if not later or not _GLUE.match(q.low[m.end():later[0].start()]):
                continue
            target = _next_field(q, later[-1].end(), set(NUMERIC_KINDS))
            if target is None:
                continue
        name = f"{_FN_NAME[word]}({target.candidate.field.name})"
        if name not in plan.aggregates:
            plan.aggregates.append(name)
            plan.notes.append(f"{name} (\"{m.group(0)}\")")
            plan.evidence += 1.0
        plan.used.extend([m.span(), target.span])


def _near_field(q: Question, pos: int) -> FieldMention | None:
    """A numeric field of the target named within two words after ``pos``, no other field
    between ("the average expected life expectancy")."""
    after = [m for m in _own_mentions(q) if m.span[0] >= pos]
    if not after or after[0].candidate.field.kind not in NUMERIC_KINDS:
        return None
    gap = q.low[pos:after[0].span[0]]
    return after[0] if len(gap.split()) <= 2 and not re.search(r"[,;?]", gap) else None


def _group_field(q: Question, pos: int) -> tuple[list[str], tuple[int, int]] | None:
    """A group at ``pos``: the target's field named there (a key too, named in full:
    "each student id"), or a model the target points at, named or called by the
    relation's name ("each student" of a link table's ``student``): grouped by its key
    and title field."""
    m = _next_field(q, pos, None)
    if m is not None and m.span[0] - pos <= 2:
        return [m.candidate.field.name], m.span
    key = next((x for x in q.fields if x.strong and x.candidate.relation is None
                and 0 <= x.span[0] - pos <= 2 and not is_plain(x.candidate)
                and not x.candidate.field.primary), None)
    if key is not None:
        return [key.candidate.field.name], key.span
    for rel in q.target.relations:
        if rel.type != "hasOne" or rel.model.lower() == q.target.id.lower():
            continue  # "the phone number of each employee" groups nothing
        other = q.by_id.get(rel.model.lower())
        title = title_field(other) if other is not None else None
        spans = q.models.get(other.id if other else "", []) + [
            s for form in plural_forms(words_of(rel.name)) for s in find_phrase(q.low, form)]
        for span in sorted(spans):
            if span[0] - pos <= 2 and span[0] >= pos and title:
                return [rel.foreign, f"{rel.name}.{title}"], span
    return None


def _add_group(q: Question, plan: Plan, field: str, span: tuple[int, int], why: str) -> None:
    if field in plan.group_by:
        return
    plan.group_by.append(field)
    plan.notes.append(f"per {field} (\"{why}\")")
    plan.evidence += 1.0
    plan.used.append(span)


def _groups(q: Question, plan: Plan) -> None:
    for m in _EACH.finditer(q.low):
        if not plan.free(m.span()):
            continue
        found = _group_field(q, m.end()) or _group_named_before(q, plan, m)
        if found is None:
            continue
        for field in found[0]:
            _add_group(q, plan, field, (m.start(), found[1][1]), m.group(0).strip())
    if plan.group_by and "count" not in plan.aggregates and (
            not plan.aggregates or re.search(r"\b(?:how many|number of|count)\b", q.low)):
        plan.aggregates.insert(0, "count")


_EACH_ALONE = re.compile(r"\s*(?:$|[?.,;!]|for\b|of\b|in\b|with\b|and\b)")


def _group_named_before(q: Question, plan: Plan,
                        m: re.Match[str]) -> tuple[list[str], tuple[int, int]] | None:
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
    for m in _COMMON.finditer(q.low):
        pos = m.end()
        named = _target_named_at(q, pos)  # "the most common singer citizenship"
        if named is not None:
            pos = named[1] + (1 if q.low[named[1]:named[1] + 1] == " " else 0)
        target = _next_field(q, pos, None)
        if target is not None and target.span[0] == pos and _categorical(target):
            span = (m.start(), target.span[1])
        else:  # "the nationality that is most common"
            before = q.low[:m.start()]
            target = next((x for x in reversed(_own_mentions(q)) if x.span[1] <= m.start()
                           and _IS_THE.fullmatch(" " + before[x.span[1]:])), None)
            if target is None or not _categorical(target):
                continue
            span = (target.span[0], m.end())
        _order_by_count(q, plan, target.candidate.field.name, span,
                        "asc" if m.group("dir").lower() == "least" else "desc", m.group(0))


def _order_by_count(q: Question, plan: Plan, field: str, span: tuple[int, int],
                    direction: str, why: str) -> None:
    _add_group(q, plan, field, span, why.strip())
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


def _most_of_target(q: Question, plan: Plan) -> None:
    """"the country with the most TV channels": group the field by count of the target."""
    if plan.aggregate_orders:
        return
    for span in q.target_spans:
        head = q.low[max(0, span[0] - 40):span[0]]
        m = _MOST_OF.search(head)
        if m is None:
            continue
        start = span[0] - len(head) + m.start()
        direction = "desc" if m.group("most") else "asc"
        group = _free_group_field(q, plan, start)
        if group is None:
            _child_group(q, plan, start, (start, span[1]), direction, m.group(0))
            return
        _order_by_count(q, plan, group.candidate.field.name, (start, span[1]), direction,
                        m.group(0))
        plan.used.append(group.span)
        return


def _child_group(q: Question, plan: Plan, before: int, span: tuple[int, int],
                 direction: str, why: str) -> None:
    """"the language spoken by the most countries": the field named is one of the rows
    the target has many of; those rows are grouped by it and the target rows of each
    counted (``count(distinct <key back>)``), the largest group first."""
    named = [x for x in q.fields if x.span[1] <= before and x.strong and plan.free(x.span)
             and x.candidate.second is None and x.candidate.relation is not None
             and x.candidate.relation.type == "hasMany" and is_plain(x.candidate)
             and x.candidate.field.kind in TEXT_KINDS]
    if not named:
        return
    mention = named[-1]
    assert mention.candidate.relation is not None
    found = _answering_child(q, mention.candidate.relation)
    if found is None:
        return
    child, back = found
    plan.answer_model, plan.answer_relation = child.id, back.name
    counted = f"count(distinct {back.foreign})"  # target rows, not rows of the child
    _add_group(q, plan, mention.candidate.field.name, span, why.strip())
    plan.aggregates.insert(0, counted)
    plan.aggregate_orders.append({"field": counted, "order": direction})
    plan.limit = plan.limit or 1
    plan.used.append(mention.span)


def _having(q: Question, plan: Plan) -> None:
    """"nationalities shared by at least two people": group by the named field, keep the
    groups whose count of target rows meets the number."""
    for span in q.target_spans:
        head = q.low[max(0, span[0] - 40):span[0]]
        m = _HAVING.search(head)
        if m is None:
            continue
        start = span[0] - len(head) + m.start()
        if any(overlaps((start, span[1]), u) for u in plan.used if u != span):
            continue
        group = _free_group_field(q, plan, start)
        if group is None and not plan.group_by:
            continue
        words = " ".join(m.group(0).split()[:-1]).lower()
        op = _HAVING_AFTER[m.group("after").lower()] if m.group("after") else next(
            (o for w, o in _HAVING_OP.items() if words.startswith(w)), "=")
        raw = (m.group("n") or m.group("n2")).lower()
        n = int(raw) if raw.isdigit() else _NUMBER_WORDS[raw]
        if group is not None:
            _add_group(q, plan, group.candidate.field.name, group.span, "grouped")
        if "count" not in plan.aggregates:
            plan.aggregates.insert(0, "count")
        plan.having.append({"aggregate": "count", "op": op, "value": n})
        plan.notes.append(f"count {op} {n} (\"{m.group(0).strip()}\")")
        plan.used.append((start, span[1]))
        return


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
        name = f"{_FN_NAME[fn.group('fn').lower()]}({cand.field.name})" if fn else ""
        if name in plan.aggregates:
            return name
    return None


_COUNT_OF = re.compile(r"\b(?:(?:the\s+)?(?:total\s+)?numbers?\s+of|how\s+many)\s+$", re.I)


def _answering_child(q: Question,
                     rel: RelationSchema) -> tuple[ModelSchema, RelationSchema] | None:
    """The model of a hasMany relation of the target and its relation back, when rows
    can be computed on it per target row."""
    child = q.by_id.get(rel.model.lower())
    if rel.type != "hasMany" or child is None or child.id == q.target.id or \
            not child.queryable:
        return None
    back = next((r for r in child.relations if r.type == "hasOne"
                 and r.model.lower() == q.target.id.lower()
                 and r.foreign.lower() == rel.key.lower()
                 and r.key.lower() == rel.foreign.lower()), None)
    return None if back is None else (child, back)


def _child_function(q: Question, plan: Plan) -> None:
    """"singers and the total sales of their songs", "for each singer name, the total
    sales of their songs": a function of a field of the rows the target has many of,
    computed per target row on those rows (grouped by the key back and the target's
    title)."""
    title = title_field(q.target)
    if not q.target_spans or title is None or (
            plan.aggregates and plan.aggregates != ["count"]) or \
            plan.group_by not in ([], [title]):
        return
    for m in _FN.finditer(q.low):
        word = m.group("fn").lower()
        if word in _WEAK_FN or not plan.free(m.span()) or (
                word == "total" and re.match(r"\s+number\b", q.low[m.end():])):
            continue
        after = [x for x in q.fields if x.span[0] >= m.end() and x.candidate.second is None
                 and x.candidate.relation is not None
                 and x.candidate.relation.type == "hasMany"
                 and x.candidate.field.kind in NUMERIC_KINDS and is_plain(x.candidate)
                 and len(q.low[m.end():x.span[0]].split()) <= 1]
        if not after:
            continue
        mention = min(after, key=lambda x: x.span[0])
        assert mention.candidate.relation is not None
        found = _answering_child(q, mention.candidate.relation)
        if found is None:
            continue
        child, back = found
        name = f"{_FN_NAME[word]}({mention.candidate.field.name})"
        plan.answer_model, plan.answer_relation = child.id, back.name
        plan.group_by[:] = [back.foreign, f"{back.name}.{title}"]
        plan.aggregates[:] = [name]
        plan.notes.append(f"{name} of {child.id} per {q.target.id} (\"{m.group(0)}\")")
        plan.evidence += 1.0
        plan.used.extend([m.span(), mention.span])
        return


def _per_target(q: Question, plan: Plan) -> None:
    """"teachers and the number of courses they teach", "the student with the most
    friends": rows of a model the target has many of (courses, friends), counted per
    target row — answered on that model, grouped by the target's title through its
    relation back (see :func:`answer_per_target`)."""
    if plan.group_by or plan.aggregates or not q.target_spans:
        return
    first = q.target_spans[0][0]
    title = title_field(q.target)
    for rel in q.target.relations:
        found = _answering_child(q, rel)
        if found is None or title is None:
            continue
        child, back = found
        # the child itself, or what a link table points at ("courses" of a teacher, counted
        # as the teacher's rows of course_arrange)
        linked = [r.model for r in child.relations if r.type == "hasOne"
                  and r.model.lower() != q.target.id.lower()]
        named: list[tuple[tuple[int, int], str]] = [
            (s, "count") for m in (child.id, *linked) for s in q.models.get(
                q.by_id[m.lower()].id if m.lower() in q.by_id else m, [])]
        named += [(x.span, f"count(distinct {x.candidate.field.name})") for x in q.fields
                  if x.strong and x.candidate.relation == rel and x.candidate.second is None
                  and is_plain(x.candidate) and is_plural(q.low[x.span[0]:x.span[1]])]
        for span, counted in sorted(named):  # the rows, or the values named ("languages")
            if span[0] < first:
                continue
            head = q.low[max(0, span[0] - 40):span[0]]
            most = _MOST_OF.search(head)
            count = _COUNT_OF.search(head)
            if most is None and count is None:
                continue
            plan.answer_model = child.id
            plan.answer_relation = back.name
            # per target row: by its key (two people of one name are two rows), shown
            # with its title
            plan.group_by.extend([back.foreign, f"{back.name}.{title}"])
            plan.aggregates.append(counted)
            start = span[0] - len(head) + (most or count).start()  # type: ignore[union-attr]
            if most is not None:
                plan.aggregate_orders.append(
                    {"field": counted, "order": "desc" if most.group("most") else "asc"})
                plan.limit = plan.limit or 1
            plan.notes.append(f"{child.id} counted per {q.target.id} "
                              f"(\"{q.quote((start, span[1]))}\")")
            plan.evidence += 1.0
            plan.used.append((start, span[1]))
            return
