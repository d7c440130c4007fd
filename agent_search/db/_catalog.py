"""The catalog of searchable models: defined ones (``*.mod.yao``) and reflected tables.

On first use the catalog reflects the database once (tables, columns, primary and foreign
keys). A table with a definition is described by its definition; every other table is a
model named like the table, its foreign keys becoming ``hasOne`` relations (named after
the key column: ``GenreId`` → ``genre``) and the keys pointing at it ``hasMany`` relations
(named after the referring table: ``tracks``).

Each model also has a lazily built *value index* (:mod:`._value_index`): the distinct
values of its categorical text columns, which the natural-language generator matches
query words against, and what its text columns hold (numbers, dates).

The project's own tables (search records, rate-limit buckets: :mod:`._reserved`) are
never models, whatever database they live in: reflection leaves them out and a
definition naming one is a configuration error.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import sqlalchemy as sa
from sqlalchemy.dialects import sqlite
from sqlalchemy.ext.asyncio import AsyncEngine

from agent_search.db._permissions import CREATED_BY, PUBLIC, SHARE, TEAM_ID, PermissionColumns
from agent_search.db._reserved import is_internal_table
from agent_search.db._text_dates import Form, TextDate
from agent_search.db.models import ColumnDef, ModelDef
from agent_search.errors import ConfigError
from agent_search.query.dsl import FieldSchema, ModelSchema, RelationSchema

TITLE_FIELDS = ("title", "name", "subject", "label")
CONTENT_FIELDS = ("content", "description", "summary", "text", "body")
SOFT_DELETE_COLUMN = "deleted_at"
GUARD_COLUMNS = frozenset({CREATED_BY, TEAM_ID, "__yao_updated_by", PUBLIC, SHARE,
                           SOFT_DELETE_COLUMN})
"""Columns that decide who sees a row: always taken from the real table."""
MAX_INDEXED_VALUE_CHARS = 80
"""Longer values are prose, not categories: they are left out of the value index."""

_UNIT_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(milliseconds?|_ms|millis)$", re.I), "ms"),
    (re.compile(r"(seconds?|_secs?|_s)$", re.I), "s"),
    (re.compile(r"(minutes?|_mins?)$", re.I), "min"),
    (re.compile(r"(hours?|_hrs?)$", re.I), "h"),
    (re.compile(r"bytes$", re.I), "bytes"),
    (re.compile(r"(price|cost|total|amount|fee|revenue|salary)$", re.I), "currency"),
)


@dataclass(slots=True)
class ModelEntry:
    """A searchable model: its table, its schema for generators and what the handler
    needs to query it safely."""

    id: str
    table: sa.Table
    schema: ModelSchema
    definition: ModelDef | None = None
    permission: PermissionColumns | None = None
    soft_delete: bool = False
    missing: str | None = None
    values: dict[str, list[str]] | None = None
    numeric_text: dict[str, str] = field(default_factory=dict)
    """Text columns every value of which is a number (column → integer/number): compared,
    ordered and computed on as numbers (see :func:`~agent_search.db._values.numeric_kind`)."""
    untyped_text: set[str] = field(default_factory=set)
    """Columns declared with no type whose values are all text: strings."""
    text_dates: dict[str, Form] = field(default_factory=dict)
    """Text columns whose values are dates written in one form (column → the form):
    compared and ordered as dates (see :mod:`agent_search.db._text_dates`)."""
    looked_up: list[str] = field(default_factory=list)
    """Text columns with too many values to index: values a question names are looked
    up in them at question time (:func:`agent_search.db._value_index.named_values`)."""
    schemas: dict[bool, ModelSchema] = field(default_factory=dict)
    _values_lock: anyio.Lock = field(default_factory=anyio.Lock)

    _alias: sa.FromClause | None = None

    def read_kind(self, name: str, declared: str) -> str:
        """A field's kind as its data says: numbers or dates held as text, else as
        declared."""
        date = self.text_dates.get(name)
        if name in self.untyped_text:
            return "string"
        return self.numeric_text.get(name) or (date.kind if date is not None else declared)

    @property
    def primary_key(self) -> list[str]:
        return [c.name for c in self.table.primary_key.columns]

    @property
    def alias(self) -> sa.FromClause:
        """An alias of the table for subqueries (independent of the outer table, even in a
        self-relation); one object, so statements built with it cache well."""
        if self._alias is None:
            self._alias = self.table.alias()
        return self._alias


ValueIndexer = Callable[[ModelEntry], Awaitable[dict[str, list[str]]]]
"""Reads the value index of one entry (field → known values)."""


class Catalog:
    """Models by id (case-insensitive), loaded from definitions and reflection."""

    def __init__(self, engine: AsyncEngine, definitions: dict[str, ModelDef], *,
                 index: ValueIndexer | None = None) -> None:
        self.engine = engine
        self.definitions = definitions
        self.index = index
        """Reads an entry's value index (:func:`agent_search.db._value_index.index_values`,
        given by the handler: the index depends on the catalog, not the other way)."""
        self.entries: dict[str, ModelEntry] = {}
        self._loaded = False
        self._lock = anyio.Lock()

    async def load(self) -> None:
        """Reflect the database and build every entry (once)."""
        if self._loaded:
            return
        async with self._lock:
            if self._loaded:
                return
            async with self.engine.connect() as conn:
                reflected = await conn.run_sync(_reflect)
            self._build(reflected)
            if self.engine.dialect.name == "sqlite":
                for entry in self.entries.values():
                    _sqlite_datetimes(entry.table)
            self._loaded = True

    def find(self, model_id: str) -> ModelEntry | None:
        return self.entries.get(model_id.strip().lower())

    def ids(self) -> list[str]:
        return [e.id for e in self.entries.values()]

    # -- building --------------------------------------------------------------------

    def _build(self, reflected: sa.MetaData) -> None:
        check_distinct_tables(self.definitions)
        defined_meta = sa.MetaData()
        defined_tables: set[str] = set()
        for model_id, definition in self.definitions.items():
            table_name = definition.table.name
            defined_tables.add(table_name.lower())
            real = _find_table(reflected, table_name)
            if is_internal_table(table_name, () if real is None else real.c.keys()):
                raise ConfigError(f"table {table_name!r} is agent-search's own (search "
                                  "records); it cannot be a model", file=definition.file,
                                  key="table.name")
            table = table_from_definition(definition, defined_meta, real=real)
            missing = None if real is not None else f"table {table_name!r} not found"
            self._add(ModelEntry(
                id=model_id, table=table, definition=definition,
                schema=_schema_from_definition(model_id, definition, self.definitions, table),
                permission=PermissionColumns.of(table),
                soft_delete=deleted_at_column(table) is not None,
                missing=missing))
        referrers = _referrers(reflected)
        # a reflected table's key may point at a defined table: relate to that model
        defined_ids: dict[str, str] = {}
        for model_id, definition in self.definitions.items():
            defined_ids.setdefault(definition.table.name.lower(), model_id)
        for table in reflected.tables.values():
            if table.name.lower() in defined_tables or table.name.lower() in self.entries:
                continue
            schema = _schema_from_table(table, referrers)
            relations = [r.model_copy(update={"model": defined_ids.get(r.model.lower(),
                                                                        r.model)})
                         for r in schema.relations]
            self._add(ModelEntry(id=table.name, table=table,
                                 schema=schema.model_copy(update={"relations": relations}),
                                 permission=PermissionColumns.of(table),
                                 soft_delete=deleted_at_column(table) is not None))

    def _add(self, entry: ModelEntry) -> None:
        self.entries[entry.id.lower()] = entry

    # -- value index -----------------------------------------------------------------

    async def values(self, entry: ModelEntry) -> dict[str, list[str]]:
        """Distinct values of the categorical text columns of ``entry`` (cached)."""
        if entry.values is not None:
            return entry.values
        async with entry._values_lock:
            if entry.values is None:
                entry.values = await self.index(entry) if self.index is not None else {}
        return entry.values

    async def schema_with_values(self, entry: ModelEntry, *, queryable: bool) -> ModelSchema:
        """The entry's schema with its value index, for generators (built once, cached:
        the same objects come back on every search)."""
        cached = entry.schemas.get(queryable)
        if cached is not None:
            return cached
        values = await self.values(entry)
        fields = [f.model_copy(update={"values": values.get(f.name, []),
                                       "kind": entry.read_kind(f.name, f.kind)})
                  for f in entry.schema.fields]
        schema = entry.schema.model_copy(update={"fields": fields, "queryable": queryable})
        entry.schemas[queryable] = schema
        return schema


def _reflect(sync_conn: sa.Connection) -> sa.MetaData:
    """Every table but the project's own (never reflected, so never a model)."""
    meta = sa.MetaData()
    meta.reflect(bind=sync_conn, only=lambda name, _: not is_internal_table(name, ()))
    for table in list(meta.tables.values()):
        if is_internal_table(table.name, table.c.keys()):
            meta.remove(table)
    return meta


