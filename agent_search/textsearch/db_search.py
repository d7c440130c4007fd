"""Database text search: natural-language questions over the ``db`` handler's models.

Native records are :class:`~agent_search.types.ResultItem` (with the row in ``data``);
:meth:`DBTextSearch.get_records` is the extra method of this implementation and gives the
rows themselves. Filters: ``model`` (``=``/``in``) picks models; any other field is a
column condition passed to the handler as a :class:`~agent_search.types.QueryWhere`
(the handler checks it against the model's columns and permissions, and binds values as
SQL parameters — a filter never becomes SQL text).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent_search.context import Context
from agent_search.searcher import Searcher
from agent_search.textsearch.base import OptionsLike, ResultMapper, StringMapper, TextSearch
from agent_search.textsearch.filters import FilterSupport
from agent_search.textsearch.results import KernelSearchResults, TextSearchResult
from agent_search.textsearch.searcher_search import SearcherTextSearch, item_link
from agent_search.types import ResultItem, move_legacy_fields


class DBTextSearch(TextSearch[ResultItem]):
    """Text search over database models (default: the ``db.models`` configured)."""

    def __init__(self, searcher: Searcher, models: Sequence[str] = (), *,
                 request: Mapping[str, Any] | None = None,
                 string_mapper: StringMapper | None = None,
                 result_mapper: ResultMapper | None = None) -> None:
        super().__init__(string_mapper=string_mapper, result_mapper=result_mapper)
        defaults = move_legacy_fields(request or {})
        if models:
            defaults["options"] = {**defaults.get("options", {}), "models": list(models)}
        self._inner = SearcherTextSearch(searcher, "db", request=defaults)
        self.name = "database search"

    @property
    def filter_support(self) -> FilterSupport:  # type: ignore[override]
        return self._inner.filter_support

    async def get_search_results(self, query: str, options: OptionsLike = None, *,
                                 ctx: Context | None = None) -> KernelSearchResults[ResultItem]:
        return await self._inner.get_search_results(query, options, ctx=ctx)

    async def get_records(self, query: str, options: OptionsLike = None, *,
                          ctx: Context | None = None) -> KernelSearchResults[dict[str, Any]]:
        """The matching rows as dicts (``{"model": ..., **columns}``)."""
        items = await self.get_search_results(query, options, ctx=ctx)
        return items.map(lambda i: {"model": i.model, **(i.data or {})})

    def to_text_search_result(self, record: ResultItem) -> TextSearchResult:
        name = record.title or (f"{record.model} #{record.record_id}" if record.model else None)
        return TextSearchResult(name=name, value=record.content, link=item_link(record),
                                citation_id=record.citation_id, inner_content=record)
