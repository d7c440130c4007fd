"""QueryDSL aggregates → one SQLAlchemy Core ``SELECT ... GROUP BY ... HAVING``.

The rows aggregated are exactly those a record search would return: the permission and
soft-delete clauses of :func:`~agent_search.db._builder.visibility` first, then the preset
and generated wheres (:func:`~agent_search.db._builder.build_where`). A group field one
hasOne relation away (``stadium.Name`` on a concert) is reached by a LEFT JOIN whose ON
clause carries the related model's own permission filter, so a related row the caller may
not see groups as null rather than showing its value. Every value is a bound parameter;
columns and functions come from the schema and a fixed table.
"""

from __future__ import annotations

import decimal
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from agent_search._text import shown_number
from agent_search.db._builder import (
    BINARY,
    Caller,
    DSLBuildError,
    aggregate_sql,
    build_where,
    caller_column,
    column_of,
    visibility,
)
from agent_search.db._catalog import Catalog, ModelEntry
from agent_search.db._records import Scope
from agent_search.query.dsl import Aggregate, Having, QueryDSL
from agent_search.types import QueryOrder, QueryWhere, ResultItem


def build_aggregate(catalog: Catalog, entry: ModelEntry, *, group_by: Sequence[str],
                    aggregates: Sequence[Aggregate], having: Sequence[Having],
                    wheres: Sequence[QueryWhere], orders: Sequence[QueryOrder], limit: int,
                    caller: Caller) -> sa.Select[Any]:
    """``SELECT group..., aggregate... FROM model [LEFT JOIN related] WHERE visible AND
    wheres GROUP BY group... HAVING ... ORDER BY ... LIMIT limit``; columns labelled with
    the group field names and the aggregate names."""
    source, groups = _groups(catalog, entry, group_by, caller)
    computed = {a.name: aggregate_sql(entry, a) for a in aggregates}
    stmt = sa.select(*(g.label(p) for g, p in zip(groups, group_by, strict=True)),
                     *(expr.label(name) for name, expr in computed.items()))
    stmt = stmt.select_from(source)
    conds = visibility(entry, caller)
    conds.extend(build_where(catalog, entry, w, caller) for w in wheres)
    if conds:
        stmt = stmt.where(*conds)
    if groups:
        stmt = stmt.group_by(*groups)
    for h in having:
        stmt = stmt.having(BINARY[h.op](aggregate_sql(entry, h.aggregate), sa.literal(h.value)))
    by_name: dict[str, sa.ColumnElement[Any]] = {
        **dict(zip(group_by, groups, strict=True)), **computed}
    return stmt.order_by(*_order_by(entry, orders, by_name), *groups).limit(limit)


def _groups(catalog: Catalog, entry: ModelEntry, group_by: Sequence[str],
            caller: Caller) -> tuple[sa.FromClause, list[sa.ColumnElement[Any]]]:
    """The FROM clause (the table, LEFT JOINed once to each related model a group field
    goes through) and the group columns."""
    source: sa.FromClause = entry.table
    groups: list[sa.ColumnElement[Any]] = []
    joined: dict[str, tuple[ModelEntry, sa.FromClause]] = {}
    for path in group_by:
        rel_name, dot, name = path.partition(".")
        if not dot:
            groups.append(caller_column(entry, path, "grouped by"))
            continue
        if rel_name not in joined:
            target, alias, source = _join(catalog, entry, rel_name, source, caller)
            joined[rel_name] = (target, alias)
        target, alias = joined[rel_name]
        groups.append(caller_column(target, name, "grouped by", alias))
    return source, groups


def _order_by(entry: ModelEntry, orders: Sequence[QueryOrder],
              by_name: dict[str, sa.ColumnElement[Any]]) -> list[sa.ColumnElement[Any]]:
    """Orders by aggregate or group names (then the groups follow: a stable answer)."""
    keys: list[sa.ColumnElement[Any]] = []
    for o in orders:
        expr = by_name.get(o.field)
        if expr is None:
            raise DSLBuildError(f"model {entry.id}: can't order an aggregate by {o.field!r}")
        keys.append(expr.desc() if o.order == "desc" else expr.asc())
    return keys


def _join(catalog: Catalog, entry: ModelEntry, rel_name: str, source: sa.FromClause,
          caller: Caller) -> tuple[ModelEntry, sa.FromClause, sa.FromClause]:
    rel = entry.schema.relation(rel_name)
    target = catalog.find(rel.model) if rel is not None else None
    if rel is None or rel.type != "hasOne" or target is None or target.missing:
        raise DSLBuildError(f"model {entry.id}: can't group through relation {rel_name!r}")
    alias = target.table.alias()
    on = sa.and_(column_of(target, rel.key, alias) == column_of(entry, rel.foreign),
                 *visibility(target, caller, alias))
    return target, alias, sa.outerjoin(source, alias, on)


async def run_aggregate(conn: Any, scope: Scope, entry: ModelEntry, query: QueryDSL,
                        confidence: float) -> tuple[list[ResultItem], dict[str, Any]]:
    """The answer rows of an aggregate query as items (``metadata.kind`` "aggregate",
    ``data`` keyed by group field and aggregate names), and the executed part of the DSL."""
    q_limit = min(scope.limit, query.limit) if query.limit else scope.limit
    capped = query.limit is None or query.limit > scope.limit  # cut by the request
    stmt = build_aggregate(scope.catalog, entry, group_by=query.group_by,
                           aggregates=query.aggregates, having=query.having,
                           wheres=[*scope.caller.presets, *query.wheres], orders=query.orders,
                           limit=q_limit + 1 if capped else q_limit, caller=scope.caller)
    rows = (await conn.execute(stmt)).mappings().all()
    if len(rows) > q_limit:
        rows = rows[:q_limit]
        scope.warnings.append(f"model {entry.id}: more than {q_limit} answer rows; the "
                              f"first {q_limit} are shown")
    names = [*query.group_by, *(a.name for a in query.aggregates)]
    items = [_answer(entry, {n: _plain(row[n]) for n in names}, confidence) for row in rows]
    return items, _executed(query, q_limit)


def _executed(query: QueryDSL, limit: int) -> dict[str, Any]:
    """The aggregate part of the DSL as it ran (``having`` only when given)."""
    executed: dict[str, Any] = {"group_by": list(query.group_by),
                                "aggregates": [a.name for a in query.aggregates],
                                "aggregate_orders": [o.model_dump() for o in query.orders],
                                "aggregate_limit": limit}
    if query.having:
        executed["having"] = [h.to_json() for h in query.having]
    return executed


def _answer(entry: ModelEntry, data: dict[str, Any], confidence: float) -> ResultItem:
    """One answer row as an item: its values as ``key: value`` text (numbers rounded to
    read, :func:`shown_number`) and as ``data`` (as computed)."""
    text = "; ".join(f"{k}: {shown_number(v)}" for k, v in data.items())
    return ResultItem(type="db", title=text[:200], content=text[:600],
                      score=round(max(0.0, min(1.0, confidence)), 6), model=entry.id,
                      data=data, metadata={"table": entry.table.name, "kind": "aggregate"})


def _plain(value: Any) -> Any:
    """A JSON-ready number or text: Decimal → int or float, floats rounded to 6 places."""
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, int | str | bool) or value is None:
        return value
    return str(value)