_SQLITE_DATETIME = "%(year)04d-%(month)02d-%(day)02d %(hour)02d:%(minute)02d:%(second)02d"


def _sqlite_datetimes(table: sa.Table) -> None:
    """SQLite keeps datetimes as text and compares them as text: bind them as
    ``YYYY-MM-DD HH:MM:SS`` (the common stored form, e.g. Chinook's) rather than with
    ``.ffffff``, which would sort after an equal stored value and make ``>=`` miss it."""
    for col in table.columns:
        if isinstance(col.type, sa.DateTime):
            col.type = sqlite.DATETIME(  # type: ignore[no-untyped-call]
                storage_format=_SQLITE_DATETIME)


def _find_table(meta: sa.MetaData, name: str) -> sa.Table | None:
    for table in meta.tables.values():
        if table.name.lower() == name.lower():
            return table
    return None


def deleted_at_column(table: sa.FromClause) -> sa.ColumnElement[Any] | None:
    """The soft-delete column (``deleted_at``, any case) of a table or alias: rows where it
    is set are deleted and never searched."""
    return next((c for c in table.columns if c.name.lower() == SOFT_DELETE_COLUMN), None)


_KINDS: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (sa.Boolean, "boolean"), (sa.Integer, "integer"),
    ((sa.Numeric, sa.Float), "number"),  # Float is no Numeric in SQLAlchemy 2.1
    (sa.DateTime, "datetime"), (sa.Date, "date"), (sa.Text, "text"),
    ((sa.String, sa.Enum), "string"), (sa.JSON, "json"),
)
"""SQL types → coarse kinds, first match wins (``Text`` is a ``String``: it comes first)."""


