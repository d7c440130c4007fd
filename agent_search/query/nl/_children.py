"""Aggregates over the rows a target has many of: "teachers and the number of courses
they teach", "the student with the most friends", "singers and the total sales of their
songs", "how many languages are spoken in Aruba", "the language spoken by the most
countries" — answered on those rows (``Plan.answer_model``), grouped by the target's key
and title through the relation back, or by the field named."""

from __future__ import annotations

import re

from agent_search.query.dsl import NUMERIC_KINDS, TEXT_KINDS, ModelSchema, RelationSchema
from agent_search.query.nl._aggregate_words import (
    FN,
    FN_NAME,
    GLUE,
    HOW_MANY,
    MOST_OF,
    WEAK_FN,
    add_group,
)
from agent_search.query.nl._lexicon import is_plural
from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._schema import is_plain, title_field

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


def count_of_children(q: Question, plan: Plan) -> None:
    """"how many languages are spoken in Aruba": the field counted is one of the rows the
    target has many of (a country's languages), so the rows counted are those, under the
    conditions said of the target (through their relation back); ``Result.total``."""
    if plan.answer_model is not None:
        return
    for m in HOW_MANY.finditer(q.low):
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
        if not GLUE.match(gap):
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


def child_function(q: Question, plan: Plan) -> None:
    """"singers and the total sales of their songs", "for each singer name, the total
    sales of their songs": a function of a field of the rows the target has many of,
    computed per target row on those rows (grouped by the key back and the target's
    title)."""
    title = title_field(q.target)
    if not q.target_spans or title is None or (
            plan.aggregates and plan.aggregates != ["count"]) or \
            plan.group_by not in ([], [title]):
        return
    for m in FN.finditer(q.low):
        word = m.group("fn").lower()
        if word in WEAK_FN or not plan.free(m.span()) or (
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
        name = f"{FN_NAME[word]}({mention.candidate.field.name})"
        plan.answer_model, plan.answer_relation = child.id, back.name
        plan.group_by[:] = [back.foreign, f"{back.name}.{title}"]
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
    add_group(q, plan, mention.candidate.field.name, span, why.strip())
    plan.aggregates.insert(0, counted)
    plan.aggregate_orders.append({"field": counted, "order": direction})
    plan.limit = plan.limit or 1
    plan.used.append(mention.span)


def per_target(q: Question, plan: Plan) -> None:
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
            most = MOST_OF.search(head)
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
