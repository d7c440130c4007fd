"""One model's records for a DSL query: the SELECT (with the capped count riding along and
related models' titles as subqueries), the ranking of rows by text terms, the one relax
retry, and the rows as result items. Split from :mod:`agent_search.db.handler`, which
picks the models and generates the DSL; scores are described there."""

from __future__ import annotations

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

__all__ = ["MAX_CONTENT_CHARS", "RANK_WINDOW_MAX", "run_records"]

MAX_CONTENT_CHARS = 600
RANK_WINDOW_FACTOR = 5
RANK_WINDOW_MIN = 50
RANK_WINDOW_MAX = 500
"""With ranking terms, up to this many matching rows are read and ranked in Python."""


async def run_records(conn: Any, catalog: Catalog, entry: ModelEntry, query: QueryDSL, *,
                      preset_wheres: list[QueryWhere], preset_orders: list[QueryOrder],
                      select: list[str], limit: int, count_max: int, caller: Caller,
                      confidence: float, warnings: list[str],
                      ) -> tuple[list[ResultItem], int, dict[str, Any]]:
    """One model's records for ``query`` after the preset filters: ``(items, total,
    the query as executed)``. A ``relax`` query that finds nothing is run again once
    without its last where, at a lower confidence, with a warning."""
    wheres = [*preset_wheres, *query.wheres]
    orders = [*preset_orders, *query.orders]
    q_limit = min(limit, query.limit) if query.limit else limit
    # with ranking terms read a wider window: rows matching a term only inside another
    # word are dropped, the rest scored by the share of terms they hold (and, without
    # an order, ranked by it)
    terms = [t.lower() for t in query.terms]
    window = min(max(q_limit * RANK_WINDOW_FACTOR, RANK_WINDOW_MIN), RANK_WINDOW_MAX) \
        if terms else q_limit
    data_fields = _data_fields(entry, select or query.select, warnings)
    fetch = unique([*data_fields, *entry.primary_key,
                     *present(entry, [entry.schema.title_field, *CONTENT_FIELDS]),
                     *name_fields(entry)])
    stmt = build_select(catalog, entry, select=fetch, wheres=wheres, orders=orders,
                        limit=max(window, q_limit) + 1, caller=caller)
    stmt = _with_related_titles(catalog, stmt, entry, caller)
    cap = count_max
    counted = cap > q_limit
    if counted:  # one round trip: the (capped) count rides along as a scalar subquery
        count = build_count(catalog, entry, wheres=wheres, caller=caller, cap=cap)
        stmt = stmt.add_columns(count.scalar_subquery().label("__total__"))
    rows = [dict(r) for r in (await conn.execute(stmt)).mappings().all()]
    if not rows and query.relax and query.wheres:
        dropped = query.wheres[-1]
        warnings.append(f"model {entry.id}: nothing matched "
                        f"{describe_where(dropped)}; that text match is dropped "
                        "(the words may just name what is sought), showing records "
                        "that match the other conditions at a lower confidence")
        relaxed = query.model_copy(update={"wheres": query.wheres[:-1], "relax": False,
                                           "terms": []})
        lower = confidence * 0.5 if query.relax_confidence is None else min(
            confidence, query.relax_confidence)
        return await run_records(conn, catalog, entry, relaxed, preset_wheres=preset_wheres,
                                 preset_orders=preset_orders, select=select, limit=limit,
                                 count_max=count_max, caller=caller, confidence=lower,
                                 warnings=warnings)
    total = len(rows)
    if counted and rows:
        total = int(rows[0]["__total__"])
        if total > cap:
            total = cap
            warnings.append(f"model {entry.id}: more than {cap} matches; total "
                            f"shows {cap} (db.count_max)")
    shares: list[float] | None = None
    if terms:
        matchers = [word_pattern(t) for t in terms]
        scored = [(coverage(row, matchers), i) for i, row in enumerate(rows)]
        if not orders:  # stable: database order among equals
            scored.sort(key=lambda p: -p[0])
        kept = [(c, i) for c, i in scored if c > 0]  # a substring only is no match
        if len(kept) < len(scored) and total <= len(scored):  # every match was read
            total = len(kept)
        rows = [rows[i] for _, i in kept]
        shares = [c for c, _ in kept]
    if len(rows) > q_limit:
        rows = rows[:q_limit]
        if not counted:
            total = q_limit + 1  # "more than shown" when counting is off
    items = [_item(entry, row, data_fields, confidence,
                        1.0 if shares is None else shares[rank])
             for rank, row in enumerate(rows)]
    executed: dict[str, Any] = {
        "model": entry.id, "select": data_fields,
        "wheres": [w.to_json() for w in wheres],
        "orders": [o.model_dump() for o in orders], "limit": q_limit}
    if query.terms:
        executed["terms"] = list(query.terms)
    if entry.permission is not None:
        executed["permission"] = entry.permission.describe(caller.user_id, caller.team_id)
    return items, total, executed

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
          confidence: float, match: float) -> ResultItem:
    related = {k.removeprefix("__rel__"): jsonable(v) for k, v in row.items()
               if k.startswith("__rel__") and v is not None}
    pk = entry.primary_key
    record_id: Any = jsonable(row.get(pk[0])) if len(pk) == 1 else \
        [jsonable(row.get(k)) for k in pk] if pk else None
    title = title_of(entry, row, record_id)
    content_field = next((f for f in present(entry, list(CONTENT_FIELDS))
                          if row.get(f) not in (None, "")), None)
    data = {f: jsonable(row.get(f)) for f in data_fields}
    content = str(row[content_field]) if content_field else render(
        data, skip={*pk, *name_fields(entry)} if name_fields(entry)
        else {entry.schema.title_field, *pk}, related=related,
        foreigns={r.foreign for r in entry.schema.relations
                  if r.type == "hasOne" and r.name in related})
    score = max(0.0, min(1.0, confidence * match))
    metadata: dict[str, Any] = {"table": entry.table.name}
    if related:
        metadata["related"] = related
    return ResultItem(type="db", title=title, content=content[:MAX_CONTENT_CHARS],
                      score=round(score, 6), model=entry.id, record_id=record_id,
                      data=data, metadata=metadata)
