"""Payload filters as plain data, the same for both stores.

A filter is a tree of :class:`Group` (``must`` / ``should`` / ``must_not``) over a few
condition types; :mod:`agent_search.kb._store._edge` and :mod:`agent_search.kb._store._server`
each translate it to their engine's models, so a filter means the same on Qdrant Edge and
on a Qdrant server (both run Qdrant's own filter code).

Metadata filters given as data (:class:`~agent_search.types.QueryWhere`) become a filter
here: fields name payload keys; ``metadata.x`` and ``x`` both address the chunk's metadata
field ``x`` (payload ``meta.x``), and ``source``, ``document_id``, ``title`` address the
chunk's own fields. Nothing is evaluated as code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from agent_search.errors import FilterError as FilterError  # raised here; re-exported
from agent_search.types import QueryWhere

TOP_LEVEL_FIELDS = frozenset({"source", "document_id", "title", "chunk_index", "collection"})
IndexKind = Literal["keyword", "integer", "float", "bool", "text"]


@dataclass(frozen=True, slots=True)
class Match:
    key: str
    value: str | int | bool


@dataclass(frozen=True, slots=True)
class MatchAny:
    key: str
    values: tuple[str, ...] | tuple[int, ...]


@dataclass(frozen=True, slots=True)
class MatchExcept:
    key: str
    values: tuple[str, ...] | tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Range:
    key: str
    gt: float | None = None
    gte: float | None = None
    lt: float | None = None
    lte: float | None = None


@dataclass(frozen=True, slots=True)
class MatchText:
    key: str
    text: str


@dataclass(frozen=True, slots=True)
class IsNull:
    key: str


@dataclass(frozen=True, slots=True)
class IsEmpty:
    key: str


@dataclass(frozen=True, slots=True)
class HasId:
    ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Group:
    must: tuple[Condition, ...] = ()
    should: tuple[Condition, ...] = ()
    must_not: tuple[Condition, ...] = ()


Condition = Match | MatchAny | MatchExcept | Range | MatchText | IsNull | IsEmpty | HasId | Group


def all_of(*parts: Condition | None) -> Group | None:
    """The AND of the given conditions (None parts are left out); None when empty."""
    kept = tuple(p for p in parts if p is not None)
    if not kept:
        return None
    if len(kept) == 1 and isinstance(kept[0], Group):
        return kept[0]
    return Group(must=kept)


def payload_key(field: str) -> str:
    field = field.strip()
    if field.startswith("metadata."):
        field = field[len("metadata."):]
    if field in TOP_LEVEL_FIELDS:
        return field
    return f"meta.{field}"


def to_filter(wheres: list[QueryWhere]) -> Group | None:
    """The filter of ``wheres`` (ANDed), or None when there are none."""
    if not wheres:
        return None
    return Group(must=tuple(_condition(w) for w in wheres))


def indexed_fields(flt: Condition | None) -> dict[str, IndexKind]:
    """The payload keys a filter reads, each with the index kind that serves it."""
    out: dict[str, IndexKind] = {}

    def walk(c: Condition) -> None:
        if isinstance(c, Group):
            for part in (*c.must, *c.should, *c.must_not):
                walk(part)
        elif isinstance(c, Match):
            out.setdefault(c.key, "bool" if isinstance(c.value, bool) else
                           "integer" if isinstance(c.value, int) else "keyword")
        elif isinstance(c, MatchAny | MatchExcept):
            out.setdefault(c.key, "integer" if c.values and isinstance(c.values[0], int)
                           else "keyword")
        elif isinstance(c, Range):
            out.setdefault(c.key, "float")
        elif isinstance(c, MatchText):
            out.setdefault(c.key, "text")

    if flt is not None:
        walk(flt)
    return out


def _condition(where: QueryWhere) -> Condition:
    if where.or_ is not None:
        return Group(should=tuple(_condition(w) for w in where.or_))
    if where.and_ is not None:
        return Group(must=tuple(_condition(w) for w in where.and_))
    assert where.field is not None
    build = _BY_OPERATOR.get(where.op)
    if build is None:
        raise FilterError(f"operator {where.op!r} is not supported by the kb filter")
    return build(payload_key(where.field), where.op, where.value)


def _between(key: str, op: str, value: Any) -> Condition:
    low, high = value
    return Range(key, gte=_number(op, low), lte=_number(op, high))


_BY_OPERATOR: dict[str, Callable[[str, str, Any], Condition]] = {
    "=": lambda key, op, v: Match(key, _scalar(op, v)),
    "!=": lambda key, op, v: Group(must_not=(Match(key, _scalar(op, v)),)),
    ">": lambda key, op, v: Range(key, gt=_number(op, v)),
    ">=": lambda key, op, v: Range(key, gte=_number(op, v)),
    "<": lambda key, op, v: Range(key, lt=_number(op, v)),
    "<=": lambda key, op, v: Range(key, lte=_number(op, v)),
    "between": _between,
    "in": lambda key, op, v: MatchAny(key, _list(op, v)),
    "not in": lambda key, op, v: MatchExcept(key, _list(op, v)),
    "like": lambda key, op, v: MatchText(key, str(v).replace("%", " ").strip()),
    "is null": lambda key, op, v: IsNull(key),
    "is not null": lambda key, op, v: Group(must_not=(IsNull(key),)),
}
"""The kb filter's condition for each DSL operator: (payload key, operator, value) →
condition; an operator not here is refused."""


def _scalar(op: str, value: Any) -> str | int | bool:
    if isinstance(value, bool | int | str):
        return value
    raise FilterError(f"operator {op!r} needs a string, integer or boolean, got {value!r}")


def _number(op: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FilterError(f"operator {op!r} needs a number, got {value!r}")
    return float(value)


def _list(op: str, value: Any) -> tuple[str, ...] | tuple[int, ...]:
    items = list(value)
    if all(isinstance(v, str) for v in items):
        return tuple(items)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in items):
        return tuple(items)
    raise FilterError(f"operator {op!r} needs a list of strings or of integers")
