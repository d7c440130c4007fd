"""Text search over one web provider (Bing, Google, Brave, Tavily, Serper, SerpAPI,
SearXNG, or an MCP search server), with the provider's own records and full pages.

Methods beyond the abstraction (ADR option 4):

- :meth:`WebProviderTextSearch.get_search_results` returns the provider's native records
  (:class:`~agent_search.web.providers.BingWebPage`, ``GoogleWebPage``...);
- :meth:`WebProviderTextSearch.get_web_pages` returns name/value/link results whose value
  is the *full text of the page*, fetched with the web package's page fetcher (bounded
  concurrency, SSRF guard, byte and character caps); a page that cannot be fetched keeps
  its snippet, and the reason is listed in ``metadata["page_errors"]``.

Filters: ``site`` (``=``/``in``, or an OR of sites) → the provider's site restriction;
``time_range`` (``=`` day/week/month/year). Paging fetches ``top + skip`` results.
With a :class:`~agent_search.context.Context`, text results get citation ids from its
allocator, like results that come through the searcher.

To search the web through whatever web handler is registered (with its events, retries
and merging), use :class:`~agent_search.textsearch.SearcherTextSearch` with ``"web"``;
this class is for code that wants one provider and its native records.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from agent_search.config import SearchConfig
from agent_search.context import Context
from agent_search.errors import FilterError
from agent_search.textsearch.base import (
    OptionsLike,
    ResultMapper,
    StringMapper,
    TextSearch,
    TextSearchError,
)
from agent_search.textsearch.filters import FilterSupport
from agent_search.textsearch.request_filters import WEB_FILTER
from agent_search.textsearch.results import KernelSearchResults, SearchOptions, TextSearchResult
from agent_search.trace import TraceNode, activate, current_node, span
from agent_search.types import ResultItem

if TYPE_CHECKING:  # the web package is imported on first use: it is heavy
    from agent_search.web.providers import ProviderResponse, WebProvider
    from agent_search.web.settings import FetchSettings


def _is_answer(item: ResultItem) -> bool:
    return item.metadata.get("kind") == "answer"


class WebProviderTextSearch(TextSearch[Any]):
    """A text search over ``provider``; see the module docstring.

    ``fetch`` and ``allow_private_hosts`` configure :meth:`get_web_pages` (defaults: the
    web package's :class:`FetchSettings`, no private hosts).
    """

    def __init__(self, provider: WebProvider, *, fetch: FetchSettings | None = None,
                 allow_private_hosts: Iterable[str] = (),
                 string_mapper: StringMapper | None = None,
                 result_mapper: ResultMapper | None = None) -> None:
        from agent_search.web.settings import FetchSettings

        super().__init__(string_mapper=string_mapper, result_mapper=result_mapper)
        self.provider = provider
        self.fetch = fetch or FetchSettings()
        self.allow_private_hosts = list(allow_private_hosts)
        self.name = f"{provider.name} web search"

    @classmethod
    def from_config(cls, config: SearchConfig | None = None, **kwargs: Any
                    ) -> WebProviderTextSearch:
        """The provider the ``web`` section configures (provider, base_url, key env,
        fetch limits, allowed private hosts); raises ConfigError naming a bad key."""
        from agent_search.web.providers import create_provider
        from agent_search.web.settings import WebSettings

        settings = WebSettings.from_section((config or SearchConfig()).web)
        kwargs.setdefault("fetch", settings.fetch)
        kwargs.setdefault("allow_private_hosts", settings.allow_private_hosts)
        return cls(create_provider(settings), **kwargs)

    @property
    def filter_support(self) -> FilterSupport:  # type: ignore[override]
        return FilterSupport(WEB_FILTER.support.fields, True, self.name)

    async def aclose(self) -> None:
        await self.provider.aclose()

    # -- the abstraction ---------------------------------------------------------------

    async def get_search_results(self, query: str, options: OptionsLike = None, *,
                                 ctx: Context | None = None) -> KernelSearchResults[Any]:
        """The provider's records (typed per provider; parsed items for providers without
        a known native format)."""
        opts, response = await self._search(query, options, ctx)
        native = self.provider.native_records(response.raw)
        if native is None:
            records: list[Any] = [i for i in response.items if not _is_answer(i)]
            total: int | None = len(records)
        else:
            records, total = native
            total = total if total is not None else len(records)
        return KernelSearchResults(opts.page(records),
                                   total if opts.include_total_count else None,
                                   self._metadata(response))

    async def get_text_search_results(
        self, query: str, options: OptionsLike = None, *, ctx: Context | None = None
    ) -> KernelSearchResults[TextSearchResult]:
        """Name/value/link from the provider's parsed results (HTML stripped)."""
        if self.result_mapper is not None:
            return await super().get_text_search_results(query, options, ctx=ctx)
        opts, response = await self._search(query, options, ctx)
        items = opts.page([i for i in response.items if not _is_answer(i)])
        results = [self.to_text_search_result(i) for i in items]
        self._cite(results, ctx)
        total = len([i for i in response.items if not _is_answer(i)])
        return KernelSearchResults(results, total if opts.include_total_count else None,
                                   self._metadata(response))

    def to_text_search_result(self, record: Any) -> TextSearchResult:
        """Name/value/link of a parsed item or a native record; the link only when it is
        a safe http(s) URL (records from elsewhere may not have been screened)."""
        from agent_search._links import safe_url

        if isinstance(record, ResultItem):
            return TextSearchResult(name=record.title, value=record.content,
                                    link=safe_url(record.url), inner_content=record)
        data = record.model_dump(by_alias=False) if hasattr(record, "model_dump") else {}
        name = data.get("name") or data.get("title")
        value = data.get("snippet") or data.get("description") or data.get("content") or ""
        link = safe_url(data.get("url") or data.get("link"))
        return TextSearchResult(name=name, value=value, link=link, inner_content=record)

    # -- extra methods -------------------------------------------------------------------

    async def get_web_pages(self, query: str, options: OptionsLike = None, *,
                            ctx: Context | None = None) -> KernelSearchResults[TextSearchResult]:
        """Results whose value is the full text of each page (snippet when a page cannot
        be fetched)."""
        from agent_search.web import fetch_pages

        texts = await self.get_text_search_results(query, options, ctx=ctx)
        targets = [r for r in texts.items if r.link]
        with _traced(ctx, "fetch_pages", count=len(targets)):
            pages = await fetch_pages([r.link or "" for r in targets], settings=self.fetch,
                                      allow_private_hosts=self.allow_private_hosts)
        errors: dict[str, str] = {}
        for result, page in zip(targets, pages, strict=True):
            if page.ok and page.text.strip():
                result.value = page.text
            else:
                errors[result.link or ""] = page.error or "empty page"
        metadata = dict(texts.metadata)
        metadata["pages_fetched"] = len(targets) - len(errors)
        if errors:
            metadata["page_errors"] = errors
        return KernelSearchResults(texts.items, texts.total_count, metadata)

    # -- internals ---------------------------------------------------------------------

    async def _search(self, query: str, options: OptionsLike, ctx: Context | None
                      ) -> tuple[SearchOptions, ProviderResponse]:
        from agent_search.web.errors import ProviderError

        text, opts = self.prepare(query, options)
        fields: dict[str, Any] = {"options": {}}
        if opts.filter:
            try:
                WEB_FILTER.apply(opts.filter, fields)
            except FilterError as exc:
                raise TextSearchError(str(exc)) from exc
        try:
            with _traced(ctx, "web_search", provider=self.provider.name):
                response = await self.provider.search_response(
                    text, limit=opts.fetch_count, sites=fields["options"].get("sites", ()),
                    time_range=fields["options"].get("time_range"))
        except ProviderError as exc:
            raise TextSearchError(str(exc)) from exc
        return opts, response

    def _metadata(self, response: ProviderResponse) -> dict[str, Any]:
        meta: dict[str, Any] = {"provider": response.provider,
                                "duration_ms": round(response.duration_ms, 3)}
        answer = next((i.content for i in response.items if _is_answer(i)), None)
        if answer:
            meta["answer"] = answer
        return meta

    @staticmethod
    def _cite(results: list[TextSearchResult], ctx: Context | None) -> None:
        if ctx is None or not results:
            return
        for result, cid in zip(results, ctx.citations.allocate_many(len(results)),
                               strict=True):
            result.citation_id = cid


@contextlib.contextmanager
def _traced(ctx: Context | None, name: str, **attributes: Any) -> Iterator[TraceNode]:
    """A span under the current trace node, or under the context's trace root when this
    runs outside any search (a direct call with ``ctx=``)."""
    if ctx is not None and current_node() is None:
        with activate(ctx.trace), span(name, **attributes) as node:
            yield node
    else:
        with span(name, **attributes) as node:
            yield node
