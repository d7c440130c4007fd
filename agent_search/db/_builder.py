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

import operator
import re
from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa

from agent_search.db._catalog import Catalog, ModelEntry, deleted_at_column, sa_kind
from agent_search.db._permissions import PUBLIC, SHARE, PermissionColumns, permission_clause
from agent_search.db._text_dates import as_date
from agent_search.db._values import (
    ValueBoundsError,
    like_pattern,
    to_bool,
    to_datetime,
    to_decimal,
    to_int,
    to_text,
)
from agent_search.errors import InputError
from agent_search.query.dsl import Aggregate
from agent_search.types import QueryOrder, QueryWhere

OWNER_COLUMN_PREFIX = "__yao_"
MAX_HOPS = 2
"""Relations one where may go through: ``album.artist.Name`` on a track."""
COUNT_FIELD = re.compile(r"count\(\s*(\w+)\s*\)", re.ASCII | re.IGNORECASE)
"""``count(albums)``: the number of related rows of a hasMany relation."""
MAX_IN_VALUES = 1000
"""Longest list an ``in`` / ``not in`` may carry (drivers cap bound parameters)."""


class DSLBuildError(InputError):
    """The DSL can't be turned into SQL (unknown field, value of the wrong type...)."""


class Caller:
    """Who is asking: the identity permission filters are built from, and the preset
    filters (``db.wheres``, ``request.wheres``) that bound every search they run — also
    the rows a computed value (``{"aggregate": "avg(price)"}``) is computed over."""

    __slots__ = ("presets", "team_id", "user_id")

    def __init__(self, user_id: str | None, team_id: str | None,
                 presets: Sequence[QueryWhere] = ()) -> None:
        self.user_id = user_id
        self.team_id = team_id
        self.presets = tuple(presets)


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
    deleted = deleted_at_column(source) if entry.soft_delete else None
    if deleted is not None:
        conds.append(deleted.is_(None))
    return conds


def is_owner_column(name: str, entry: ModelEntry | None = None) -> bool:
    """A permission column: ``__yao_created_by``, ``__yao_team_id``... (who owns a row),
    and on a permission-aware ``entry`` also ``public`` and ``share`` (who may see it).
    Never selected, returned nor ordered by; a where on one is true only on rows the
    caller sees as owner or team member (so it is no oracle on other tenants' rows). A
    column called ``public`` in a table without permission columns is ordinary data."""
    low = name.lower()
    if low.startswith(OWNER_COLUMN_PREFIX):
        return True
    return entry is not None and entry.permission is not None and low in (PUBLIC, SHARE)


def caller_column(entry: ModelEntry, name: str, use: str,
                  table: sa.FromClause | None = None) -> sa.ColumnElement[Any]:
    """The column ``name`` of ``entry`` (or of ``table``, an alias of it) for a use a caller
    asks for — ``"grouped by"``, ``"aggregated"``, ``"ordered by"`` — and
    :class:`DSLBuildError` when it is a permission column of that entry: the one check
    every path through which a caller names a column goes through, own fields and a
    relation's alike (the entry decides whether ``public`` / ``share`` are permission
    columns, so a related field is checked against the related entry, never by name)."""
    col = _column(entry, name, table)
    if is_owner_column(col.name, entry):
        raise DSLBuildError(f"{entry.id}.{col.name}: a permission column can't be {use}")
    return col


def _owned_only(entry: ModelEntry, caller: Caller, source: sa.FromClause,
                cond: sa.ColumnElement[bool]) -> sa.ColumnElement[bool]:
    perm = PermissionColumns.of(source) if entry.permission is not None else None
    if perm is None:
        return cond
    return sa.and_(cond, permission_clause(perm, caller.user_id, caller.team_id,
                                           include_public=False))


