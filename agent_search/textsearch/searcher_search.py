"""Text search over the :class:`~agent_search.searcher.Searcher`: any registered handler.

:class:`SearcherTextSearch` runs one search type (``"web"``, ``"kb"``, ``"db"`` or your
own) or several at once, merged and reranked like the rest of the module. Results go
through the searcher, so they get its timeouts, events, trace and request-unique citation
ids from the :class:`~agent_search.context.Context` passed in (``ctx=``): a tool call and
the auto search of the same request never hand out the same id.

Native records are :class:`~agent_search.types.ResultItem`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from agent_search._results import search_error
from agent_search.context import Context
from agent_search.errors import FilterError, validation_summary
from agent_search.searcher import Searcher
from agent_search.textsearch.base import (
    OptionsLike,
    ResultMapper,
    StringMapper,
    TextSearch,
    TextSearchError,
    check_query,
    resolve_options,
)
from agent_search.textsearch.filters import FilterSupport, TextSearchFilter
from agent_search.textsearch.request_filters import RequestFilter, request_filter_for
from agent_search.textsearch.results import KernelSearchResults, SearchOptions, TextSearchResult
from agent_search.types import QueryWhere, Request, Result, ResultItem, move_legacy_fields

_RESERVED = frozenset({"type", "query", "limit"})


def item_link(item: ResultItem) -> str | None:
    """The item's URL, else a stable reference to where it lives (``collection/doc``,
    ``model/id``), so every result can be cited."""
    if item.url:
        return item.url
    if item.collection and item.document_id:
        return f"{item.collection}/{item.document_id}"
    if item.model and item.record_id is not None:
        return f"{item.model}/{item.record_id}"
    return None


def item_to_text_result(item: ResultItem) -> TextSearchResult:
    return TextSearchResult(name=item.title, value=item.content, link=item_link(item),
                            citation_id=item.citation_id, inner_content=item)


class SearcherTextSearch(TextSearch[ResultItem]):
    """A text search over one or several search types of a searcher.

    ``types``: one type, several (searched concurrently, then merged: deduplicated,
    weighted and reranked with ``reranker``), or ``None`` for every type registered at
    the time of the search. ``request`` holds default :class:`Request` fields (e.g.
    ``{"source": "hook", "options": {"collections": ["docs"]}}``); ``filters`` adds or
    replaces the
    filter translation of a type (see :mod:`agent_search.textsearch.request_filters`).

    With several types the filter field ``type`` (``=``/``in``) picks which of them to
    search; any other field must be supported by every searched type.
    """

    def __init__(self, searcher: Searcher, types: str | Sequence[str] | None = None, *,
                 request: Mapping[str, Any] | None = None,
                 filters: Mapping[str, RequestFilter] | None = None,
                 reranker: str = "score",
                 string_mapper: StringMapper | None = None,
                 result_mapper: ResultMapper | None = None) -> None:
        super().__init__(string_mapper=string_mapper, result_mapper=result_mapper)
        self.searcher = searcher
        self._types = [types] if isinstance(types, str) else (list(types) if types else None)
        if self._types is not None and not self._types:
            raise TextSearchError("types must name at least one search type")
        bad = _RESERVED & set(request or {})
        if bad:
            raise TextSearchError(f"request defaults may not set {', '.join(sorted(bad))}")
        self.request_defaults = move_legacy_fields(request or {})
        self.filters = dict(filters or {})
        self.reranker = reranker
        label = "+".join(self._types) if self._types else "multi-source"
        self.name = f"{label} search"

    # -- configuration -----------------------------------------------------------------

    @property
    def types(self) -> list[str]:
        return list(self._types) if self._types is not None else self.searcher.registry.types

    @property
    def multi(self) -> bool:
        return self._types is None or len(self._types) > 1

    def request_filter(self, search_type: str) -> RequestFilter:
        return self.filters.get(search_type) or request_filter_for(search_type)

    @property
    def filter_support(self) -> FilterSupport:  # type: ignore[override]
        """What the filter may use: a single type's own support; with several types,
        ``type`` plus what every type supports (once ``type`` has narrowed the types,
        what every *picked* type supports)."""
        types = self.types
        if not self.multi and types:
            return self.request_filter(types[0]).support
        return self._common_support(types)

    def _common_support(self, types: Sequence[str]) -> FilterSupport:
        supports = [self.request_filter(t).support for t in types]
        names = {name for s in supports for name in s.fields}
        fields: dict[str, frozenset[str]] = {"type": frozenset({"=", "in"})}
        for name in sorted(names):
            ops = [s.operators_for(name) for s in supports]
            if all(o is not None for o in ops):
                common = frozenset.intersection(*[o for o in ops if o is not None])
                if common:
                    fields[name] = common
        or_groups = all(s.or_groups for s in supports) if supports else False
        return FilterSupport(fields, or_groups, self.name)

    # -- the abstraction ---------------------------------------------------------------

    async def get_search_results(self, query: str, options: OptionsLike = None, *,
                                 ctx: Context | None = None) -> KernelSearchResults[ResultItem]:
        if self.multi:
            text, opts = check_query(query), resolve_options(options)
            types, rest = self._split_type_filter(opts.filter)
            try:
                self._common_support(types).check(rest)
            except FilterError as exc:
                raise TextSearchError(str(exc)) from exc
        else:
            text, opts = self.prepare(query, options)
            types, rest = self._split_type_filter(opts.filter)
        ctx = ctx or self.searcher.context()
        requests = [self._request(t, text, opts, rest) for t in types]
        if len(requests) == 1 and not self.multi:
            result = await self.searcher.search(requests[0], ctx=ctx)
            if result.error:
                raise TextSearchError(result.error)
            return self._page([result], result.items, result.total, opts, result.warnings)
        results = await self.searcher.search_many(requests, ctx=ctx)
        if all(r.error for r in results):
            raise TextSearchError("; ".join(search_error(r.type, r.error) for r in results))
        merged = await self.searcher.merge(results, ctx=ctx, query=text,
                                           reranker=self.reranker, top_n=0)
        warnings = list(merged.warnings)
        if merged.rerank_error:
            warnings.append(merged.rerank_error)
        total = sum(r.total for r in results if not r.error)
        return self._page(results, merged.items, total, opts, warnings)

    def to_text_search_result(self, record: ResultItem) -> TextSearchResult:
        return item_to_text_result(record)

    # -- internals ---------------------------------------------------------------------

    def _split_type_filter(self, text_filter: TextSearchFilter | None
                           ) -> tuple[list[str], TextSearchFilter]:
        types = self.types
        if not types:
            raise TextSearchError("no search type is registered on the searcher")
        if not text_filter:
            return types, TextSearchFilter()
        picked: list[str] | None = None
        rest: list[Any] = []
        for w in text_filter.clauses:
            if w.field == "type":
                wanted = _wanted_types(w, types)
                picked = [t for t in (picked or types) if t in wanted]
            elif w.field is None and "type" in TextSearchFilter([w]).fields():
                raise TextSearchError("filter 'type' may not be used inside a group")
            else:
                rest.append(w)
        if picked is not None and not picked:
            raise TextSearchError("filter 'type': the ANDed clauses exclude every type")
        return (picked if picked is not None else types), TextSearchFilter(rest)

    def _request(self, search_type: str, query: str, opts: SearchOptions,
                 text_filter: TextSearchFilter) -> Request:
        fields: dict[str, Any] = {**self.request_defaults, "type": search_type,
                                  "query": query, "limit": opts.fetch_count,
                                  "options": dict(self.request_defaults.get("options", {}))}
        translator = self.request_filter(search_type)
        try:
            translator.support.check(text_filter)
            translator.apply(text_filter, fields)
            return Request.model_validate(fields)
        except FilterError as exc:
            raise TextSearchError(str(exc)) from exc
        except ValidationError as exc:
            raise TextSearchError(
                f"invalid {search_type} request: {validation_summary(exc)}") from exc

    def _page(self, results: Sequence[Result], items: list[ResultItem], total: int,
              opts: SearchOptions, warnings: list[str]) -> KernelSearchResults[ResultItem]:
        metadata: dict[str, Any] = {
            "search_ids": [r.search_id for r in results],
            "types": [r.type for r in results],
            "duration_ms": max((r.duration_ms for r in results), default=0.0),
        }
        if warnings:
            metadata["warnings"] = warnings
        return KernelSearchResults(opts.page(items),
                                   total if opts.include_total_count else None, metadata)


__all__ = ["SearcherTextSearch", "item_link", "item_to_text_result"]


def _wanted_types(where: QueryWhere, types: list[str]) -> list[str]:
    """The types a ``type`` clause asks for (lower-cased); an error for an operator other
    than ``=`` and ``in``, or a type not searched here."""
    if where.op not in ("=", "in"):
        raise TextSearchError(f"filter 'type' takes '=' or 'in', not {where.op!r}")
    wanted = [str(v).lower() for v in (where.value if where.op == "in" else [where.value])]
    unknown = [t for t in wanted if t not in types]
    if unknown:
        raise TextSearchError(f"filter 'type': {', '.join(unknown)} not searched "
                              f"here (types: {', '.join(types)})")
    return wanted
