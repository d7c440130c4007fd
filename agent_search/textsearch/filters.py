"""Text-search filters: data, never code.

A :class:`TextSearchFilter` is a list of :class:`~agent_search.types.QueryWhere` clauses
(``field``/``op``/``value``, or nested ``{"or": [...]}`` / ``{"and": [...]}`` groups),
ANDed at the top level — the same shape the database handler and the CLI's ``--where``
use. Helpers build the common cases::

    equal_to("site", "devblogs.microsoft.com")
    TextSearchFilter().equal_to("collection", "docs").any_of(
        equal_to("lang", "en"), equal_to("lang", "fr"))

Each text-search implementation declares what it can translate in a
:class:`FilterSupport` (fields → operators); :meth:`FilterSupport.check` rejects any other
field or operator with a :class:`FilterError` naming it and listing what is supported. A
filter is only ever *translated* (into request fields, provider parameters or QueryWhere
clauses), never evaluated, so a model-provided value cannot run anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from agent_search.errors import FilterError as FilterError  # raised here; re-exported
from agent_search.errors import validation_summary
from agent_search.types import QueryWhere, normalize_operator

ANY_FIELD = "*"
"""A :class:`FilterSupport` key meaning "any other field" (e.g. database columns)."""


def _where(field_name: str, op: str, value: Any) -> QueryWhere:
    try:
        return QueryWhere(field=field_name, op=op, value=value)
    except ValidationError as exc:
        raise FilterError(f"filter {field_name!r} {op!r}: {validation_summary(exc, '')}") from exc


@dataclass(slots=True)
class TextSearchFilter:
    """Clauses ANDed together. Builder methods return ``self`` so calls chain."""

    clauses: list[QueryWhere] = field(default_factory=list)

    # -- builders ----------------------------------------------------------------------

    def where(self, field_name: str, op: str, value: Any = None) -> TextSearchFilter:
        self.clauses.append(_where(field_name, op, value))
        return self

    def equal_to(self, field_name: str, value: Any) -> TextSearchFilter:
        return self.where(field_name, "=", value)

    def not_equal_to(self, field_name: str, value: Any) -> TextSearchFilter:
        return self.where(field_name, "!=", value)

    def any_of(self, *filters: TextSearchFilter | QueryWhere) -> TextSearchFilter:
        """Add an OR group of the given filters (each filter's own clauses stay ANDed)."""
        self.clauses.append(QueryWhere.model_validate({"or": [_as_where(f) for f in filters]}))
        return self

    def extend(self, other: TextSearchFilter | None) -> TextSearchFilter:
        """A new filter with the clauses of ``self`` and then ``other`` (both kept)."""
        return TextSearchFilter([*self.clauses, *(other.clauses if other else [])])

    # -- reading -----------------------------------------------------------------------

    def __bool__(self) -> bool:
        return bool(self.clauses)

    def __iter__(self) -> Iterator[QueryWhere]:
        return iter(self.clauses)

    def fields(self) -> set[str]:
        """Every field named anywhere in the filter (groups included)."""
        return {w.field for w in _walk(self.clauses) if w.field is not None}

    def to_json(self) -> list[dict[str, Any]]:
        return [w.to_json() for w in self.clauses]

    @classmethod
    def from_json(cls, data: Iterable[Mapping[str, Any]] | Mapping[str, Any]) -> TextSearchFilter:
        """From the JSON form (a clause, a group, or a list of them); errors name the
        problem."""
        items = [data] if isinstance(data, Mapping) else list(data)
        try:
            return cls([QueryWhere.model_validate(dict(d)) for d in items])
        except ValidationError as exc:
            raise FilterError(f"invalid filter {validation_summary(exc, 'clause')}") from exc


def equal_to(field_name: str, value: Any) -> TextSearchFilter:
    """``field = value`` (SK's ``TextSearchFilter().Equality(...)``)."""
    return TextSearchFilter().equal_to(field_name, value)


def not_equal_to(field_name: str, value: Any) -> TextSearchFilter:
    return TextSearchFilter().not_equal_to(field_name, value)


def where(field_name: str, op: str, value: Any = None) -> TextSearchFilter:
    return TextSearchFilter().where(field_name, op, value)


def any_of(*filters: TextSearchFilter | QueryWhere) -> TextSearchFilter:
    """An OR of the given filters."""
    return TextSearchFilter().any_of(*filters)


def all_of(*filters: TextSearchFilter | QueryWhere | None) -> TextSearchFilter:
    """An AND of the given filters (``None`` entries are skipped)."""
    out = TextSearchFilter()
    for f in filters:
        if f is None:
            continue
        if isinstance(f, TextSearchFilter):
            out.clauses.extend(f.clauses)
        else:
            out.clauses.append(f)
    return out


def _as_where(f: TextSearchFilter | QueryWhere) -> QueryWhere:
    if isinstance(f, QueryWhere):
        return f
    if not f.clauses:
        raise FilterError("an empty filter cannot be part of an OR group")
    if len(f.clauses) == 1:
        return f.clauses[0]
    return QueryWhere.model_validate({"and": list(f.clauses)})


def _walk(wheres: Iterable[QueryWhere]) -> Iterator[QueryWhere]:
    for w in wheres:
        yield w
        for group in (w.or_, w.and_):
            if group:
                yield from _walk(group)


@dataclass(frozen=True, slots=True)
class FilterSupport:
    """What one implementation can translate: field → allowed operators, and whether OR
    groups are allowed. ``ANY_FIELD`` (``"*"``) covers fields not listed."""

    fields: Mapping[str, frozenset[str]] = field(default_factory=dict)
    or_groups: bool = False
    owner: str = "this text search"

    @classmethod
    def of(cls, owner: str, fields: Mapping[str, Iterable[str]], *,
           or_groups: bool = False) -> FilterSupport:
        """Declare support; operator spellings are normalised (``eq`` → ``=``)."""
        norm = {k: frozenset(normalize_operator(o) for o in ops) for k, ops in fields.items()}
        return cls(norm, or_groups, owner)

    def describe(self) -> str:
        if not self.fields:
            return "no filters"
        parts = []
        for name, ops in sorted(self.fields.items()):
            label = "any other field" if name == ANY_FIELD else repr(name)
            parts.append(f"{label} ({', '.join(sorted(ops))})")
        return "; ".join(parts)

    def operators_for(self, field_name: str) -> frozenset[str] | None:
        ops = self.fields.get(field_name)
        return ops if ops is not None else self.fields.get(ANY_FIELD)

    def check(self, text_filter: TextSearchFilter | None) -> None:
        """Raise :class:`FilterError` for any field, operator or group not supported."""
        if not text_filter:
            return
        self._check(text_filter.clauses, nested=False)

    def _check(self, wheres: Iterable[QueryWhere], *, nested: bool) -> None:
        for w in wheres:
            if w.or_ is not None:
                if not self.or_groups:
                    raise FilterError(f"{self.owner} does not support OR groups in filters; "
                                      f"supported: {self.describe()}")
                self._check(w.or_, nested=True)
                continue
            if w.and_ is not None:
                self._check(w.and_, nested=True)
                continue
            assert w.field is not None
            ops = self.operators_for(w.field)
            if ops is None:
                raise FilterError(f"{self.owner} cannot filter on field {w.field!r}; "
                                  f"supported: {self.describe()}")
            if w.op not in ops:
                raise FilterError(f"{self.owner} cannot filter {w.field!r} with operator "
                                  f"{w.op!r}; allowed: {', '.join(sorted(ops))}")