def build_select(catalog: Catalog, entry: ModelEntry, *, select: Sequence[str],
                 wheres: Sequence[QueryWhere], orders: Sequence[QueryOrder], limit: int,
                 caller: Caller) -> sa.Select[Any]:
    """The SELECT for one model. ``wheres``/``orders`` are preset ones followed by
    generated ones (the caller orders them)."""
    table = entry.table
    hidden = [name for name in select if is_owner_column(name, entry)]
    if hidden:
        raise DSLBuildError(f"model {entry.id}: {hidden[0]!r} is a permission column and "
                            "can't be selected")
    columns = [_column(entry, name) for name in select] if select else \
        [c for c in table.columns if not is_owner_column(c.name, entry)]
    stmt = sa.select(*columns)
    conds = visibility(entry, caller)
    conds.extend(build_where(catalog, entry, w, caller) for w in wheres)
    if conds:
        stmt = stmt.where(*conds)
    return stmt.order_by(*_order_keys(catalog, entry, orders, caller)).limit(limit)


def _order_keys(catalog: Catalog, entry: ModelEntry, orders: Sequence[QueryOrder],
                caller: Caller) -> list[sa.ColumnElement[Any]]:
    """The ORDER BY keys of ``orders`` (each field once), then the primary key."""
    seen: set[str] = set()
    order_by: list[sa.ColumnElement[Any]] = []
    direction = "asc"
    for o in orders:
        if "." in o.field:  # a related model's field: not the table's, no index to walk
            name, col = o.field.lower(), None
        else:
            col = caller_column(entry, o.field, "ordered by")
            name = col.name
        if name in seen:
            continue
        seen.add(name)
        direction = o.order
        order_by.append(_order_key(catalog, entry, o, caller, col))
    if order_by:
        order_by += _tie_breakers(entry, seen, direction)
    return order_by


def _order_key(catalog: Catalog, entry: ModelEntry, order: QueryOrder, caller: Caller,
               col: sa.ColumnElement[Any] | None) -> sa.ColumnElement[Any]:
    """One ORDER BY key: the column's (numbers as numbers), or a related model's field
    (``col`` None) with the rows that have no related row last, on every database."""
    if col is None:
        key = _related_order(catalog, entry, order.field, order.order, caller)
        return (key.desc() if order.order == "desc" else key.asc()).nulls_last()
    key = numeric(entry, col)
    return key.desc() if order.order == "desc" else key.asc()


def _tie_breakers(entry: ModelEntry, seen: set[str], direction: str
                  ) -> list[sa.ColumnElement[Any]]:
    """Ties broken by the primary key in the same direction, so an index on the order
    column (which ends with the row id) can still be walked instead of sorting."""
    table = entry.table
    return [table.c[name].desc() if direction == "desc" else table.c[name].asc()
            for name in entry.primary_key if name not in seen]


def _related_order(catalog: Catalog, entry: ModelEntry, field: str, direction: str,
                   caller: Caller) -> sa.ColumnElement[Any]:
    """``rel.Field`` as an order key: a correlated subquery over the related rows the
    caller may see — the value of the one row a hasOne relation points at, and over a
    hasMany relation the largest value when ordering down, the smallest when ordering up
    (a country ordered by its cities' population, most populous first, by its largest
    city). Rows without related rows get no value (NULL)."""
    rel_name, _, rest = field.partition(".")
    rel = entry.schema.relation(rel_name)
    if rel is None or "." in rest:
        raise DSLBuildError(f"order {entry.id}.{field}: orders go through one relation "
                            "(relation.field)")
    target = catalog.find(rel.model)
    if target is None or target.missing:
        raise DSLBuildError(f"order {entry.id}.{field}: relation {rel.name!r} points at an "
                            f"unavailable model {rel.model!r}")
    alias = target.table.alias()
    col = caller_column(target, rest, "ordered by", alias)
    pick = sa.func.max if direction == "desc" else sa.func.min
    return (sa.select(pick(numeric(target, col)))
            .where(_column(target, rel.key, alias) == _column(entry, rel.foreign),
                   *visibility(target, caller, alias))
            .scalar_subquery())


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
    counted = COUNT_FIELD.fullmatch(where.field)
    if counted is not None:
        return _count_where(catalog, entry, counted.group(1), where, caller)
    if "." in where.field:
        return _relation_where(catalog, entry, where, caller)
    return _field_where(catalog, entry, where, caller)


