"""Knowledge-base text search with configurable name/value/link mapping and record types.

The ADR's vector-store text search: a KB chunk becomes a record of *your* type
(``record_type``, any pydantic model) and the fields that give a
:class:`TextSearchResult` its ``name``, ``value`` and ``link`` are named, not assumed::

    class Doc(BaseModel):
        title: str
        text: str
        source_url: str | None = None

    kb = KBTextSearch(searcher, ["docs"], record_type=Doc,
                      name_field="title", value_field="text", link_field="source_url")
    docs = await kb.get_search_results("hybrid search")      # KernelSearchResults[Doc]

A record is validated from the chunk's metadata (the payload the KB stored) overlaid with
the item's own fields (``title``, ``content``, ``url``, ``document_id``, ``collection``,
``score``, ``citation_id``); a chunk that does not fit the record type is an error naming
the field. Without ``record_type`` the records are the
:class:`~agent_search.types.ResultItem` s themselves, and field names may also point into
``metadata`` (``"metadata.source"`` or just ``"source"``).

Searches go through the searcher's ``kb`` handler (whatever is registered), so citation
ids come from the context passed in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from agent_search.context import Context
from agent_search.errors import validation_summary
from agent_search.kb.settings import MODES
from agent_search.searcher import Searcher
from agent_search.textsearch.base import (
    OptionsLike,
    ResultMapper,
    StringMapper,
    TextSearch,
    TextSearchError,
)
from agent_search.textsearch.filters import FilterSupport
from agent_search.textsearch.request_filters import RequestFilter
from agent_search.textsearch.results import KernelSearchResults, TextSearchResult
from agent_search.textsearch.searcher_search import SearcherTextSearch, item_link
from agent_search.types import ResultItem, move_legacy_fields

R = TypeVar("R")

_ITEM_FIELDS = ("title", "content", "url", "document_id", "collection", "score",
                "citation_id")


def _lookup(record: Any, path: str) -> Any:
    """``record.path`` for models/objects, ``record[path]`` for mappings; dotted paths
    walk nested values; a ResultItem falls back to its metadata."""
    current: Any = record
    for part in path.split("."):
        if isinstance(current, Mapping):
            current = current.get(part)
        elif isinstance(current, ResultItem) and part not in ResultItem.model_fields:
            current = current.metadata.get(part)
        else:
            current = getattr(current, part, None)
        if current is None:
            return None
    return current


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


class KBTextSearch(TextSearch[R], Generic[R]):
    """Text search over knowledge-base collections; see the module docstring.

    ``collections`` default to the ``kb.collections`` configured; ``threshold`` (the
    relevance floor, the request's ``min_score``) and
    ``mode`` (``hybrid``/``dense``/``sparse``, passed as ``request.options["mode"]``) tune
    retrieval. The filter field ``collection`` (``=``/``in``) narrows the collections.
    ``name_field``/``value_field``/``link_field`` default to ``title``/``content``/``url``;
    when given with a ``record_type`` they must be fields of it. A missing link falls back
    to ``collection/document_id``.
    """

    def __init__(self, searcher: Searcher, collections: Sequence[str] = (), *,
                 record_type: type[R] | None = None,
                 name_field: str | None = None, value_field: str | None = None,
                 link_field: str | None = None,
                 threshold: float | None = None, mode: str | None = None,
                 request: Mapping[str, Any] | None = None,
                 filters: RequestFilter | None = None,
                 string_mapper: StringMapper | None = None,
                 result_mapper: ResultMapper | None = None) -> None:
        super().__init__(string_mapper=string_mapper, result_mapper=result_mapper)
        if record_type is not None:  # fields named explicitly must exist on the record
            _check_fields(record_type, {"name_field": name_field, "value_field": value_field,
                                        "link_field": link_field})
        self.record_type = record_type
        self.name_field = name_field or "title"
        self.value_field = value_field or "content"
        self.link_field = link_field or "url"
        defaults = move_legacy_fields(request or {})
        options = defaults["options"] = dict(defaults.get("options", {}))
        if collections:
            options["collections"] = list(collections)
        if threshold is not None:
            defaults["min_score"] = threshold
        if mode is not None:
            if mode not in MODES:
                raise TextSearchError(f"mode {mode!r}: expected {', '.join(MODES[:-1])} or "
                                      f"{MODES[-1]}")
            options["mode"] = mode
        self._inner = SearcherTextSearch(searcher, "kb", request=defaults,
                                         filters={"kb": filters} if filters else None)
        self.name = "knowledge-base search"

    @property
    def filter_support(self) -> FilterSupport:  # type: ignore[override]
        return self._inner.filter_support

    async def get_search_results(self, query: str, options: OptionsLike = None, *,
                                 ctx: Context | None = None) -> KernelSearchResults[R]:
        items = await self._inner.get_search_results(query, options, ctx=ctx)
        return items.map(self._record)

    async def get_text_search_results(
        self, query: str, options: OptionsLike = None, *, ctx: Context | None = None
    ) -> KernelSearchResults[TextSearchResult]:
        items = await self._inner.get_search_results(query, options, ctx=ctx)
        out: list[TextSearchResult] = []
        for item in items.items:
            record = self._record(item)
            if self.result_mapper is not None:
                result = self.result_mapper(record)
            else:
                result = self.to_text_search_result(record)
                if result.link is None:
                    result.link = item_link(item)
            if result.citation_id is None:
                result.citation_id = item.citation_id
            out.append(result)
        return KernelSearchResults(out, items.total_count, items.metadata)

    def to_text_search_result(self, record: R) -> TextSearchResult:
        link = _lookup(record, self.link_field)
        citation = _lookup(record, "citation_id") if isinstance(record, ResultItem) else None
        return TextSearchResult(name=_as_text(_lookup(record, self.name_field)),
                                value=_as_text(_lookup(record, self.value_field)) or "",
                                link=_as_text(link), citation_id=_as_text(citation),
                                inner_content=record)

    def _record(self, item: ResultItem) -> R:
        if self.record_type is None:
            return item  # type: ignore[return-value]
        data: dict[str, Any] = dict(item.metadata)
        for name in _ITEM_FIELDS:
            value = getattr(item, name)
            if value is not None:
                data[name] = value
        if isinstance(self.record_type, type) and issubclass(self.record_type, BaseModel):
            try:
                return self.record_type.model_validate(data)
            except ValidationError as exc:
                raise TextSearchError(
                    f"kb record {item.collection}/{item.document_id} does not fit "
                    f"{self.record_type.__name__}: {validation_summary(exc, 'record')}"
                ) from exc
        try:
            return self.record_type(**data)
        except TypeError as exc:
            raise TextSearchError(f"kb record does not fit {self.record_type.__name__}: "
                                  f"{exc}") from exc


def _check_fields(record_type: type[Any], mapping: Mapping[str, str | None]) -> None:
    """Name/value/link fields must exist on a pydantic record type (checked up front so a
    typo fails at construction, not on the first search)."""
    if not (isinstance(record_type, type) and issubclass(record_type, BaseModel)):
        return
    known = set(record_type.model_fields)
    for arg, field_name in mapping.items():
        if field_name is None:
            continue
        head = field_name.split(".", 1)[0]
        if head not in known:
            raise TextSearchError(f"{arg} {field_name!r} is not a field of "
                                  f"{record_type.__name__} (fields: {', '.join(sorted(known))})")
