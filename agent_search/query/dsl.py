"""QueryDSL: the structured query a database search runs, and the interface of the
generators that turn natural language into it.

A generator sees the query text and the *schemas* of the models it may query (fields,
types, units, relations and, for categorical text fields, their known values). It returns a
plain dict; :func:`validate_dsl` checks that dict against the schemas (only known models,
fields and relations; whitelisted operators; scalar values) before anything reaches SQL,
and :func:`generate_dsl` retries a generator whose output fails validation, passing the
error back as ``feedback``. The builtin rule-based generator lives in
:mod:`agent_search.query.nl`; an LLM, agent or MCP generator only has to
implement :class:`DSLGenerator`.

Dict shape a generator returns (one query, or several under ``queries``)::

    {"model": "product",
     "select": ["id", "name", "price"],
     "wheres": [{"field": "price", "op": "<", "value": 100},
                {"or": [{"field": "category.name", "op": "=", "value": "Audio"}, ...]}],
     "orders": [{"field": "price", "order": "asc"}],
     "limit": 10,
     "terms": ["wireless"],   # optional: rank rows by these words when no order is given
     "relax": false,          # optional: nothing found → retry without the last where
     "explanation": "price under 100; ...", "warnings": [], "confidence": 0.9}

A generator may answer with an empty ``queries`` list: nothing in these models answers the
question (the search returns no records, with the generator's warnings saying why).

A query may also ask the database for numbers — ``group_by``, ``aggregates``, ``having``
(:class:`Aggregate`, :class:`Having`, defined in ``_aggregates``): one answer row per
group, e.g. ``{"group_by": ["Country"], "aggregates": ["count", "avg(Age)"], "having":
[{"aggregate": "count", "op": ">", "value": 2}], "orders": [{"field": "count"}]}``.

A where ``field`` is a field of the model, ``relation.field`` (through a relation of
the model; up to two hops: ``album.artist.Name`` on a track) or ``count(relation)``, the
number of related rows of a hasMany relation (``{"field": "count(albums)", "op": ">",
"value": 5}``: artists with more than 5 albums; ``"op": "=", "value": 0``: artists with
none; only rows the caller may see count).

A where on a field of the model itself may compare with a *computed value*, an aggregate
over the same model: ``{"field": "price", "op": ">", "value": {"aggregate":
"avg(price)"}}`` (products costing more than the average). The aggregate is computed
over the rows the caller may search (permission filters and preset filters inside), not
over the other conditions of the query.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agent_search.errors import InputError, validation_summary
from agent_search.query._aggregates import MAX_AGGREGATES, MAX_GROUP_BY, MAX_HAVING, NUMERIC_ONLY
from agent_search.query._aggregates import Aggregate as Aggregate  # re-exported: public
from agent_search.query._aggregates import Having as Having  # re-exported: public
from agent_search.types import Count, Number, QueryOrder, QueryWhere

FieldKind = Literal["string", "text", "integer", "number", "boolean", "date", "datetime",
                    "json", "other"]
"""Coarse field types generators reason about (SQL types map onto these)."""

NUMERIC_KINDS: frozenset[str] = frozenset({"integer", "number"})
TEXT_KINDS: frozenset[str] = frozenset({"string", "text"})
TEMPORAL_KINDS: frozenset[str] = frozenset({"date", "datetime"})

MAX_WHERES = 64
"""Most clauses (counting nested ones) one generated DSL may hold; more is not a query."""
MAX_HOPS = 2
"""Relations one where field may go through (``album.artist.Name`` on a track)."""
MAX_TERMS = 16
MAX_TERM_CHARS = 64


class DSLValidationError(InputError):
    """A DSL does not fit the schemas. The message names the model, field or operator."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FieldSchema(_Model):
    """One field of a model as generators see it."""

    name: str
    kind: FieldKind = "string"
    label: str | None = None
    description: str | None = None
    unit: str | None = Field(default=None, description="e.g. 'ms', 'minutes', 'USD'")
    primary: bool = False
    values: list[str] = Field(
        default_factory=list, description="Known values of a categorical text field")


class RelationSchema(_Model):
    """``this.foreign = related.key``. hasOne: this row points at one related row;
    hasMany: many related rows point at this row."""

    name: str
    type: Literal["hasOne", "hasMany"]
    model: str
    key: str
    foreign: str