def _field_where(catalog: Catalog, entry: ModelEntry, where: QueryWhere,
                 caller: Caller) -> sa.ColumnElement[bool]:
    """A clause on one of the model's own columns (against a value, or one the database
    computes); on an owner column, limited to the caller's own rows."""
    assert where.field is not None
    col = _column(entry, where.field)
    typed = col if where.op in _UNTYPED_OPS else numeric(entry, col)
    if is_computed(where.value):
        cond = _against_computed(catalog, entry, typed, where, caller)
    else:
        cond = _comparison(typed, where.op, where.value, f"{entry.id}.{col.name}")
    if is_owner_column(col.name, entry):
        return _owned_only(entry, caller, entry.table, cond)
    return cond


def is_computed(value: Any) -> bool:
    """A where value computed by the database: ``{"aggregate": "avg(price)"}``."""
    return isinstance(value, dict) and set(value) == {"aggregate"}


def _against_computed(catalog: Catalog, entry: ModelEntry, col: sa.ColumnElement[Any],
                      where: QueryWhere, caller: Caller) -> sa.ColumnElement[bool]:
    """``col op (SELECT agg FROM model WHERE visible AND presets)``: the aggregate over
    the rows the caller may search — the permission and soft-delete filters and the
    preset filters inside the subquery, so other tenants' rows never move the value.
    Not correlated: the subquery's table is its own scope (SQL binds the inner name)."""
    compare = BINARY.get(where.op)
    if compare is None:
        raise DSLBuildError(f"where {entry.id}.{where.field}: operator {where.op!r} can't "
                            "compare with a computed value")
    try:
        agg = Aggregate.model_validate(where.value["aggregate"])
    except ValueError as exc:
        raise DSLBuildError(f"where {entry.id}.{where.field}: {exc}") from exc
    conds = [*visibility(entry, caller),
             *(build_where(catalog, entry, w, Caller(caller.user_id, caller.team_id))
               for w in caller.presets)]
    sub = sa.select(aggregate_sql(entry, agg)).select_from(entry.table).where(*conds)
    sub = sub.correlate(None)
    return compare(col, sub.scalar_subquery())


_FUNCTIONS: dict[str, Callable[[Any], sa.ColumnElement[Any]]] = {
    "avg": sa.func.avg, "sum": sa.func.sum, "max": sa.func.max, "min": sa.func.min,
    "count": sa.func.count,
}


def aggregate_sql(entry: ModelEntry, agg: Aggregate) -> sa.ColumnElement[Any]:
    """The SQL of one aggregate: ``count(*)`` without a field; a count of the column's
    values as stored; any other function over the column read as a number when it holds
    numbers as text. A permission column is refused (:func:`caller_column`)."""
    if agg.field is None:
        return sa.func.count()
    col = caller_column(entry, agg.field, "aggregated")
    value = col if agg.fn == "count" else numeric(entry, col)
    return _FUNCTIONS[agg.fn](sa.distinct(value) if agg.distinct else value)


def _relation_where(catalog: Catalog, entry: ModelEntry, where: QueryWhere, caller: Caller,
                    source: sa.FromClause | None = None,
                    depth: int = 0) -> sa.ColumnElement[bool]:
    """``rel.field op value`` → ``this.foreign IN (SELECT key FROM related WHERE ...)``, and
    ``rel.rel2.field`` one subquery deeper (at most :data:`MAX_HOPS`); each related model's
    own permission filter applies inside its subquery."""
    assert where.field is not None
    rel_name, _, rest = where.field.partition(".")
    if where.field.count(".") > MAX_HOPS - depth:
        raise DSLBuildError(f"model {entry.id}: {where.field!r} goes through more than "
                            f"{MAX_HOPS} relations")
    rel = entry.schema.relation(rel_name)
    if rel is None:
        raise DSLBuildError(f"model {entry.id}: unknown relation {rel_name!r}")
    target = catalog.find(rel.model)
    if target is None or target.missing:
        raise DSLBuildError(f"model {entry.id}: relation {rel.name!r} points at an "
                            f"unavailable model {rel.model!r}")
    # an alias keeps the subquery independent even when the relation points at its own
    # table; a deeper hop gets its own (it may point at the same table again)
    alias = target.alias if depth == 0 else target.table.alias()
    if "." in rest:
        cond = _relation_where(catalog, target, where.model_copy(update={"field": rest}),
                               caller, alias, depth + 1)
    else:
        col = _column(target, rest, alias)
        typed = col if where.op in _UNTYPED_OPS else numeric(target, col)
        cond = _comparison(typed, where.op, where.value, f"{rel.name}.{col.name}")
        if is_owner_column(col.name, target):
            cond = _owned_only(target, caller, alias, cond)
    inner = [cond, *visibility(target, caller, alias)]
    sub = sa.select(_column(target, rel.key, alias)).where(*inner)
    return _column(entry, rel.foreign, source).in_(sub)