def sa_kind(type_: sa.types.TypeEngine[Any]) -> str:
    """The coarse kind (see :data:`agent_search.query.dsl.FieldKind`) of a SQL type; a
    date held as text (:class:`TextDate`) is the kind its values are."""
    if isinstance(type_, TextDate):
        return type_.kind
    return next((kind for types, kind in _KINDS if isinstance(type_, types)), "other")


def infer_unit(name: str, kind: str) -> str | None:
    """The unit a numeric field's name says (``duration_ms`` → ms, ``price`` → currency);
    None for other fields."""
    if kind not in ("integer", "number"):
        return None
    return next((unit for pattern, unit in _UNIT_PATTERNS if pattern.search(name)), None)


def _first_named(names: list[str], wanted: tuple[str, ...]) -> str | None:
    low = {n.lower(): n for n in names}
    for w in wanted:
        if w in low:
            return low[w]
    return None


# -- tables and schemas from definitions ---------------------------------------------


_SA_TYPES: dict[str, Callable[[], sa.types.TypeEngine[Any]]] = {
    "boolean": sa.Boolean, "date": sa.Date, "datetime": sa.DateTime, "text": sa.Text,
    "json": sa.JSON,
}
_FLOAT_TYPES = frozenset({"float", "double", "unsignedfloat", "unsigneddouble"})


def _sa_type(col: ColumnDef) -> sa.types.TypeEngine[Any]:
    """The SQL type of a defined column: by its kind (:data:`_SA_TYPES`), integers and
    numbers by their declared size, anything else a string of its length."""
    t = col.type.lower()
    if col.kind == "integer":
        return sa.BigInteger() if "big" in t else sa.Integer()
    if col.kind == "number":
        if t in _FLOAT_TYPES:
            return sa.Float()
        return sa.Numeric(col.precision or 10, col.scale if col.scale is not None else 2)
    make = _SA_TYPES.get(col.kind)
    return make() if make is not None else sa.String(col.length or 255)


def table_from_definition(definition: ModelDef, meta: sa.MetaData, *,
                          real: sa.Table | None = None) -> sa.Table:
    """The table a definition describes. With ``real`` (the reflected table), the columns
    visibility depends on — permission columns and ``deleted_at`` — are the real ones:
    added when the definition omits them, dropped when the table lacks them, typed as
    stored. A definition is never trusted to say who may see a row."""
    columns = [sa.Column(c.name, _sa_type(c), primary_key=c.is_primary, nullable=c.nullable)
               for c in definition.all_columns()
               if real is None or c.name.lower() not in GUARD_COLUMNS]
    if real is not None:
        columns += [sa.Column(c.name, c.type, nullable=True) for c in real.columns
                    if c.name.lower() in GUARD_COLUMNS]
    return sa.Table(definition.table.name, meta, *columns)


