"""The ``TextSearch`` abstraction (Semantic Kernel ADR 0059, option 4).

Every implementation answers the same three questions about a query:

- :meth:`TextSearch.search` — the results as plain strings (for a prompt);
- :meth:`TextSearch.get_text_search_results` — normalised ``name``/``value``/``link``
  records (:class:`TextSearchResult`, so an answer can cite its sources);
- :meth:`TextSearch.get_search_results` — the backend's own records (a
  :class:`~agent_search.types.ResultItem`, a provider's web page, a custom KB record).

Implementations add methods of their own where their backend offers more (a web
provider's :meth:`get_web_pages`, the database's rows): option 4 of the ADR, "multiple
search methods and additional methods on implementations".

An implementation only has to provide :meth:`get_search_results` and
:meth:`to_text_search_result`; the other two methods are derived from them (and may be
overridden when the backend has a better source, as web providers do).

Errors: bad input (empty query, a filter the implementation cannot translate, invalid
options) raises :class:`TextSearchError` (a ``ValueError``) with a one-line message naming
the problem; so does a search the backend reports as failed.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

from pydantic import ValidationError

from agent_search.context import Context
from agent_search.errors import FilterError, InputError, validation_summary
from agent_search.textsearch.filters import FilterSupport
from agent_search.textsearch.results import KernelSearchResults, SearchOptions, TextSearchResult
from agent_search.types import MAX_QUERY_CHARS

N = TypeVar("N")

StringMapper = Callable[[Any], str]
"""Turns one record (native or :class:`TextSearchResult`) into the string a prompt gets."""

ResultMapper = Callable[[Any], TextSearchResult]
"""Turns one native record into a :class:`TextSearchResult`."""


class TextSearchError(InputError):
    """A text search could not run: bad query, options or filter, or a failed backend."""


OptionsLike = SearchOptions | Mapping[str, Any] | None


def resolve_options(options: OptionsLike) -> SearchOptions:
    """``None`` → defaults; a mapping is validated; errors name the option."""
    if options is None:
        return SearchOptions()
    if isinstance(options, SearchOptions):
        return options
    try:
        return SearchOptions.model_validate(dict(options))
    except FilterError as exc:
        raise TextSearchError(str(exc)) from exc
    except ValidationError as exc:
        raise TextSearchError(
            f"invalid search options: {validation_summary(exc, 'options')}") from exc


def check_query(query: Any) -> str:
    if not isinstance(query, str):
        raise TextSearchError(f"query must be a string, not {type(query).__name__}")
    text = query.strip()
    if not text:
        raise TextSearchError("query must not be empty or whitespace")
    if len(text) > MAX_QUERY_CHARS:
        raise TextSearchError(f"query is {len(text)} characters; the limit is {MAX_QUERY_CHARS}")
    return text


def default_string(result: TextSearchResult) -> str:
    """The ADR's default string form of a result: its value."""
    return result.value


class TextSearch(ABC, Generic[N]):
    """Base class of text searches; see the module docstring.

    ``string_mapper`` (a record → str) and ``result_mapper`` (a native record →
    :class:`TextSearchResult`) customise the derived methods per instance.
    """

    name: str = "text search"
    filter_support: FilterSupport = FilterSupport()

    def __init__(self, *, string_mapper: StringMapper | None = None,
                 result_mapper: ResultMapper | None = None) -> None:
        self.string_mapper = string_mapper
        self.result_mapper = result_mapper

    # -- the abstraction ---------------------------------------------------------------

    async def search(self, query: str, options: OptionsLike = None, *,
                     ctx: Context | None = None) -> KernelSearchResults[str]:
        """The results as strings (``string_mapper``, default: each result's value)."""
        if self.string_mapper is not None:
            native = await self.get_search_results(query, options, ctx=ctx)
            return native.map(self.string_mapper)
        texts = await self.get_text_search_results(query, options, ctx=ctx)
        return texts.map(default_string)

    async def get_text_search_results(
        self, query: str, options: OptionsLike = None, *, ctx: Context | None = None
    ) -> KernelSearchResults[TextSearchResult]:
        """The results as name/value/link records."""
        native = await self.get_search_results(query, options, ctx=ctx)
        return native.map(self._text_result)

    @abstractmethod
    async def get_search_results(self, query: str, options: OptionsLike = None, *,
                                 ctx: Context | None = None) -> KernelSearchResults[N]:
        """The backend's own records."""

    @abstractmethod
    def to_text_search_result(self, record: N) -> TextSearchResult:
        """The default mapping of one native record to a :class:`TextSearchResult`."""

    # -- helpers for implementations -----------------------------------------------------

    def _text_result(self, record: N) -> TextSearchResult:
        if self.result_mapper is not None:
            return self.result_mapper(record)
        return self.to_text_search_result(record)

    def prepare(self, query: Any, options: OptionsLike) -> tuple[str, SearchOptions]:
        """Validate the query and options and check the filter is supported."""
        text = check_query(query)
        opts = resolve_options(options)
        try:
            self.filter_support.check(opts.filter)
        except FilterError as exc:
            raise TextSearchError(str(exc)) from exc
        return text, opts
