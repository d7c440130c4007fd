"""Aggregates over the rows a target has many of: "teachers and the number of courses
they teach", "the student with the most friends", "singers and the total sales of their
songs", "how many languages are spoken in Aruba", "the language spoken by the most
countries" — answered on those rows (``Plan.answer_model``), grouped by the target's key
and title through the relation back, or by the field named."""

from __future__ import annotations

import re

from agent_search.query.dsl import NUMERIC_KINDS, TEXT_KINDS, ModelSchema, RelationSchema
from agent_search.query.nl._lexicon import is_plural
from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._reading._schema import (
    FieldMention,
    Span,
    of_many,
    overlaps_any,
    relation_field,
    reverse_relation,
    title_field,
)
from agent_search.query.nl._rules._aggregate_words import (
    FN,
    FN_NAME,
    GLUE,
    HOW_MANY,
    MOST_OF,
    WEAK_FN,
    add_group,
)

_COUNT_OF = re.compile(r"\b(?:(?:the\s+)?(?:total\s+)?numbers?\s+of|how\s+many)\s+$", re.I)
_HEAD = 40
"""How far before what is counted the words asking for a count per row may start."""

Child = tuple[ModelSchema, RelationSchema]
"""A model the target has many of and its relation back to the target."""


def _answering_child(q: Question, rel: RelationSchema | None) -> Child | None:
    """The model of a hasMany relation of the target and its relation back, when rows
    can be computed on it per target row."""
    if rel is None or rel.type != "hasMany":
        return None
    child = q.by_id.get(rel.model.lower())
    if child is None or child.id == q.target.id or not child.queryable:
        return None
    back = reverse_relation(rel, q.target, child)
    return None if back is None else (child, back)


def _child_named(q: Question, mention: FieldMention | None) -> Child | None:
    """The child (:func:`_answering_child`) whose field ``mention`` names."""
    return None if mention is None else _answering_child(q, mention.candidate.relation)


def _answer_on(plan: Plan, found: Child) -> None:
    """The answer is computed on the child's rows; conditions go through ``back``."""
    child, back = found
    plan.answer_model, plan.answer_relation = child.id, back.name


def _names_a_child_field(q: Question, x: FieldMention) -> bool:
    """``x`` names in full a field of rows the target has many of, not inside the
    target's own name."""
    return x.strong and of_many(x.candidate) and not overlaps_any(x.span, q.target_spans)


def _counted_after(q: Question, end: int) -> FieldMention | None:
    """The first field of the rows the target has many of named from ``end`` on, with
    only glue words (or other fields of the same rows: "how many official languages")
    between."""
    mention = next((x for x in sorted(q.fields, key=lambda x: x.span[0])
                    if x.span[0] >= end and _names_a_child_field(q, x)), None)
    if mention is None:
        return None
    gap = q.low[end:mention.span[0]]
    for x in q.fields:
        if x.candidate.relation == mention.candidate.relation and \
                end <= x.span[0] < mention.span[0]:
            gap = gap.replace(q.low[x.span[0]:x.span[1]], " ")
    return mention if GLUE.match(gap) else None


def count_of_children(q: Question, plan: Plan) -> None:
    """"how many languages are spoken in Aruba": the field counted is one of the rows the
    target has many of (a country's languages), so the rows counted are those, under the
    conditions said of the target (through their relation back); ``Result.total``."""
    if plan.answer_model is not None:
        return
    for m in HOW_MANY.finditer(q.low):
        mention = _counted_after(q, m.end())
        found = _child_named(q, mention)
        if mention is None or found is None:
            continue
        _answer_on(plan, found)
        if m.group("distinct"):
            plan.aggregates.append(f"count(distinct {mention.candidate.field.name})")
        plan.notes.append(f"{found[0].id} of the {q.target.id} counted "
                          f"(\"{q.quote((m.start(), mention.span[1]))}\")")
        plan.evidence += 1.0
        plan.used.extend([m.span(), mention.span])
        return


def _function_word(q: Question, plan: Plan, m: re.Match[str]) -> bool:
    """An aggregate word free to compute a function ("total", not "total number")."""
    word = m.group("fn").lower()
    return word not in WEAK_FN and plan.free(m.span()) and not (
        word == "total" and re.match(r"\s+number\b", q.low[m.end():]))


def _numeric_after(q: Question, end: int) -> FieldMention | None:
    """A numeric field of the rows the target has many of, named right after ``end``
    (one word between at most: "the total sales of their songs")."""
    after = [x for x in q.fields if x.span[0] >= end and of_many(x.candidate)
             and x.candidate.field.kind in NUMERIC_KINDS
             and len(q.low[end:x.span[0]].split()) <= 1]
    return min(after, key=lambda x: x.span[0]) if after else None


