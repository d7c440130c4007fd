"""Metadata filters given as data (:class:`~agent_search.types.QueryWhere`) → Qdrant filters.

Fields name payload keys; ``metadata.x`` and ``x`` both address the chunk's metadata field
``x`` (payload ``meta.x``), and ``source``, ``document_id``, ``title`` address the
chunk's own fields. Nothing is evaluated as code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_search.types import QueryWhere

if TYPE_CHECKING:  # qdrant-client is imported where it is used: it takes ~1 s
    from qdrant_client import models

TOP_LEVEL_FIELDS = frozenset({"source", "document_id", "title", "chunk_index", "collection"})


class FilterError(ValueError):
    """A where clause that cannot be expressed as a Qdrant filter."""


def payload_key(field: str) -> str:
    field = field.strip()
    if field.startswith("metadata."):
        field = field[len("metadata."):]
    if field in TOP_LEVEL_FIELDS:
        return field
    return f"meta.{field}"


def to_qdrant_filter(wheres: list[QueryWhere]) -> models.Filter | None:
    """The Qdrant filter of ``wheres`` (ANDed), or None when there are none."""
    from qdrant_client import models
    if not wheres:
        return None
    return models.Filter(must=[_condition(w) for w in wheres])


def _condition(where: QueryWhere) -> Any:
    from qdrant_client import models
    if where.or_ is not None:
        return models.Filter(should=[_condition(w) for w in where.or_])
    if where.and_ is not None:
        return models.Filter(must=[_condition(w) for w in where.and_])
    assert where.field is not None
    key = payload_key(where.field)
    op, value = where.op, where.value
    if op == "=":
        return models.FieldCondition(key=key, match=models.MatchValue(value=_scalar(op, value)))
    if op == "!=":
        return models.Filter(must_not=[
            models.FieldCondition(key=key, match=models.MatchValue(value=_scalar(op, value)))])
    if op in (">", ">=", "<", "<="):
        name = {">": "gt", ">=": "gte", "<": "lt", "<=": "lte"}[op]
        return models.FieldCondition(key=key, range=models.Range(**{name: _number(op, value)}))
    if op == "between":
        low, high = value
        return models.FieldCondition(
            key=key, range=models.Range(gte=_number(op, low), lte=_number(op, high)))
    if op == "in":
        return models.FieldCondition(key=key, match=models.MatchAny(any=_list(op, value)))
    if op == "not in":
        excluded = models.MatchExcept(**{"except": _list(op, value)})
        return models.FieldCondition(key=key, match=excluded)
    if op == "like":
        text = str(value).replace("%", " ").strip()
        return models.FieldCondition(key=key, match=models.MatchText(text=text))
    if op == "is null":
        return models.IsNullCondition(is_null=models.PayloadField(key=key))
    if op == "is not null":
        is_null = models.IsNullCondition(is_null=models.PayloadField(key=key))
        return models.Filter(must_not=[is_null])
    raise FilterError(f"operator {op!r} is not supported by the kb filter")


def _scalar(op: str, value: Any) -> str | int | bool:
    if isinstance(value, bool | int | str):
        return value
    raise FilterError(f"operator {op!r} needs a string, integer or boolean, got {value!r}")


def _number(op: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FilterError(f"operator {op!r} needs a number, got {value!r}")
    return float(value)


def _list(op: str, value: Any) -> list[Any]:
    items = list(value)
    if all(isinstance(v, str) for v in items) or all(
            isinstance(v, int) and not isinstance(v, bool) for v in items):
        return items
    raise FilterError(f"operator {op!r} needs a list of strings or of integers")
