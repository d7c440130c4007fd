"""One model's records for a DSL query: the SELECT (with the capped count riding along and
related models' titles as subqueries), the ranking of rows by text terms, the one relax
retry, and the rows as result items. Split from :mod:`agent_search.db.handler`, which
picks the models and generates the DSL; scores are described there."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from agent_search.db._builder import Caller, build_count, build_select, is_owner_column, visibility
from agent_search.db._catalog import CONTENT_FIELDS, Catalog, ModelEntry
from agent_search.db._rows import (
    coverage,
    describe_where,
    jsonable,
    name_fields,
    present,
    render,
    title_of,
    unique,
    word_pattern,
)
from agent_search.query.dsl import QueryDSL
from agent_search.types import QueryOrder, QueryWhere, ResultItem

__all__ = ["MAX_CONTENT_CHARS", "RANK_WINDOW_MAX", "Scope", "run_records"]

MAX_CONTENT_CHARS = 600
RANK_WINDOW_FACTOR = 5
RANK_WINDOW_MIN = 50
RANK_WINDOW_MAX = 500
"""With ranking terms, up to this many matching rows are read and ranked in Python."""


@dataclass(frozen=True, slots=True)
class Scope:
    """What every query of one search shares, whichever model it runs on: the catalog,
    who asks (with the preset filters: :class:`Caller`), the preset orders (before the
    generated ones), the fields the request selects, the row limit, the count cap and the
    warnings list (appended to). One object rather than a dozen parameters handed down
    each step."""

    catalog: Catalog
    caller: Caller
    preset_orders: Sequence[QueryOrder] = ()
    select: Sequence[str] = ()
    limit: int = 20
    count_max: int = 0
    count_asked_max: int = 0
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Plan:
    """One attempt of a query: its conditions, how many rows to show and to read, and
    which columns."""

    wheres: list[QueryWhere]
    orders: list[QueryOrder]
    limit: int
    window: int
    terms: list[str]
    data_fields: list[str]
    fetch: list[str]
    cap: int
    """Matches counted up to this many (``count_max``, or ``count_asked_max`` when the
    question asks how many); 0 when not counted."""


async def run_records(conn: Any, scope: Scope, entry: ModelEntry, query: QueryDSL,
                      confidence: float) -> tuple[list[ResultItem], int, dict[str, Any]]:
    """One model's records for ``query`` after the preset filters: ``(items, total,
    the query as executed)``. A ``relax`` query that finds nothing is run again without
    its last where, at a lower confidence, with a warning (the relaxed query is no longer
    ``relax``, so the loop runs at most twice)."""
    while True:
        plan = _plan(scope, entry, query)
        rows = [dict(r) for r in (await conn.execute(_statement(scope, entry, plan)))
                .mappings().all()]
        if rows or not (query.relax and query.wheres):
            break
        query, confidence = _relaxed(scope, entry, query, confidence)
    total = _total(scope, entry, plan, rows)
    rows, shares, total = _ranked(plan, rows, total)
    items = [_item(entry, row, plan.data_fields, confidence * share)
             for row, share in zip(rows, shares, strict=True)]
    return items, total, _executed(scope, entry, query, plan)


def _plan(scope: Scope, entry: ModelEntry, query: QueryDSL) -> _Plan:
    """With ranking terms a wider window is read: rows matching a term only inside
    another word are dropped, the rest scored by the share of terms they hold (and,
    without an order, ranked by it)."""
    limit = min(scope.limit, query.limit) if query.limit else scope.limit
    terms = [t.lower() for t in query.terms]
    window = min(max(limit * RANK_WINDOW_FACTOR, RANK_WINDOW_MIN), RANK_WINDOW_MAX) \
        if terms else limit
    data_fields = _data_fields(entry, list(scope.select) or query.select, scope.warnings)
    fetch = unique([*data_fields, *entry.primary_key,
                    *present(entry, [entry.schema.title_field, *CONTENT_FIELDS]),
                    *name_fields(entry)])
    return _Plan(wheres=[*scope.caller.presets, *query.wheres],
                 orders=[*scope.preset_orders, *query.orders], limit=limit,
                 window=max(window, limit), terms=terms, data_fields=data_fields,
                 fetch=fetch, cap=_cap(scope, query, limit))


def _cap(scope: Scope, query: QueryDSL, limit: int) -> int:
    """How far matches are counted: 0 (not counted) when counting is off (``count_max``
    0) or the cap is no more than the rows shown; a question asking how many counts up to
    ``count_asked_max``."""
    cap = max(scope.count_max, scope.count_asked_max) \
        if query.total_asked and scope.count_max else scope.count_max
    return cap if cap > limit else 0


def _statement(scope: Scope, entry: ModelEntry, plan: _Plan) -> sa.Select[Any]:
    """The SELECT of one attempt, one row past the window (to tell "more"), with related
    titles and, when counting, the capped count riding along as a scalar subquery (one
    round trip)."""
    stmt = build_select(scope.catalog, entry, select=plan.fetch, wheres=plan.wheres,
                        orders=plan.orders, limit=plan.window + 1, caller=scope.caller)
    stmt = _with_related_titles(scope.catalog, stmt, entry, scope.caller)
    if plan.cap:
        count = build_count(scope.catalog, entry, wheres=plan.wheres, caller=scope.caller,
                            cap=plan.cap)
        stmt = stmt.add_columns(count.scalar_subquery().label("__total__"))
    return stmt


def _relaxed(scope: Scope, entry: ModelEntry, query: QueryDSL,
             confidence: float) -> tuple[QueryDSL, float]:
    """``query`` without its last where (the text match the generator was unsure of), and
    the lower confidence of what it finds; the warning says what was dropped."""
    dropped = query.wheres[-1]
    scope.warnings.append(f"model {entry.id}: nothing matched "
                          f"{describe_where(dropped)}; that text match is dropped "
                          "(the words may just name what is sought), showing records "
                          "that match the other conditions at a lower confidence")
    relaxed = query.model_copy(update={"wheres": query.wheres[:-1], "relax": False,
                                       "terms": []})
    lower = confidence * 0.5 if query.relax_confidence is None else min(
        confidence, query.relax_confidence)
    return relaxed, lower


def _total(scope: Scope, entry: ModelEntry, plan: _Plan, rows: list[dict[str, Any]]) -> int:
    """The count that rode along (capped at ``count_max``, with a warning), else the rows
    read."""
    if not (plan.cap and rows):
        return len(rows)
    total = int(rows[0]["__total__"])
    if total > plan.cap:
        key = "count_asked_max" if plan.cap != scope.count_max else "count_max"
        scope.warnings.append(f"model {entry.id}: more than {plan.cap} matches; "
                              f"total shows {plan.cap} (db.{key})")
        return plan.cap
    return total


def _ranked(plan: _Plan, rows: list[dict[str, Any]],
            total: int) -> tuple[list[dict[str, Any]], list[float], int]:
    """The rows to show with the share of the ranking terms each holds (1.0 without
    terms), and the total corrected for rows dropped by the ranking or cut by the limit."""
    shares = [1.0] * len(rows)
    if plan.terms:
        rows, shares, total = _by_terms(plan, rows, total)
    if len(rows) > plan.limit:
        rows, shares = rows[:plan.limit], shares[:plan.limit]
        if not plan.cap:
            total = plan.limit + 1  # "more than shown" when counting is off
    return rows, shares, total


def _by_terms(plan: _Plan, rows: list[dict[str, Any]],
              total: int) -> tuple[list[dict[str, Any]], list[float], int]:
    """Rows holding at least one term as a word (a substring only is no match), by the
    share they hold when no order is asked (stable: database order among equals)."""
    matchers = [word_pattern(t) for t in plan.terms]
    scored = [(coverage(row, matchers), i) for i, row in enumerate(rows)]
    if not plan.orders:
        scored.sort(key=lambda p: -p[0])
    kept = [(c, i) for c, i in scored if c > 0]
    if len(kept) < len(scored) and total <= len(scored):  # every match was read
        total = len(kept)
    return [rows[i] for _, i in kept], [c for c, _ in kept], total


def _executed(scope: Scope, entry: ModelEntry, query: QueryDSL, plan: _Plan) -> dict[str, Any]:
    """The query as run, for ``Result.dsl``: presets included, the permission described."""
    executed: dict[str, Any] = {
        "model": entry.id, "select": plan.data_fields,
        "wheres": [w.to_json() for w in plan.wheres],
        "orders": [o.model_dump() for o in plan.orders], "limit": plan.limit}
    if query.terms:
        executed["terms"] = list(query.terms)
    if query.total_asked:
        executed["total_asked"] = True
    if entry.permission is not None:
        executed["permission"] = entry.permission.describe(scope.caller.user_id,
                                                           scope.caller.team_id)
    return executed


def _data_fields(entry: ModelEntry, select: list[str],
                 warnings: list[str]) -> list[str]:
    """The columns returned in ``data``: ``select`` (known fields only), else all;
    never a permission column (who owns a row is not for callers to read)."""
    default = [c.name for c in entry.table.columns if not is_owner_column(c.name, entry)]
    if not select:
        return default
    out: list[str] = []
    for name in select:
        field = entry.schema.field(name)
        if field is None:
            warnings.append(f"model {entry.id}: unknown select field {name[:80]!r} ignored")
        elif is_owner_column(field.name, entry):
            warnings.append(f"model {entry.id}: {field.name!r} is a permission column; "
                            "not selectable")
        elif field.name not in out:
            out.append(field.name)
    return out or default

def _with_related_titles(catalog: Catalog, stmt: sa.Select[Any], entry: ModelEntry,
                         caller: Caller) -> sa.Select[Any]:
    """Add ``(SELECT title FROM related WHERE key = this.foreign)`` for each hasOne
    relation whose model has a title field, so items read "genre: Jazz" rather than
    "GenreId: 2". The related model's permission filter applies."""
    for rel in entry.schema.relations:
        if rel.type != "hasOne":
            continue
        target = catalog.find(rel.model)
        if target is None or target.missing:
            continue
        alias = target.alias  # independent of the outer table (self-relations)
        names = [alias.c[n] for n in name_fields(target)]
        title: Any
        if names:
            title = names[0]
            for part in names[1:]:
                title = title + " " + part
        elif target.schema.title_field:
            title = alias.c[target.schema.title_field]
        else:
            continue
        sub = (sa.select(title)
               .where(alias.c[rel.key] == entry.table.c[rel.foreign],
                      *visibility(target, caller, alias))
               .limit(1).scalar_subquery().label(f"__rel__{rel.name}"))
        stmt = stmt.add_columns(sub)
    return stmt