class ModelSchema(_Model):
    """One model (table) as generators see it."""

    id: str
    table: str
    label: str | None = None
    description: str | None = None
    fields: list[FieldSchema]
    relations: list[RelationSchema] = Field(default_factory=list)
    primary_key: str | None = None
    title_field: str | None = Field(default=None, description="The name/title-like field")
    queryable: bool = Field(
        default=True, description="False: only reachable through a relation of another model")

    def field(self, name: str) -> FieldSchema | None:
        """The field called ``name`` (case-insensitive), or None."""
        low = name.lower()
        for f in self.fields:
            if f.name.lower() == low:
                return f
        return None

    def relation(self, name: str) -> RelationSchema | None:
        low = name.lower()
        for r in self.relations:
            if r.name.lower() == low:
                return r
        return None


class QueryDSL(_Model):
    """One query on one model. Field names are canonical (as spelled in the schema) once
    validated."""

    model: str
    select: list[str] = Field(default_factory=list)
    wheres: list[QueryWhere] = Field(default_factory=list)
    orders: list[QueryOrder] = Field(default_factory=list)
    limit: Count | None = Field(default=None, ge=1)
    terms: list[str] = Field(
        default_factory=list, max_length=MAX_TERMS,
        description="Words to rank rows by when no order is given: rows containing more "
                    "of them (in their text fields) come first")

    relax: bool = Field(
        default=False,
        description="When nothing matches, run again without the last where (a text match "
                    "the generator is unsure of) and say so in the warnings")
    relax_confidence: Number | None = Field(
        default=None, ge=0.0, le=1.0,
        description="The confidence of the answer when the relaxed where is dropped "
                    "(default: half the generator's)")
    total_asked: bool = Field(
        default=False,
        description="The question asks how many: Result.total is counted past db.count_max "
                    "(up to db.count_asked_max), since the number is the answer")
    group_by: list[str] = Field(default_factory=list, max_length=MAX_GROUP_BY)
    aggregates: list[Aggregate] = Field(default_factory=list, max_length=MAX_AGGREGATES)
    having: list[Having] = Field(default_factory=list, max_length=MAX_HAVING)

    @property
    def is_aggregate(self) -> bool:
        """The database computes answer rows (``group_by`` / ``aggregates`` / ``having``)."""
        return bool(self.aggregates or self.group_by)

    @field_validator("terms")
    @classmethod
    def _check_terms(cls, v: list[str]) -> list[str]:
        for t in v:
            if not t.strip() or len(t) > MAX_TERM_CHARS:
                raise ValueError(f"a term must be 1..{MAX_TERM_CHARS} characters")
        return v

    def to_json(self) -> dict[str, Any]:
        """The query as a plain dict: ``model``, ``wheres`` and ``orders`` always, any
        other part only when set (so a DSL written back reads as it was written)."""
        relax = {"relax": True, "relax_confidence": self.relax_confidence} if self.relax else {}
        parts: dict[str, Any] = {
            "model": self.model, "select": list(self.select),
            "wheres": [w.to_json() for w in self.wheres],
            "orders": [o.model_dump() for o in self.orders], "limit": self.limit,
            "terms": list(self.terms), **relax,
            **({"total_asked": True} if self.total_asked else {}),
            "group_by": list(self.group_by),
            "aggregates": [a.name for a in self.aggregates],
            "having": [h.to_json() for h in self.having]}
        return {k: v for k, v in parts.items()
                if k in _ALWAYS_IN_JSON or (v is not None and v != [])}


_ALWAYS_IN_JSON = frozenset({"model", "wheres", "orders"})


class GeneratedDSL(_Model):
    """A validated generator answer: queries to run plus what the generator says about
    them. ``confidence`` (0..1) scales the scores of the items found."""

    queries: list[QueryDSL]
    explanation: str = ""
    warnings: list[str] = Field(default_factory=list)
    confidence: Number = Field(default=1.0, ge=0.0, le=1.0)
    fallback: bool = Field(default=False, description="True when only a text match was made")
    generator: str = "builtin"


@runtime_checkable
class DSLGenerator(Protocol):
    """Turns natural language into QueryDSL dicts. ``feedback`` is set on a retry: the
    validation error of the previous answer, for generators that can use it (LLMs)."""

    name: str

    async def generate(self, query: str, schemas: Sequence[ModelSchema], *,
                       feedback: str | None = None) -> dict[str, Any]: ...


class DSLGenerationError(InputError):
    """The generator could not produce a valid DSL (after retries, or in strict mode)."""


