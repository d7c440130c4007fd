"""QueryDSL → SQLAlchemy Core ``SELECT``.

Only what the schema knows gets into SQL: columns are looked up on the table object (never
interpolated), operators come from a fixed table, and every value is a bound parameter
coerced to its column's type (a value that can't be one is an error naming the field).
The statement is built as: permission clause AND soft-delete filter AND preset wheres AND
generated wheres; preset orders, then generated orders, then the primary key as a
tie-breaker; limit capped by the caller. Without any order the rows come in the order the
database finds them (no ORDER BY: on a big table a forced sort of every match would cost
more than the search).

``like`` is case-insensitive (``ILIKE`` on PostgreSQL, ``lower() LIKE lower()`` on
SQLite); a pattern without ``%`` or ``_`` matches as "contains".
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa

from agent_search.db.catalog import Catalog, ModelEntry, sa_kind
from agent_search.db.permissions import PermissionColumns, permission_clause
from agent_search.types import QueryOrder, QueryWhere

MAX_IN_VALUES = 1000
"""Longest list an ``in`` / ``not in`` may carry (drivers cap bound parameters)."""


class DSLBuildError(ValueError):
    """The DSL can't be turned into SQL (unknown field, value of the wrong type...)."""


class Caller:
    """Who is asking: the identity permission filters are built from."""

    __slots__ = ("team_id", "user_id")

    def __init__(self, user_id: str | None, team_id: str | None) -> None:
        self.user_id = user_id
        self.team_id = team_id


def visibility(entry: ModelEntry, caller: Caller,
               table: sa.FromClause | None = None) -> list[sa.ColumnElement[bool]]:
    """Conditions every query on ``entry`` (or on ``table``, an alias of it) carries,
    whatever the DSL says."""
    source = entry.table if table is None else table
    conds: list[sa.ColumnElement[bool]] = []
    if entry.permission is not None:
        perm = PermissionColumns.of(source)
        assert perm is not None
        conds.append(permission_clause(perm, caller.user_id, caller.team_id))
    if entry.soft_delete:
        conds.append(source.c["deleted_at"].is_(None))
    return conds


def build_select(catalog: Catalog, entry: ModelEntry, *, select: Sequence[str],
                 wheres: Sequence[QueryWhere], orders: Sequence[QueryOrder], limit: int,
                 caller: Caller) -> sa.Select[Any]:
    """The SELECT for one model. ``wheres``/``orders`` are preset ones followed by
    generated ones (the caller orders them)."""
    table = entry.table
    columns = [_column(entry, name) for name in select] if select else list(table.columns)
    stmt = sa.select(*columns)
    conds = visibility(entry, caller)
    conds.extend(build_where(catalog, entry, w, caller) for w in wheres)
    if conds:
        stmt = stmt.where(*conds)
    seen: set[str] = set()
    order_by: list[sa.ColumnElement[Any]] = []
    direction = "asc"
    for o in orders:
        col = _column(entry, o.field)
        if col.name in seen:
            continue
        seen.add(col.name)
        direction = o.order
        order_by.append(col.desc() if o.order == "desc" else col.asc())
    if order_by:
        # ties broken by the primary key in the same direction, so an index on the order
        # column (which ends with the row id) can still be walked instead of sorting
        for name in entry.primary_key:
            if name not in seen:
                order_by.append(table.c[name].desc() if direction == "desc"
                                else table.c[name].asc())
    return stmt.order_by(*order_by).limit(limit)


def build_count(catalog: Catalog, entry: ModelEntry, *, wheres: Sequence[QueryWhere],
                caller: Caller, cap: int) -> sa.Select[Any]:
    """``count(*)`` of the matches, stopping at ``cap + 1`` rows so that counting a huge
    match set costs no more than reading ``cap`` index entries."""
    conds = visibility(entry, caller)
    conds.extend(build_where(catalog, entry, w, caller) for w in wheres)
    inner = sa.select(sa.literal(1)).select_from(entry.table)
    if conds:
        inner = inner.where(*conds)
    return sa.select(sa.func.count()).select_from(inner.limit(cap + 1).subquery())


def build_where(catalog: Catalog, entry: ModelEntry, where: QueryWhere,
                caller: Caller) -> sa.ColumnElement[bool]:
    if where.or_ is not None:
        return sa.or_(*(build_where(catalog, entry, w, caller) for w in where.or_))
    if where.and_ is not None:
        return sa.and_(*(build_where(catalog, entry, w, caller) for w in where.and_))
    assert where.field is not None
    if "." in where.field:
        return _relation_where(catalog, entry, where, caller)
    col = _column(entry, where.field)
    return _comparison(col, where.op, where.value, f"{entry.id}.{col.name}")