def _count_where(catalog: Catalog, entry: ModelEntry, rel_name: str, where: QueryWhere,
                 caller: Caller) -> sa.ColumnElement[bool]:
    """``count(rel) op n`` over a hasMany relation, as a grouped subquery:
    ``this.foreign IN (SELECT key FROM related WHERE visible GROUP BY key HAVING count(*) op
    n)`` — or, when a row without related rows satisfies it too (``< 3``, ``= 0``), ``NOT IN``
    the keys whose count does not. Only related rows the caller may see are counted."""
    label = f"{entry.id}.count({rel_name})"
    rel = entry.schema.relation(rel_name)
    if rel is None or rel.type != "hasMany":
        raise DSLBuildError(f"where {label}: count() needs a hasMany relation")
    target = catalog.find(rel.model)
    if target is None or target.missing:
        raise DSLBuildError(f"where {label}: relation {rel.name!r} points at an "
                            f"unavailable model {rel.model!r}")
    compare = BINARY.get(where.op)
    if compare is None:
        raise DSLBuildError(f"where {label}: operator {where.op!r} can't compare a count")
    try:
        number = to_int(where.value)
    except ValueBoundsError as exc:
        raise DSLBuildError(f"where {label}: {_shown(where.value)} is not a count ({exc})") \
            from exc
    alias = target.alias
    key = _column(target, rel.key, alias)
    grouped = (sa.select(key).where(key.is_not(None), *visibility(target, caller, alias))
               .group_by(key))
    own = _column(entry, rel.foreign)
    if _PYTHON_COMPARE[where.op](0, number):
        return own.not_in(grouped.having(sa.not_(compare(sa.func.count(), number))))
    return own.in_(grouped.having(compare(sa.func.count(), number)))


_UNTYPED_OPS = frozenset({"like", "is null", "is not null"})


def numeric(entry: ModelEntry, col: sa.ColumnElement[Any]) -> sa.ColumnElement[Any]:
    """A text column whose values are all numbers (``entry.numeric_text``) as a number,
    so that "older than 30" and "youngest" compare 9 below 30, and one whose values are
    dates in one form (``entry.text_dates``) as a date (:func:`as_date`); any other
    column as it is."""
    name = getattr(col, "name", None)
    if not isinstance(name, str):
        return col
    if name in entry.numeric_text:
        return sa.cast(col, sa.Float)
    form = entry.text_dates.get(name)
    return col if form is None else as_date(col, form)


def column_of(entry: ModelEntry, name: str,
              table: sa.FromClause | None = None) -> sa.ColumnElement[Any]:
    """The column ``name`` (case-insensitive) of the entry's table or of ``table``;
    :class:`DSLBuildError` naming it when there is none."""
    return _column(entry, name, table)


def _column(entry: ModelEntry, name: str,
            table: sa.FromClause | None = None) -> sa.ColumnElement[Any]:
    """The column ``name`` (case-insensitive) of the entry's table or of ``table``."""
    source = entry.table if table is None else table
    low = name.lower()
    for col in source.columns:
        if col.name.lower() == low:
            return col
    raise DSLBuildError(f"model {entry.id}: unknown field {name!r}")


_PYTHON_COMPARE: dict[str, Callable[[int, int], bool]] = {
    "=": operator.eq, "!=": operator.ne, ">": operator.gt, ">=": operator.ge,
    "<": operator.lt, "<=": operator.le,
}
_Compare = Callable[[sa.ColumnElement[Any], Any], sa.ColumnElement[bool]]
BINARY: dict[str, _Compare] = {
    "=": lambda c, v: c == v,
    "!=": lambda c, v: c != v,
    ">": lambda c, v: c > v,
    ">=": lambda c, v: c >= v,
    "<": lambda c, v: c < v,
    "<=": lambda c, v: c <= v,
}