def validate_dsl(raw: Mapping[str, Any], schemas: Sequence[ModelSchema], *,
                 generator: str = "builtin", allow_empty: bool = False) -> GeneratedDSL:
    """Check a generator's dict against ``schemas``; return it with canonical field names.
    ``allow_empty``: an empty ``queries`` list is a valid answer (a generator abstaining);
    an explicit DSL must query something.

    Raises :class:`DSLValidationError` naming the first problem.
    """
    if not isinstance(raw, Mapping):
        raise DSLValidationError(f"a DSL must be an object, not {type(raw).__name__}")
    by_id = {s.id.lower(): s for s in schemas}
    queries = [_validate_query(q, by_id) for q in _query_objects(raw, allow_empty)]
    warnings, confidence = _notes(raw)
    return GeneratedDSL(queries=queries, explanation=str(raw.get("explanation") or ""),
                        warnings=warnings, confidence=confidence,
                        fallback=bool(raw.get("fallback", False)), generator=generator)


_NOTE_KEYS = ("explanation", "warnings", "confidence", "fallback")
"""What a generator says about its queries, beside them."""


def _query_objects(raw: Mapping[str, Any], allow_empty: bool) -> list[Any]:
    """The query objects of a generator's dict: its ``queries`` list, or the dict itself
    (less :data:`_NOTE_KEYS`) as the one query."""
    if "queries" not in raw:
        return [{k: v for k, v in raw.items() if k not in _NOTE_KEYS}]
    items = raw["queries"]
    if not isinstance(items, list) or not (items or allow_empty):
        raise DSLValidationError("'queries' must be a non-empty list of DSL objects")
    return items


def _notes(raw: Mapping[str, Any]) -> tuple[list[str], float]:
    """The warnings and the confidence a generator's dict states, checked."""
    warnings = raw.get("warnings") or []
    if not isinstance(warnings, list) or not all(isinstance(w, str) for w in warnings):
        raise DSLValidationError("'warnings' must be a list of strings")
    confidence = raw.get("confidence", 1.0)
    if not isinstance(confidence, int | float) or not 0.0 <= float(confidence) <= 1.0:
        raise DSLValidationError("'confidence' must be a number in 0..1")
    return list(warnings), float(confidence)


def _validate_query(raw: Any, by_id: Mapping[str, ModelSchema]) -> QueryDSL:
    if not isinstance(raw, Mapping):
        raise DSLValidationError(f"a DSL query must be an object, not {type(raw).__name__}")
    model_id = raw.get("model")
    if not isinstance(model_id, str) or model_id.lower() not in by_id:
        known = ", ".join(sorted(s.id for s in by_id.values()))
        raise DSLValidationError(f"unknown model {model_id!r}; known: {known}")
    schema = by_id[model_id.lower()]
    if not schema.queryable:
        raise DSLValidationError(
            f"model {schema.id!r} was not asked for; it can only be used through a relation")
    try:
        dsl = QueryDSL.model_validate({**raw, "model": schema.id})
    except ValidationError as exc:
        raise DSLValidationError(
            f"model {schema.id}: {validation_summary(exc, 'dsl')}") from exc
    resolve = _FieldResolver(schema, by_id)
    count = [0]
    wheres = [_canonical_where(w, resolve, count) for w in dsl.wheres]
    select = [resolve.own(f, "select") for f in dsl.select]
    if dsl.is_aggregate:
        return _validate_aggregate(dsl, resolve, wheres, select)
    orders = [QueryOrder(field=resolve.order(o.field), order=o.order) for o in dsl.orders]
    if dsl.having:
        raise DSLValidationError(f"model {schema.id}: 'having' needs aggregates or group_by")
    return QueryDSL(model=schema.id, select=select, wheres=wheres, orders=orders,
                    limit=dsl.limit, terms=dsl.terms, relax=dsl.relax,
                    relax_confidence=dsl.relax_confidence, total_asked=dsl.total_asked)


def _validate_aggregate(dsl: QueryDSL, resolve: _FieldResolver, wheres: list[QueryWhere],
                        select: list[str]) -> QueryDSL:
    """Group fields (own, or one hasOne relation away), aggregates on own fields (avg and
    sum on numbers only), orders on an aggregate or a group field."""
    group_by = [resolve.group(g) for g in dsl.group_by]
    aggregates = [_canonical_aggregate(a, resolve) for a in dsl.aggregates] or \
        [Aggregate(fn="count")]
    having = [Having(aggregate=_canonical_aggregate(h.aggregate, resolve), op=h.op,
                     value=h.value) for h in dsl.having]
    names = {a.name.lower(): a.name for a in aggregates}
    names.update({g.lower(): g for g in group_by})
    orders = [_aggregate_order(o, names, resolve) for o in dsl.orders]
    return QueryDSL(model=resolve.schema.id, select=select, wheres=wheres, orders=orders,
                    limit=dsl.limit, group_by=group_by, aggregates=aggregates, having=having)