def child_function(q: Question, plan: Plan) -> None:
    """"singers and the total sales of their songs", "for each singer name, the total
    sales of their songs": a function of a field of the rows the target has many of,
    computed per target row on those rows (grouped by the key back and the target's
    title)."""
    title = title_field(q.target)
    if not q.target_spans or title is None or plan.aggregates not in ([], ["count"]) or \
            plan.group_by not in ([], [title]):
        return
    for m in FN.finditer(q.low):
        mention = _numeric_after(q, m.end()) if _function_word(q, plan, m) else None
        found = _child_named(q, mention)
        if mention is None or found is None:
            continue
        child, back = found
        name = f"{FN_NAME[m.group('fn').lower()]}({mention.candidate.field.name})"
        _answer_on(plan, found)
        plan.group_by[:] = [back.foreign, relation_field(back.name, title)]
        plan.aggregates[:] = [name]
        plan.notes.append(f"{name} of {child.id} per {q.target.id} (\"{m.group(0)}\")")
        plan.evidence += 1.0
        plan.used.extend([m.span(), mention.span])
        return


def child_group(q: Question, plan: Plan, before: int, span: tuple[int, int],
                 direction: str, why: str) -> None:
    """"the language spoken by the most countries": the field named is one of the rows
    the target has many of; those rows are grouped by it and the target rows of each
    counted (``count(distinct <key back>)``), the largest group first."""
    named = [x for x in q.fields if x.span[1] <= before and x.strong and plan.free(x.span)
             and of_many(x.candidate) and x.candidate.field.kind in TEXT_KINDS]
    found = _child_named(q, named[-1] if named else None)
    if found is None:
        return
    _answer_on(plan, found)
    counted = f"count(distinct {found[1].foreign})"  # target rows, not rows of the child
    add_group(q, plan, named[-1].candidate.field.name, span, why.strip())
    plan.aggregates.insert(0, counted)
    _ranked(plan, counted, direction)
    plan.used.append(named[-1].span)


def _counted_names(q: Question, rel: RelationSchema, child: ModelSchema) -> list[
        tuple[Span, str]]:
    """What may be counted per target row, in question order: the child's rows, named as
    the child or as what a link table points at ("courses" of a teacher, counted as the
    teacher's rows of course_arrange), or the distinct values of its field named in the
    plural ("languages")."""
    named = [(s, "count") for m in _child_names(q, child) for s in q.models.get(m, [])]
    named += [(x.span, f"count(distinct {x.candidate.field.name})") for x in q.fields
              if x.candidate.relation == rel and _names_a_child_field(q, x)
              and is_plural(q.low[x.span[0]:x.span[1]])]
    # ("how many airlines": the airlines themselves, not their routes' airline codes)
    return sorted(named)


def _ranked(plan: Plan, counted: str, direction: str) -> None:
    """Groups ordered by ``counted`` in ``direction``, the first shown unless a number
    of them is asked."""
    plan.aggregate_orders.append({"field": counted, "order": direction})
    plan.limit = plan.limit or 1


def _child_names(q: Question, child: ModelSchema) -> list[str]:
    """The child's id, and those of the tables it points at other than the target (when
    it is a link table, what it links)."""
    linked = [r.model.lower() for r in child.relations if r.type == "hasOne"
              and r.model.lower() != q.target.id.lower()]
    return [child.id] + [q.by_id[m].id for m in linked if m in q.by_id]


def _count_words(q: Question, at: int) -> tuple[int, re.Match[str] | None] | None:
    """Where the words asking for a count per row ("the number of", "the most") end
    right before ``at`` start, and the "most / least" match when the count is ranked."""
    head = q.low[max(0, at - _HEAD):at]
    most = MOST_OF.search(head)
    said = most or _COUNT_OF.search(head)
    return None if said is None else (at - len(head) + said.start(), most)


def per_target(q: Question, plan: Plan) -> None:
    """"teachers and the number of courses they teach", "the student with the most
    friends": rows of a model the target has many of (courses, friends), counted per
    target row — answered on that model, grouped by the target's title through its
    relation back."""
    title = title_field(q.target)
    if plan.grouped or not q.target_spans or title is None:
        return
    first = q.target_spans[0][0]
    for rel in q.target.relations:
        found = _answering_child(q, rel)
        if found is None:
            continue
        for span, counted in _counted_names(q, rel, found[0]):  # the rows, or the values
            words = _count_words(q, span[0]) if span[0] >= first else None  # named
            if words is None:
                continue
            start, most = words
            _answer_on(plan, found)
            # per target row: by its key (two people of one name are two rows), shown
            # with its title
            plan.group_by.extend([found[1].foreign, relation_field(found[1].name, title)])
            plan.aggregates.append(counted)
            if most is not None:
                _ranked(plan, counted, "desc" if most.group("most") else "asc")
            plan.notes.append(f"{found[0].id} counted per {q.target.id} "
                              f"(\"{q.quote((start, span[1]))}\")")
            plan.evidence += 1.0
            plan.used.append((start, span[1]))
            return
