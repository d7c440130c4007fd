"""The records a question asks for may be those of a model its subject points at.

"the names of poker players whose earnings are over 300000": the subject is *poker
player*, but what is asked — names — lives in the *people* a poker player points at
(hasOne). The answer is then those people: the conditions understood on the subject are
put on the people through the reverse (hasMany) relation ("people whose poker players
have earnings over 300000"), and a subject stated without conditions only requires one
("people who are poker players").

An order on the subject's fields goes through the reverse relation too ("names of poker
players by earnings": people ordered by their poker players' earnings), and then only
people who are poker players are kept.

Done only when the asked field is named before the subject, the subject has no field of
that name and none of its own fields is asked for, nothing is grouped or matched as text,
no order is already on a related model's field, and the people are queryable.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from agent_search.query.dsl import MAX_HOPS, ModelSchema, RelationSchema
from agent_search.query.nl._plan import Draft, Plan, Question, silent
from agent_search.query.nl._reading._schema import (
    Candidate,
    Span,
    is_plain,
    relation_field,
    reverse_relation,
)

Rows = tuple[list[dict[str, Any]], list[dict[str, str]]]
"""The conditions and orders of a draft, said of other rows."""


def _asked_elsewhere(q: Question, plan: Plan, draft: Draft) -> Candidate | None:
    """The field asked for, when it is one of another model's: named (strongly) before
    the subject, the subject's own fields not asked, no part of a composite key, and the
    answer not already computed, grouped or matched as text."""
    if not _plain_rows(q, plan, draft):
        return None
    before = _named_before_subject(q)
    if not before or any(c.relation is None for c in before):
        return None
    asked = before[0]
    if asked.second is not None or q.target.field(asked.field.name) is not None or \
            not is_plain(asked):
        return None  # a part of a composite key (a link table's Language) is asked too
    return asked


def _named_before_subject(q: Question) -> list[Candidate]:
    """The fields named in full before the subject is first named."""
    first = q.target_spans[0][0]
    return [m.candidate for m in q.fields if m.strong and m.span[1] <= first]


def _plain_rows(q: Question, plan: Plan, draft: Draft) -> bool:
    """The answer is still the subject's rows as named: nothing grouped, matched as text
    or already answered on other rows."""
    return not (plan.grouped or draft.terms or not q.target_spans
                or plan.answer_model is not None)


def retarget(q: Question, plan: Plan, draft: Draft) -> Draft | dict[str, Any]:
    """``draft`` about the model holding the asked field, or as is; the DSL dict that
    searches nothing when the question can't be said of that model."""
    asked = _asked_elsewhere(q, plan, draft)
    if asked is None or asked.relation is None:
        return draft
    rel = asked.relation
    other = q.by_id.get(rel.model.lower())
    moved = None if other is None or not other.queryable else \
        _MOVES.get(rel.type, _to_one)(q, draft, rel, other)
    if moved is None and rel.type == "hasMany":
        return draft  # "the composers of albums": the albums, each with its many tracks
    if other is None or moved is None:  # right or silent: the rows shown lack what is asked
        return silent(draft.warnings,
                      f"'{asked.field.name}' is asked, a field of {rel.model}, not of "
                      f"{q.target.id}, and the question could not be said of {rel.model}; "
                      "no records are shown (they would not hold what is asked)")
    wheres, orders = moved
    return replace(draft, model=other.id, wheres=wheres, orders=orders,
                   explanation=f"{other.id} of the {q.target.id} asked about ("
                               f"{asked.field.name} is theirs): " + draft.explanation)


def _to_one(q: Question, draft: Draft, rel: RelationSchema, other: ModelSchema) -> Rows | None:
    """"the names of poker players whose earnings are over 300000": the people the
    subject points at, under its conditions and orders said through their relation back
    (only people who are poker players when nothing else requires one); None when a
    condition or order can't be said so."""
    back = reverse_relation(rel, q.target, other)
    if back is None:
        return None
    kept = _all_on_child(draft.wheres, rel, back)
    orders = [{**o, "field": _own(o["field"], rel.name) or relation_field(back.name, o["field"])}
              for o in draft.orders]
    if kept is None or any(o["field"].count(".") > 1 for o in orders):
        return None  # two relations away: not ordered
    if not kept or orders:
        kept.append({"field": f"count({back.name})", "op": ">", "value": 0})
    return kept, orders


def _own(field: str, forward: str) -> str | None:
    """``field`` said through ``forward`` (``people.Weight``) as the related model's own
    (``Weight``), or None when it is not one of its fields."""
    head, _, rest = field.partition(".")
    return rest if head == forward and rest and "." not in rest else None


def _to_many(q: Question, draft: Draft, rel: RelationSchema,
             child: ModelSchema) -> Rows | None:
    """"the official language spoken in the country whose head of state is Beatrix": the
    rows the target has many of (its languages) under the conditions said of the target
    (through their relation back) and of them (their own fields)."""
    back = reverse_relation(rel, q.target, child)
    if back is None or not draft.wheres or draft.orders:
        return None
    kept = _all_on_child(draft.wheres, rel, back)
    return None if kept is None else (kept, draft.orders)