def _aggregate_order(order: QueryOrder, names: Mapping[str, str],
                     resolve: _FieldResolver) -> QueryOrder:
    """An order of an aggregate query: by one of its aggregates or group fields
    (``names``, lower-cased → as written), however the aggregate is written ("avg(age)"
    for avg(Age), "count(*)" for count)."""
    written = order.field.strip()
    if written.lower() not in names:
        with contextlib.suppress(ValueError, DSLValidationError):
            written = _canonical_aggregate(Aggregate.model_validate(written), resolve).name
    if written.lower() not in names:
        raise DSLValidationError(
            f"model {resolve.schema.id}: an aggregate query orders by one of its "
            f"aggregates or group fields ({', '.join(names.values())}), not {order.field!r}")
    return QueryOrder(field=names[written.lower()], order=order.order)


def _canonical_aggregate(agg: Aggregate, resolve: _FieldResolver) -> Aggregate:
    if agg.field is None:
        return agg
    name = resolve.own(agg.field, "aggregate")
    field = resolve.schema.field(name)
    assert field is not None
    if agg.fn in NUMERIC_ONLY and field.kind not in NUMERIC_KINDS:
        raise DSLValidationError(f"model {resolve.schema.id}: {agg.fn}() needs a numeric "
                                 f"field; {name!r} is {field.kind}")
    return Aggregate(fn=agg.fn, field=name, distinct=agg.distinct)


class _FieldResolver:
    def __init__(self, schema: ModelSchema, by_id: Mapping[str, ModelSchema]) -> None:
        self.schema = schema
        self.by_id = by_id

    def own(self, name: str, what: str) -> str:
        f = self.schema.field(name)
        if f is None:
            raise DSLValidationError(
                f"model {self.schema.id}: unknown {what} field {name!r}")
        return f.name

    def order(self, name: str) -> str:
        """An order field: own, or ``relation.Field`` through one relation (a hasMany one
        orders by the largest related value going down, the smallest going up)."""
        return self.relation_field(name, "order", to_one=False)

    def group(self, name: str) -> str:
        """A group field: own, or ``relation.Field`` through one hasOne relation."""
        return self.relation_field(name, "group_by", to_one=True)

    def relation_field(self, name: str, what: str, *, to_one: bool) -> str:
        """``name`` as an own field or ``relation.Field`` one relation away (``to_one``:
        through a hasOne relation only), written canonically; ``what`` names the part of
        the DSL in the error."""
        if "." not in name:
            return self.own(name, what)
        rel_name, _, rest = name.partition(".")
        rel = self.schema.relation(rel_name)
        target = self.by_id.get(rel.model.lower()) if rel is not None else None
        if rel is None or target is None or "." in rest or (to_one and rel.type != "hasOne"):
            kind = " of a hasOne relation" if to_one else ""
            raise DSLValidationError(f"model {self.schema.id}: {what} {name!r} must be a "
                                     f"field or relation.field{kind}")
        return self._related(rel, target, rest)

    def _related(self, rel: RelationSchema, target: ModelSchema, name: str) -> str:
        """``relation.Field`` for the field ``name`` of the model ``rel`` points at."""
        f = target.field(name)
        if f is None:
            raise DSLValidationError(
                f"model {self.schema.id}: unknown field {name!r} of relation {rel.name!r}")
        return f"{rel.name}.{f.name}"

    def where(self, name: str) -> str:
        counted = _COUNT_FIELD.fullmatch(name.strip())
        if counted is not None:
            rel = self.schema.relation(counted.group(1))
            if rel is None or rel.type != "hasMany":
                raise DSLValidationError(
                    f"model {self.schema.id}: {name!r} needs a hasMany relation")
            return f"count({rel.name})"
        if "." not in name:
            return self.own(name, "where")
        if name.count(".") > MAX_HOPS:
            raise DSLValidationError(f"model {self.schema.id}: {name!r} goes through more "
                                     f"than {MAX_HOPS} relations")
        rel_name, _, rest = name.partition(".")
        rel = self.schema.relation(rel_name)
        if rel is None:
            raise DSLValidationError(
                f"model {self.schema.id}: unknown relation {rel_name!r} in field {name!r}")
        target = self.by_id.get(rel.model.lower())
        if target is None:
            raise DSLValidationError(
                f"model {self.schema.id}: relation {rel.name!r} points at model "
                f"{rel.model!r}, which is not available")
        if "." in rest:
            return f"{rel.name}." + _FieldResolver(target, self.by_id).where(rest)
        return self._related(rel, target, rest)


