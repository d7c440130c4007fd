"""The value index of the db handler: which values of its text columns a question can
name, and what those columns hold.

Two ways, by the size of a column:

- a *categorical* column (at most ``db.value_index_max`` distinct values, 500 by default)
  is read once, on the model's first search: its values are offered to generators in the
  schema (``FieldSchema.values``), matched exactly and fuzzily by the parser;
- every *other* text column (names of 4,000 cities, customers, titles) is looked up at
  question time (:func:`named_values`): the question's phrases — runs of one to
  :data:`MAX_PHRASE_WORDS` words, not only stop words or digits, at most
  :data:`MAX_PHRASES` of them — are matched *as written* by one equality query per
  model, ``col IN (...)`` ORed over its looked-up columns, at
  most :data:`MAX_FOUND` rows. The values found are offered for that question only, as if
  indexed. As written: "Kabul" names the city, "year of independence" does not name
  Independence, Missouri (a column of thousands of names holds common words; a question
  capitalises a name). Equality, not ``LIKE``: an index on the column serves it; a column with no
  index on a table of more than :data:`LOOKUP_MAX_ROWS` rows is not looked up (a scan of
  it per question would cost more than the question).

Both read only the rows *everyone* may see: on a permission-aware table its ``public``
rows (none without a ``public`` column), never soft-deleted ones — a value is never
offered because another tenant's private row holds it. The first distinct values of each
column also say whether it holds numbers or dates as text (:mod:`._values`,
:mod:`._text_dates`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from agent_search.db._catalog import GUARD_COLUMNS, ModelEntry, deleted_at_column, sa_kind
from agent_search.db._text_dates import Form, text_date
from agent_search.db._values import numeric_kind
from agent_search.db.models import ColumnDef
from agent_search.language import ENGLISH

MAX_INDEXED_VALUE_CHARS = 80
"""Longer values are prose, not categories: they are left out of the value index."""
MAX_QUESTION_CHARS = 500
MAX_PHRASE_WORDS = 4
MAX_PHRASES = 64
MAX_FOUND = 16
LOOKUP_MAX_ROWS = 200_000
_TOKEN = re.compile(r"\w(?:[\w'’&./-]*\w)?")


async def index_values(engine: AsyncEngine, entry: ModelEntry, cap: int) -> dict[str, list[str]]:
    """Declared ``option`` values, then the distinct values of categorical text
    columns among the rows *everyone* may see: on a permission-aware table only its
    ``public`` rows (none without a ``public`` column), never soft-deleted ones; the
    columns with more values than ``cap`` are left to be looked up."""
    declared = _declared(entry)
    out = _declared_options(entry, declared)
    conds = visibility_for_everyone(entry)
    if entry.missing or cap == 0 or conds is None:
        return out
    columns = [c for c in entry.table.columns
               if c.name not in out and _indexable(entry, c, declared.get(c.name))]
    if columns:
        async with engine.connect() as conn:
            many = await _read_columns(conn, entry, columns, conds, cap, out)
            entry.looked_up = await _lookup_columns(conn, entry, many, conds)
    return out


def _declared(entry: ModelEntry) -> dict[str, ColumnDef]:
    """The model definition's columns by name (none without a definition)."""
    return {c.name: c for c in entry.definition.all_columns()} if entry.definition else {}


def _declared_options(entry: ModelEntry, declared: dict[str, ColumnDef]
                      ) -> dict[str, list[str]]:
    """The declared ``option`` values of the columns the table has."""
    return {name: list(col.option) for name, col in declared.items()
            if col.option and name in entry.table.c}


async def _read_columns(conn: AsyncConnection, entry: ModelEntry,
                        columns: Sequence[sa.Column[Any]], conds: list[sa.ColumnElement[bool]],
                        cap: int, out: dict[str, list[str]]) -> list[str]:
    """Index each column's values into ``out`` and learn what it holds (numbers, dates:
    only when every row was read); the names of those with too many values to index."""
    every_row = entry.permission is None and not entry.soft_delete
    many: list[str] = []
    for column in columns:
        sample = await _distinct_values(conn, column, conds, cap)
        if sample.values:
            out[column.name] = sample.values
        if every_row:
            sample.learn_kind(entry, column.name)
        if sample.many and sample.date is None:
            many.append(column.name)
    return many


def untyped(col: sa.Column[Any]) -> bool:
    """A column declared with no type (SQLite allows it: ``CREATE TABLE t(Country, ...)``):
    what it holds is read from its values, as for a text column."""
    return isinstance(col.type, sa.types.NullType)


def _indexable(entry: ModelEntry, col: sa.Column[Any], definition: ColumnDef | None) -> bool:
    """A column whose values may be categories: text, not a key, no column deciding who
    sees a row."""
    if _guard_or_key(entry, col):
        return False
    if definition is not None:
        return definition.kind == "string"
    kind = sa_kind(col.type)
    if kind not in ("string", "text") and not untyped(col):  # TEXT: categories too (SQLite)
        return False
    length = getattr(col.type, "length", None)
    return length is None or length <= 255


def _guard_or_key(entry: ModelEntry, col: sa.Column[Any]) -> bool:
    """A column deciding who sees a row, an internal one, or the table's single-column
    key (a part of a composite key is an attribute)."""
    if entry.permission is not None and col.name.lower() in GUARD_COLUMNS:
        return True
    return col.name.startswith("__yao_") or (
        col.primary_key and len(col.table.primary_key.columns) == 1)