def check_distinct_tables(definitions: dict[str, ModelDef]) -> None:
    """One definition per table: a second one is a configuration error naming both files
    (two descriptions of one table can't both be right, and SQLAlchemy can't hold both)."""
    seen: dict[str, ModelDef] = {}
    for definition in definitions.values():
        name = definition.table.name.lower()
        first = seen.setdefault(name, definition)
        if first is not definition:
            raise ConfigError(
                f"table {definition.table.name!r} is defined twice: "
                f"{first.file or first.id} and {definition.file or definition.id}; "
                "keep one definition per table", file=definition.file, key="table.name")


def _resolve_model_ref(ref: str, model_id: str, definitions: dict[str, ModelDef]) -> str:
    """A relation's ``model`` seen from ``model_id``: an assistant's own model first."""
    parts = model_id.split(".")
    if parts[0] == "agents" and len(parts) >= 3:
        own = ".".join(parts[:2]) + "." + ref
        if own in definitions:
            return own
    return ref


def _schema_from_definition(model_id: str, definition: ModelDef,
                            definitions: dict[str, ModelDef], table: sa.Table) -> ModelSchema:
    """Fields as declared, for the columns the (completed) table has; the guard columns
    the definition left out are added as the table has them."""
    cols = [c for c in definition.all_columns() if c.name in table.c]
    names = [c.name for c in cols]
    fields = [_declared_field(c) for c in cols]
    fields += [FieldSchema(name=c.name, kind=sa_kind(c.type)) for c in table.columns
               if c.name not in names]
    relations = [RelationSchema(name=name, type=r.type,
                                model=_resolve_model_ref(r.model, model_id, definitions),
                                key=r.key, foreign=r.foreign)
                 for name, r in definition.relations.items()]
    pk = next((c.name for c in cols if c.is_primary), None)
    return ModelSchema(id=model_id, table=definition.table.name,
                       label=definition.name, description=definition.description,
                       fields=fields, relations=relations, primary_key=pk,
                       title_field=_first_named(names, TITLE_FIELDS))


def _declared_field(column: ColumnDef) -> FieldSchema:
    """A declared column as a field: its label, description (or comment) and unit (or
    the one its name implies)."""
    return FieldSchema(name=column.name, kind=column.kind, label=column.label,
                       description=column.description or column.comment,
                       unit=column.unit or infer_unit(column.name, column.kind),
                       primary=column.is_primary)


# -- schemas of reflected tables -----------------------------------------------------


def _referrers(meta: sa.MetaData) -> dict[str, list[tuple[sa.Table, sa.ForeignKey]]]:
    """For each table name, the (table, foreign key) pairs that point at it."""
    out: dict[str, list[tuple[sa.Table, sa.ForeignKey]]] = {}
    for table in meta.tables.values():
        for fk in table.foreign_keys:
            out.setdefault(fk.column.table.name, []).append((table, fk))
    return out


def _relation_name(column: str, target: str) -> str:
    name = re.sub(r"(_id|id)$", "", column, flags=re.I).strip("_").lower()
    return name or target.lower()


def _plural(word: str) -> str:
    return word if word.endswith("s") else word + "s"


def _schema_from_table(table: sa.Table,
                       referrers: dict[str, list[tuple[sa.Table, sa.ForeignKey]]]) -> ModelSchema:
    fields = []
    for col in table.columns:
        kind = sa_kind(col.type)
        fields.append(FieldSchema(
            name=col.name, kind=kind,
            description=col.comment, primary=bool(col.primary_key),
            unit=infer_unit(col.name, kind)))
    relations: list[RelationSchema] = []
    used: set[str] = set()

    def unique(name: str) -> str:
        base, n = name, 2
        while name in used:
            name, n = f"{base}{n}", n + 1
        used.add(name)
        return name

    for fk in sorted(table.foreign_keys, key=lambda f: f.parent.name):
        target = fk.column.table
        relations.append(RelationSchema(
            name=unique(_relation_name(fk.parent.name, target.name)), type="hasOne",
            model=target.name, key=fk.column.name, foreign=fk.parent.name))
    # a table pointing here twice (a link table of people to people: student, friend)
    # names the relation plainly through its first column, the one its rows are about
    for child, fk in sorted(referrers.get(table.name, []),
                            key=lambda p: (p[0].name, list(p[0].columns).index(p[1].parent))):
        relations.append(RelationSchema(
            name=unique(_plural(child.name.lower())), type="hasMany", model=child.name,
            key=fk.parent.name, foreign=fk.column.name))
    pk = [c.name for c in table.primary_key.columns]
    names = [c.name for c in table.columns]
    return ModelSchema(id=table.name, table=table.name, description=table.comment,
                       fields=fields, relations=relations,
                       primary_key=pk[0] if len(pk) == 1 else None,
                       title_field=_first_named(names, TITLE_FIELDS))
