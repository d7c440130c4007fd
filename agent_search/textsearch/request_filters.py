"""Translation of text-search filters into :class:`~agent_search.types.Request` fields.

One :class:`RequestFilter` per search type says which fields it accepts (its
:class:`FilterSupport`) and how they become request fields. The builtin ones:

==========  ====================================  ==========================================
type        field (operators)                     becomes
==========  ====================================  ==========================================
``web``     ``site`` (=, in; OR of sites)         ``options.sites``
            ``time_range`` (=)                    ``options.time_range``
``kb``      ``collection`` (=, in; OR)            ``options.collections``
            any other field (any operator)        ``options.wheres`` (metadata filters the
                                                  kb handler turns into Qdrant filters)
``db``      ``model`` (=, in; OR)                 ``options.models``
            any other field (any operator)        ``options.wheres`` (checked against the
                                                  model's columns by the db handler)
==========  ====================================  ==========================================

Handlers of your own types get a :class:`RequestFilter` of your own (see
:class:`~agent_search.textsearch.SearcherTextSearch`'s ``filters`` argument).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from agent_search.textsearch.filters import (
    ANY_FIELD,
    FilterError,
    FilterSupport,
    TextSearchFilter,
)
from agent_search.types import OPERATORS, QueryWhere

RequestFields = dict[str, Any]
"""Keyword arguments of :class:`~agent_search.types.Request`; a handler's own parameters
go into its ``options`` (a dict of their own, there from the start: ``sites``,
``models``...)."""


@dataclass(frozen=True, slots=True)
class RequestFilter:
    """How one search type turns a (checked) filter into request fields."""

    support: FilterSupport
    apply: Callable[[TextSearchFilter, RequestFields], None]


def _values(where: QueryWhere) -> list[Any]:
    if where.op == "in":
        return list(where.value)
    return [where.value]


def _list_field(wheres: Iterable[QueryWhere], name: str) -> list[str] | None:
    """Values of ``name = v`` / ``name in [...]`` clauses, and of OR groups made only of
    those; ``None`` when the filter has no such clause. Two separate (ANDed) clauses on
    the same field intersect."""
    found: list[set[str]] = []
    order: list[str] = []
    for w in wheres:
        vals = _clause_values(w, name)
        if vals is None:
            continue
        found.append(set(vals))
        order.extend(v for v in vals if v not in order)
    if not found:
        return None
    common = set.intersection(*found)
    if not common:
        raise FilterError(f"filter {name!r}: the ANDed clauses exclude every value")
    return [v for v in order if v in common]


def _clause_values(where: QueryWhere, name: str) -> list[str] | None:
    """The values a clause (or an OR group of clauses) gives field ``name``, as strings;
    None when it is about another field. An empty value is an error."""
    if where.field == name:
        vals = [str(v) for v in _values(where)]
    elif where.or_ is not None and all(c.field == name for c in where.or_):
        vals = [str(v) for c in where.or_ for v in _values(c)]
    else:
        return None
    if not all(v.strip() for v in vals):
        raise FilterError(f"filter {name!r}: values must not be empty")
    return vals


def _check_groups_single_field(text_filter: TextSearchFilter, allowed: set[str]) -> None:
    for w in text_filter.clauses:
        if w.or_ is not None:
            names = {c.field for c in w.or_}
            if len(names) != 1 or not names <= allowed or any(c.is_group for c in w.or_):
                raise FilterError("an OR group may only combine values of one field "
                                  f"({', '.join(sorted(allowed))})")
        if w.and_ is not None:
            raise FilterError("nested AND groups are not supported here; list the clauses "
                              "at the top level")


_SITE = re.compile(r"(https?://)?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
                   r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::\d{1,5})?"
                   r"(?:/[A-Za-z0-9._~%/-]*)?")


def _check_site(site: str) -> str:
    """A host (optionally with a path prefix): anything else could smuggle search
    operators (``a.com OR site:b.com``) past the restriction into the provider's query."""
    site = site.strip()
    if len(site) > 253 or not _SITE.fullmatch(site):
        raise FilterError(f"filter 'site': {site[:80]!r} is not a domain name "
                          "(e.g. devblogs.microsoft.com)")
    return site


def _apply_web(text_filter: TextSearchFilter, fields: RequestFields) -> None:
    _check_groups_single_field(text_filter, {"site"})
    sites = _list_field(text_filter.clauses, "site")
    if sites is not None:
        fields.setdefault("options", {})["sites"] = [_check_site(s) for s in sites]
    for w in text_filter.clauses:
        if w.field == "time_range":
            if w.value not in ("day", "week", "month", "year"):
                raise FilterError(f"filter 'time_range': {w.value!r} is not one of day, week, "
                                  "month, year")
            fields.setdefault("options", {})["time_range"] = w.value


def _selector_and_wheres(selector: str, request_field: str
                         ) -> Callable[[TextSearchFilter, RequestFields], None]:
    """``selector`` clauses (``=``/``in``, or an OR of them) pick ``request_field``
    (collections, models); every other clause becomes one of the options' ``wheres``."""

    def apply(text_filter: TextSearchFilter, fields: RequestFields) -> None:
        wheres: list[QueryWhere] = []
        for w in text_filter.clauses:
            if w.field == selector or (w.or_ is not None and all(c.field == selector
                                                                   for c in w.or_)):
                continue
            if selector in TextSearchFilter([w]).fields():
                raise FilterError(f"filter {selector!r} may not be mixed with other fields "
                                  "in a group")
            wheres.append(w)
        options = fields.setdefault("options", {})
        picked = _list_field(text_filter.clauses, selector)
        if picked is not None:
            options[request_field] = picked
        if wheres:
            options["wheres"] = [*options.get("wheres", []), *(w.to_json() for w in wheres)]

    return apply


WEB_FILTER = RequestFilter(
    FilterSupport.of("web search", {"site": ["=", "in"], "time_range": ["="]}, or_groups=True),
    _apply_web,
)
KB_FILTER = RequestFilter(
    FilterSupport.of("knowledge-base search",
                     {"collection": ["=", "in"], ANY_FIELD: sorted(OPERATORS)}, or_groups=True),
    _selector_and_wheres("collection", "collections"),
)
DB_FILTER = RequestFilter(
    FilterSupport.of("database search", {"model": ["=", "in"], ANY_FIELD: sorted(OPERATORS)},
                     or_groups=True),
    _selector_and_wheres("model", "models"),
)
NO_FILTER = RequestFilter(FilterSupport(), lambda f, fields: None)

BUILTIN_REQUEST_FILTERS: dict[str, RequestFilter] = {
    "web": WEB_FILTER,
    "kb": KB_FILTER,
    "db": DB_FILTER,
}


def request_filter_for(search_type: str) -> RequestFilter:
    """The builtin translator of ``search_type`` (no filters for unknown types)."""
    found = BUILTIN_REQUEST_FILTERS.get(search_type)
    if found is None:
        return RequestFilter(FilterSupport(owner=f"{search_type} search"), NO_FILTER.apply)
    return found
