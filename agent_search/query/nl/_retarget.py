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

from typing import Any

from agent_search.query.dsl import MAX_HOPS, ModelSchema, RelationSchema
from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._schema import is_plain


def retarget(q: Question, plan: Plan, out: dict[str, Any]) -> dict[str, Any]:
    """``out`` (the parser's DSL dict) about the model holding the asked field, or as is."""
    if plan.group_by or plan.aggregates or out.get("terms") or not q.target_spans or \
            plan.answer_model is not None:  # already answered on other rows
        return out
    first = q.target_spans[0][0]
    before = [m for m in q.fields if m.strong and m.span[1] <= first]
    if not before or any(m.candidate.relation is None for m in before):
        return out
    asked = before[0].candidate
    rel = asked.relation
    if rel is None or asked.second is not None or \
            q.target.field(asked.field.name) is not None or not is_plain(asked):
        return out  # a part of a composite key (a link table's Language) is asked too
    if rel.type == "hasMany":
        return _to_many(q, out, rel, asked.field.name)
    other = q.by_id.get(rel.model.lower())
    back = _reverse(other, q.target, rel) if other is not None else None
    if other is None or back is None or not other.queryable:
        return out
    wheres = [through_relation(w, back.name) for w in out.get("wheres", [])]
    if any(w is None for w in wheres):
        return out
    orders = [{**o, "field": f"{back.name}.{o['field']}"} for o in out.get("orders", [])]
    if any(o["field"].count(".") > 1 for o in orders):  # two relations away: not ordered
        return out
    kept = [w for w in wheres if w is not None]
    if not kept or orders:
        kept.append({"field": f"count({back.name})", "op": ">", "value": 0})
    return {**out, "model": other.id, "wheres": kept, "orders": orders,
            "explanation": f"{other.id} of the {q.target.id} asked about ("
                           f"{asked.field.name} is theirs): " + out.get("explanation", "")}


def _to_many(q: Question, out: dict[str, Any], rel: RelationSchema,
             asked: str) -> dict[str, Any]:
    """"the official language spoken in the country whose head of state is Beatrix": the
    rows the target has many of (its languages) under the conditions said of the target
    (through their relation back) and of them (their own fields)."""
    child = q.by_id.get(rel.model.lower())
    back = next((r for r in child.relations if r.type == "hasOne"
                 and r.model.lower() == q.target.id.lower()
                 and r.foreign.lower() == rel.key.lower()
                 and r.key.lower() == rel.foreign.lower()), None) if child else None
    if child is None or back is None or not child.queryable or not out.get("wheres") \
            or out.get("orders"):
        return out
    wheres: list[dict[str, Any] | None] = []
    for w in out["wheres"]:
        field = str(w.get("field", ""))
        own = field.startswith(rel.name + ".") and field.count(".") == 1
        wheres.append({**w, "field": field.split(".", 1)[1]} if own
                      else through_relation(w, back.name))
    if any(w is None for w in wheres):
        return out
    return {**out, "model": child.id, "wheres": wheres,
            "explanation": f"{child.id} of the {q.target.id} asked about ({asked} is "
                           "theirs): " + out.get("explanation", "")}


def _reverse(other: ModelSchema, target: ModelSchema,
             rel: RelationSchema) -> RelationSchema | None:
    return next((r for r in other.relations if r.type == "hasMany"
                 and r.model.lower() == target.id.lower()
                 and r.key.lower() == rel.foreign.lower()
                 and r.foreign.lower() == rel.key.lower()), None)


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
    return {**where, "field": f"{relation}.{field}"}