def _relation_where(catalog: Catalog, entry: ModelEntry, where: QueryWhere,
                    caller: Caller) -> sa.ColumnElement[bool]:
    """``rel.field op value`` → ``this.foreign IN (SELECT key FROM related WHERE ...)``;
    the related model's own permission filter applies inside the subquery."""
    assert where.field is not None
    rel_name, _, field_name = where.field.partition(".")
    rel = entry.schema.relation(rel_name)
    if rel is None:
        raise DSLBuildError(f"model {entry.id}: unknown relation {rel_name!r}")
    target = catalog.find(rel.model)
    if target is None or target.missing:
        raise DSLBuildError(f"model {entry.id}: relation {rel.name!r} points at an "
                            f"unavailable model {rel.model!r}")
    # an alias keeps the subquery independent even when the relation points at its own table
    alias = target.alias
    col = _column(target, field_name, alias)
    inner = [_comparison(col, where.op, where.value, f"{rel.name}.{col.name}"),
             *visibility(target, caller, alias)]
    sub = sa.select(_column(target, rel.key, alias)).where(*inner)
    return _column(entry, rel.foreign).in_(sub)


def _column(entry: ModelEntry, name: str,
            table: sa.FromClause | None = None) -> sa.ColumnElement[Any]:
    """The column ``name`` (case-insensitive) of the entry's table or of ``table``."""
    source = entry.table if table is None else table
    low = name.lower()
    for col in source.columns:
        if col.name.lower() == low:
            return col
    raise DSLBuildError(f"model {entry.id}: unknown field {name!r}")


_Compare = Callable[[sa.ColumnElement[Any], Any], sa.ColumnElement[bool]]
_BINARY: dict[str, _Compare] = {
    "=": lambda c, v: c == v,
    "!=": lambda c, v: c != v,
    ">": lambda c, v: c > v,
    ">=": lambda c, v: c >= v,
    "<": lambda c, v: c < v,
    "<=": lambda c, v: c <= v,
}


def _comparison(col: sa.ColumnElement[Any], op: str, value: Any,
                where: str) -> sa.ColumnElement[bool]:
    if op == "is null":
        return col.is_(None)
    if op == "is not null":
        return col.is_not(None)
    if op == "like":
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise DSLBuildError(f"where {where}: 'like' needs a text value")
        pattern = str(value)
        if "\x00" in pattern:
            raise DSLBuildError(f"where {where}: text must not contain NUL characters")
        if "%" not in pattern and "_" not in pattern:
            pattern = f"%{pattern}%"
        return sa.cast(col, sa.String).ilike(pattern) if sa_kind(col.type) not in (
            "string", "text") else col.ilike(pattern)
    if op in ("in", "not in"):
        if len(value) > MAX_IN_VALUES:
            raise DSLBuildError(f"where {where}: {len(value)} values for {op!r}; "
                                f"the most is {MAX_IN_VALUES}")
        values = [coerce(col, v, where) for v in value]
        if not values:
            return sa.false() if op == "in" else sa.true()
        return col.in_(values) if op == "in" else col.not_in(values)
    if op == "between":
        low, high = (coerce(col, v, where) for v in value)
        return col.between(low, high)
    if value is None:
        if op == "=":
            return col.is_(None)
        if op == "!=":
            return col.is_not(None)
        raise DSLBuildError(f"where {where}: operator {op!r} needs a value, not null")
    return _BINARY[op](col, coerce(col, value, where))


_TRUE = frozenset({"true", "1", "yes", "y", "on"})
_FALSE = frozenset({"false", "0", "no", "n", "off"})


def coerce(col: sa.ColumnElement[Any], value: Any, where: str) -> Any:
    """``value`` as the column's Python type; DSLBuildError naming ``where`` if it can't be."""
    kind = sa_kind(col.type)
    try:
        if value is None:
            return None
        if kind == "integer":
            return _to_int(value)
        if kind == "number":
            if isinstance(value, bool):
                raise ValueError
            number = decimal.Decimal(str(value).strip())
            if not number.is_finite():
                raise ValueError
            return float(number) if isinstance(col.type, sa.Float) else number
        if kind == "boolean":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in _TRUE:
                return True
            if text in _FALSE:
                return False
            raise ValueError
        if kind == "datetime":
            return _to_datetime(value)
        if kind == "date":
            return _to_datetime(value).date()
        if kind in ("string", "text"):
            if isinstance(value, bool):
                return "true" if value else "false"
            text = str(value)
            if "\x00" in text:
                raise ValueError
            return text
        return value
    except (ValueError, TypeError, ArithmeticError):
        raise DSLBuildError(
            f"where {where}: {value!r} is not a valid {kind} value") from None


def _to_int(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError
        return int(value)
    text = str(value).strip()
    d = decimal.Decimal(text)
    if d != d.to_integral_value():
        raise ValueError
    return int(d)


def _to_datetime(value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return dt.datetime(int(value), 1, 1) if 1000 <= value <= 9999 else \
            dt.datetime.fromtimestamp(float(value), tz=dt.timezone.utc).replace(tzinfo=None)
    text = str(value).strip()
    if len(text) == 4 and text.isdigit():
        return dt.datetime(int(text), 1, 1)
    parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return parsed.replace(tzinfo=None) if parsed.tzinfo else parsed