def _all_on_child(wheres: list[dict[str, Any]], rel: RelationSchema,
                  back: RelationSchema) -> list[dict[str, Any]] | None:
    """Every condition said of the other rows (:func:`on_child`), or None when one
    can't be."""
    moved = [on_child(w, rel.name, back.name) for w in wheres]
    kept = [w for w in moved if w is not None]
    return kept if len(kept) == len(moved) else None


_MOVES = {"hasMany": _to_many, "hasOne": _to_one}
"""How the draft is said of the other model, by the kind of relation to it."""


def on_child(where: dict[str, Any], forward: str | None,
             back: str) -> dict[str, Any] | None:
    """A condition said of the rows the target has many of (through its relation
    ``forward``): one on their own field (``forward.Field``) is theirs, any other goes
    through ``back``."""
    field = str(where.get("field", ""))
    if forward and field.startswith(forward + ".") and field.count(".") == 1:
        return {**where, "field": field.split(".", 1)[1]}
    return through_relation(where, back)


def through_relation(where: dict[str, Any], relation: str) -> dict[str, Any] | None:
    """The condition seen from the other model, through ``relation``; None when it can't
    be (a count, or a path that would go through too many relations)."""
    for group in ("or", "and"):
        if group in where:
            parts = [through_relation(w, relation) for w in where[group]]
            return None if any(p is None for p in parts) else {group: parts}
    field = str(where.get("field", ""))
    if "(" in field or field.count(".") + 1 > MAX_HOPS:
        return None
    return {**where, "field": relation_field(relation, field)}



_WITH = re.compile(r"\b(?:with|having|has|have)\s+(?:any\s+|some\s+|an?\s+)?$")
"""Rows the answer has many of, said as what the rows have ("albums with tracks by
Queen"): a condition of having them, met by the rows shown."""
_INNER = re.compile(r"^\w+\((?:distinct\s+)?([\w.]+)\)$", re.I)


def named_unused(q: Question, draft: Draft) -> str | None:
    """A model the question names (outside any field's name) that the answer neither is,
    nor reaches through a condition, order, group or aggregate, nor points at ("the
    titles of books in descending order of publication price" ordered by the books'
    titles; "the start dates of all the apartment bookings" answered on apartments): the
    reading does not account for the question, and nothing is answered."""
    start = q.by_id.get(draft.model.lower())
    if start is None:
        return None
    used = _reached(q, start, draft) | {start.id.lower(), q.target.id.lower()}
    # the rows used point at their hasOne models (a song's singer, a link row's course):
    # those are in the answer as the rows' keys
    used |= _related(q, used, "hasOne")
    children = _related(q, used, "hasMany")
    for model_id, spans in q.models.items():
        free = _free_mentions(q, model_id, spans, children)
        if free and model_id.lower() not in used:
            return (f"{q.quote(free[0])!r} names the table {model_id}, which the answer does "
                    "not use; no records are shown (they would not account for it)")
    return None


def _reached(q: Question, start: ModelSchema, draft: Draft) -> set[str]:
    """The models (lower-cased ids) the DSL's field paths walk through from ``start``."""
    reached: set[str] = set()
    for path in _paths(draft):
        model: ModelSchema | None = start
        for part in path.split("."):
            rel = model.relation(part) if model is not None else None
            model = q.by_id.get(rel.model.lower()) if rel is not None else None
            if model is None:
                break
            reached.add(model.id.lower())
    return reached


def _related(q: Question, models: set[str], kind: str) -> set[str]:
    """The models (lower-cased ids) that ``models`` have a relation of ``kind`` to."""
    return {r.model.lower() for m in models if (schema := q.by_id.get(m)) is not None
            for r in schema.relations if r.type == kind}


def _free_mentions(q: Question, model_id: str, spans: list[Span],
                   children: set[str]) -> list[Span]:
    """Where the question names ``model_id`` outside a field's name, and not as rows the
    answer's rows have ("albums *with tracks*": a condition of having them)."""
    fields = [m.span for m in q.fields]
    return [s for s in spans if not any(a <= s[0] and s[1] <= b for a, b in fields)
            and not (model_id.lower() in children and _WITH.search(q.low[:s[0]]))]


def _paths(draft: Draft) -> list[str]:
    """Every field path the draft uses: conditions (nested too), orders, groups,
    aggregates and what they compute on (``count(dogs)`` → ``dogs``)."""
    found: list[str] = []

    def walk(where: dict[str, Any]) -> None:
        for nested in (where.get("or") or [], where.get("and") or []):
            for w in nested:
                walk(w)
        if "field" in where:
            found.append(str(where["field"]))

    for w in draft.wheres:
        walk(w)
    found += [o["field"] for o in draft.orders]
    if draft.grouped:
        found += [*draft.group_by, *draft.aggregates]
        found += [str(h.get("aggregate", "")) for h in draft.having]
    return [m.group(1) if (m := _INNER.match(p)) else p for p in found]
