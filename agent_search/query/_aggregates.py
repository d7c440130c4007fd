"""Aggregates in QueryDSL: what the database computes instead of listing records.

A query with ``aggregates`` (and optionally ``group_by`` / ``having``) asks the database
for numbers: one answer row per group (one row without ``group_by``). Written the same way
by the builtin parser and by an LLM generator, and validated the same way::

    {"model": "singer",
     "wheres": [{"field": "Country", "op": "=", "value": "France"}],
     "group_by": ["Country"],                       # own fields or "relation.Field" (hasOne)
     "aggregates": ["count", "avg(Age)", {"fn": "max", "field": "Age"}],
     "having": [{"aggregate": "count", "op": ">", "value": 2}],
     "orders": [{"field": "count", "order": "desc"}],   # an aggregate or a group field
     "limit": 10}

An aggregate is ``count`` (rows), ``count(Field)`` / ``count(distinct Field)``, or
``avg`` / ``min`` / ``max`` / ``sum`` of a field (``avg`` and ``sum`` of numeric fields
only). Its *name* — the key of its value in an answer's ``data`` — is written exactly so:
``count``, ``count(distinct Country)``, ``avg(Age)``.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

AggregateFn = Literal["count", "avg", "min", "max", "sum"]
MAX_GROUP_BY = 4
MAX_AGGREGATES = 8
MAX_HAVING = 4
NUMERIC_ONLY: frozenset[str] = frozenset({"avg", "sum"})

_WRITTEN = re.compile(r"\s*(?P<fn>count|avg|min|max|sum)\s*(?:\(\s*(?P<distinct>distinct\s+)?"
                      r"(?P<field>[\w.*]+)?\s*\))?\s*", re.I)


def _parse_written(value: Any) -> Any:
    """``"avg(Age)"`` / ``"count"`` / ``"count(distinct Country)"`` → the object form."""
    if not isinstance(value, str):
        return value
    m = _WRITTEN.fullmatch(value)
    if m is None:
        raise ValueError(f"{value[:60]!r} is not an aggregate (count, avg(Field), ...)")
    field = m.group("field")
    return {"fn": m.group("fn").lower(), "field": None if field in (None, "*") else field,
            "distinct": bool(m.group("distinct"))}


class Aggregate(BaseModel):
    """One computed value: ``fn`` over ``field`` (``count`` may have none: rows)."""

    model_config = ConfigDict(extra="forbid")

    fn: AggregateFn
    field: str | None = Field(default=None, max_length=200)
    distinct: bool = False

    @model_validator(mode="before")
    @classmethod
    def _written(cls, data: Any) -> Any:
        return _parse_written(data)

    @model_validator(mode="after")
    def _check(self) -> Aggregate:
        if self.field is None and self.fn != "count":
            raise ValueError(f"{self.fn} needs a field")
        if self.distinct and self.field is None:
            raise ValueError("count(distinct ...) needs a field")
        return self

    @property
    def name(self) -> str:
        """The key of this value in an answer row: ``count``, ``avg(Age)``..."""
        if self.field is None:
            return "count"
        return f"{self.fn}({'distinct ' if self.distinct else ''}{self.field})"

    def to_json(self) -> str:
        return self.name


class Having(BaseModel):
    """A condition on an aggregate of each group: ``count > 2``."""

    model_config = ConfigDict(extra="forbid")

    aggregate: Aggregate
    op: Literal["=", "!=", ">", ">=", "<", "<="]
    value: int | float

    def to_json(self) -> dict[str, Any]:
        return {"aggregate": self.aggregate.name, "op": self.op, "value": self.value}