def visibility_for_everyone(entry: ModelEntry) -> list[sa.ColumnElement[bool]] | None:
    """Conditions selecting the rows every caller may see (no identity), or None when
    no row is visible to everyone."""
    conds: list[sa.ColumnElement[bool]] = []
    if entry.permission is not None:
        if entry.permission.public is None:
            return None
        conds.append(entry.permission.public == sa.true())
    deleted = deleted_at_column(entry.table)
    if deleted is not None:
        conds.append(deleted.is_(None))
    return conds


@dataclass(frozen=True, slots=True)
class _Sample:
    """What a column's distinct values say: the indexable ones (none past the cap),
    whether all are numbers, and the form they are dates in."""

    values: list[str]
    numeric: str | None
    date: Form | None
    many: bool = False
    """More distinct values than the cap: none indexed, looked up instead."""
    text: bool = False
    """Every value read is text."""

    def learn_kind(self, entry: ModelEntry, name: str) -> None:
        """Record the kind the values show (numbers first), when every row was read."""
        if self.numeric is not None:
            entry.numeric_text[name] = self.numeric
        elif self.date is not None:
            entry.text_dates[name] = self.date
        elif self.text and untyped(entry.table.c[name]):
            entry.untyped_text.add(name)


async def _distinct_values(conn: AsyncConnection, col: sa.Column[Any],
                           conds: list[sa.ColumnElement[bool]], cap: int) -> _Sample:
    """The column's first ``cap + 1`` distinct values: indexed when they are at most
    ``cap``, read for numbers then, and for dates in any case (a sample when more)."""
    stmt = sa.select(col).where(col.is_not(None), *conds).distinct().limit(cap + 1)
    rows = (await conn.execute(stmt)).scalars().all()
    form = text_date(rows)
    text = bool(rows) and all(isinstance(v, str) for v in rows)
    if len(rows) > cap:
        return _Sample([], None, form, many=True, text=text)
    return _Sample(sorted(v for v in rows if isinstance(v, str) and v.strip()
                          and len(v) <= MAX_INDEXED_VALUE_CHARS), numeric_kind(rows), form,
                   text=text)


def phrases(question: str) -> list[str]:
    """The runs of words of ``question`` that may be a value, as written (bounded: see
    module)."""
    text = question[:MAX_QUESTION_CHARS]
    tokens = list(_TOKEN.finditer(text))
    out: dict[str, None] = {}
    for n in range(MAX_PHRASE_WORDS, 0, -1):  # longer runs first: they say more
        for i in range(len(tokens) - n + 1):
            run = tokens[i:i + n]
            words = [t.group(0).lower() for t in run]
            if all(w in ENGLISH.stopwords or w.isdigit() for w in words) or len(words[0]) < 2:
                continue
            out.setdefault(text[run[0].start():run[-1].end()])
            if len(out) >= MAX_PHRASES:
                return list(out)
    return list(out)


async def named_values(conn: AsyncConnection, entry: ModelEntry, question: str,
                       known: frozenset[str] = frozenset()) -> dict[str, list[str]]:
    """The values of the entry's looked-up columns the question names (see module),
    but for phrases ``known`` (lower-cased) as a value of an indexed column: that reading
    stands, as it did before any lookup ("AC/DC" is the artist, not also a composer)."""
    conds = visibility_for_everyone(entry)
    wanted = [p for p in phrases(question) if p.lower() not in known]
    if not entry.looked_up or conds is None or not wanted:
        return {}
    columns = [entry.table.c[name] for name in entry.looked_up]
    names: sa.BindParameter[Any] = sa.bindparam("names", expanding=True)
    stmt = (sa.select(*columns).where(sa.or_(*(c.in_(names) for c in columns)), *conds)
            .limit(MAX_FOUND))
    rows = (await conn.execute(stmt, {"names": wanted})).all()
    return _said_values([c.name for c in columns], rows, set(wanted))


def _said_values(names: list[str], rows: Sequence[Sequence[Any]], said: set[str]
                 ) -> dict[str, list[str]]:
    """Column name → the values of ``rows`` in that column that are among ``said``,
    sorted (a row matched in one column: its other columns may hold anything)."""
    found: dict[str, set[str]] = {}
    for row in rows:
        for name, value in zip(names, row, strict=True):
            if value in said:
                found.setdefault(name, set()).add(value)
    return {name: sorted(values) for name, values in found.items()}


async def _lookup_columns(conn: AsyncConnection, entry: ModelEntry, columns: Sequence[str],
                          conds: list[sa.ColumnElement[bool]]) -> list[str]:
    """The columns to look values up in: all of them on a table of at most
    :data:`LOOKUP_MAX_ROWS` rows, else only those an index starts with."""
    indexed = _indexed(entry.table)
    if all(name in indexed for name in columns):
        return list(columns)
    probe = sa.select(sa.literal(1)).select_from(entry.table).where(*conds)
    rows = await conn.scalar(sa.select(sa.func.count()).select_from(
        probe.limit(LOOKUP_MAX_ROWS + 1).subquery()))
    if (rows or 0) <= LOOKUP_MAX_ROWS:
        return list(columns)
    return [name for name in columns if name in indexed]


def _indexed(table: sa.Table) -> set[str]:
    """The columns an index (or the primary key) starts with: an equality on them is a
    seek, not a scan."""
    first = {idx.columns.values()[0].name for idx in table.indexes if idx.columns}
    key = table.primary_key.columns.values()
    return first | ({key[0].name} if key else set())