def _item(entry: ModelEntry, row: dict[str, Any], data_fields: list[str],
          score: float) -> ResultItem:
    related = {k.removeprefix("__rel__"): jsonable(v) for k, v in row.items()
               if k.startswith("__rel__") and v is not None}
    record_id = _record_id(entry, row)
    data = {f: jsonable(row.get(f)) for f in data_fields}
    metadata: dict[str, Any] = {"table": entry.table.name}
    if entry.permission is not None:  # the caller sees only the rows it may see
        metadata["permission_filtered"] = True
    if related:
        metadata["related"] = related
    return ResultItem(type="db", title=title_of(entry, row, record_id),
                      content=_content(entry, row, data, related)[:MAX_CONTENT_CHARS],
                      score=round(max(0.0, min(1.0, score)), 6), model=entry.id,
                      record_id=record_id, data=data, metadata=metadata)


def _record_id(entry: ModelEntry, row: dict[str, Any]) -> Any:
    """The primary key's value, a list of values for a composite key, else None."""
    pk = entry.primary_key
    if len(pk) == 1:
        return jsonable(row.get(pk[0]))
    return [jsonable(row.get(k)) for k in pk] if pk else None


def _content(entry: ModelEntry, row: dict[str, Any], data: dict[str, Any],
             related: dict[str, Any]) -> str:
    """The row's own content field when it has one, else its data as ``key: value`` with
    related titles in place of foreign keys, leaving out what the title already says."""
    content_field = next((f for f in present(entry, list(CONTENT_FIELDS))
                          if row.get(f) not in (None, "")), None)
    if content_field:
        return str(row[content_field])
    names = name_fields(entry)
    skip: set[str | None] = {*entry.primary_key, *names} if names else \
        {entry.schema.title_field, *entry.primary_key}
    return render(data, skip=skip, related=related,
                  foreigns={r.foreign for r in entry.schema.relations
                            if r.type == "hasOne" and r.name in related})