def _canonical_where(w: QueryWhere, resolve: _FieldResolver, count: list[int]) -> QueryWhere:
    count[0] += 1
    if count[0] > MAX_WHERES:
        raise DSLValidationError(f"too many where clauses (more than {MAX_WHERES})")
    if w.or_ is not None:
        return QueryWhere.model_validate(
            {"or": [_canonical_where(x, resolve, count) for x in w.or_]})
    if w.and_ is not None:
        return QueryWhere.model_validate(
            {"and": [_canonical_where(x, resolve, count) for x in w.and_]})
    assert w.field is not None
    field = resolve.where(w.field)
    if isinstance(w.value, Mapping):
        return QueryWhere(field=field, op=w.op, value=_computed(field, w.op, w.value, resolve))
    _check_value(field, w.value)
    return QueryWhere(field=field, op=w.op, value=w.value)


_COMPARISONS = frozenset({"=", "!=", ">", ">=", "<", "<="})


def _computed(field: str, op: str, value: Mapping[str, Any],
              resolve: _FieldResolver) -> dict[str, str]:
    """A computed value ``{"aggregate": "avg(price)"}`` compared with a field of the
    model itself, by a plain comparison; the aggregate checked as in ``aggregates``
    (own field, avg/sum of numbers only) and written canonically."""
    where = f"model {resolve.schema.id}: where {field!r}"
    if set(value) != {"aggregate"}:
        raise DSLValidationError(f"{where}: values must be strings, numbers, booleans or "
                                 'null, or a computed value {"aggregate": "avg(Field)"} '
                                 "and nothing else")
    if "." in field or "(" in field:
        raise DSLValidationError(f"{where}: only a field of the model itself is compared "
                                 "with a computed value")
    if op not in _COMPARISONS:
        raise DSLValidationError(f"{where}: operator {op!r} can't compare with a computed "
                                 f"value (use one of {', '.join(sorted(_COMPARISONS))})")
    try:
        agg = Aggregate.model_validate(value["aggregate"])
    except ValueError as exc:  # pydantic's ValidationError is one
        raise DSLValidationError(f"{where}: {validation_summary(exc, 'aggregate')}"
                                 if isinstance(exc, ValidationError) else f"{where}: {exc}"
                                 ) from exc
    return {"aggregate": _canonical_aggregate(agg, resolve).name}


_SCALARS = (str, int, float, bool, type(None))
_COUNT_FIELD = re.compile(r"count\(\s*(\w+)\s*\)", re.ASCII | re.IGNORECASE)


def _check_value(field: str, value: Any) -> None:
    values = value if isinstance(value, list | tuple) else [value]
    for v in values:
        if not isinstance(v, _SCALARS):
            raise DSLValidationError(
                f"where {field!r}: values must be strings, numbers, booleans or null, "
                f"not {type(v).__name__}")


async def generate_dsl(generator: DSLGenerator, query: str, schemas: Sequence[ModelSchema],
                       *, retries: int = 2) -> GeneratedDSL:
    """Ask ``generator`` for a DSL and validate it; on a validation error ask again (up to
    ``retries`` more times) with the error as ``feedback``.

    Raises :class:`DSLGenerationError` when no valid DSL came back.
    """
    feedback: str | None = None
    last_error = ""
    for _attempt in range(retries + 1):
        try:
            raw = await generator.generate(query, schemas, feedback=feedback)
        except DSLGenerationError:
            raise
        except TimeoutError as exc:  # a slow endpoint: asking again would be as slow
            raise DSLGenerationError(f"generator {generator.name!r} timed out") from exc
        except Exception as exc:  # a plug-in generator's own failure
            raise DSLGenerationError(
                f"generator {generator.name!r} failed: {type(exc).__name__}: {exc}") from exc
        try:
            return validate_dsl(raw, schemas, generator=generator.name, allow_empty=True)
        except DSLValidationError as exc:
            last_error = str(exc)
            feedback = f"The previous DSL was invalid: {last_error}. Answer with a valid DSL."
    raise DSLGenerationError(
        f"generator {generator.name!r} gave no valid DSL after {retries + 1} attempts: "
        f"{last_error}")