def _comparison(col: sa.ColumnElement[Any], op: str, value: Any,
                where: str) -> sa.ColumnElement[bool]:
    """``col op value`` with the value coerced to the column's type; the operators that
    are no plain binary comparison (null tests, like, membership, ranges) by their own
    rule of :data:`_SPECIAL`."""
    special = _SPECIAL.get(op)
    if special is not None:
        return special(col, value, where)
    if value is None:
        null_test = _NULL_TESTS.get(op)
        if null_test is None:
            raise DSLBuildError(f"where {where}: operator {op!r} needs a value, not null")
        return null_test(col)
    return BINARY[op](col, coerce(col, value, where))


def _like(col: sa.ColumnElement[Any], value: Any, where: str) -> sa.ColumnElement[bool]:
    try:
        pattern = like_pattern(value)
    except ValueBoundsError as exc:
        raise DSLBuildError(f"where {where}: {exc}") from exc
    return sa.cast(col, sa.String).ilike(pattern) if sa_kind(col.type) not in (
        "string", "text") else col.ilike(pattern)


def _members(col: sa.ColumnElement[Any], value: Any, where: str, op: str) -> list[Any]:
    if len(value) > MAX_IN_VALUES:
        raise DSLBuildError(f"where {where}: {len(value)} values for {op!r}; "
                            f"the most is {MAX_IN_VALUES}")
    return [coerce(col, v, where) for v in value]


def _in(col: sa.ColumnElement[Any], value: Any, where: str) -> sa.ColumnElement[bool]:
    values = _members(col, value, where, "in")
    return col.in_(values) if values else sa.false()


def _not_in(col: sa.ColumnElement[Any], value: Any, where: str) -> sa.ColumnElement[bool]:
    values = _members(col, value, where, "not in")
    return col.not_in(values) if values else sa.true()


def _between(col: sa.ColumnElement[Any], value: Any, where: str) -> sa.ColumnElement[bool]:
    low, high = (coerce(col, v, where) for v in value)
    return col.between(low, high)


_Rule = Callable[[sa.ColumnElement[Any], Any, str], sa.ColumnElement[bool]]
_SPECIAL: dict[str, _Rule] = {
    "is null": lambda c, _v, _w: c.is_(None),
    "is not null": lambda c, _v, _w: c.is_not(None),
    "like": _like, "in": _in, "not in": _not_in, "between": _between,
}
_NULL_TESTS: dict[str, Callable[[sa.ColumnElement[Any]], sa.ColumnElement[bool]]] = {
    "=": lambda c: c.is_(None), "!=": lambda c: c.is_not(None),
}


def coerce(col: sa.ColumnElement[Any], value: Any, where: str) -> Any:
    """``value`` as the column's Python type, bounded before it is converted (see
    :mod:`agent_search.db._values`); DSLBuildError naming ``where`` if it can't be one."""
    kind = sa_kind(col.type)
    if value is None:
        return None
    try:
        if kind == "number" and isinstance(col.type, sa.Float):
            return float(to_decimal(value))
        rule = _COERCE.get(kind)
        return to_text(value) if rule is None else rule(value)
    except ValueBoundsError as exc:
        raise DSLBuildError(f"where {where}: {_shown(value)} is not a valid {kind} value "
                            f"({exc})") from exc
    except (ValueError, TypeError, ArithmeticError, OverflowError) as exc:
        raise DSLBuildError(
            f"where {where}: {_shown(value)} is not a valid {kind} value") from exc


_COERCE: dict[str, Callable[[Any], Any]] = {
    "integer": to_int, "number": to_decimal, "boolean": to_bool, "datetime": to_datetime,
    "date": lambda v: to_datetime(v).date(),
}
"""A value from outside as the Python type of a column of each kind (else text)."""


def _shown(value: Any) -> str:
    """The value as an error shows it: at most 40 characters of its repr."""
    if isinstance(value, int) and value.bit_length() > 127:
        return "a huge integer"
    text = repr(value) if not isinstance(value, str) or len(value) <= 40 else \
        repr(value[:40]) + "..."
    return text if len(text) <= 60 else text[:60] + "..."
