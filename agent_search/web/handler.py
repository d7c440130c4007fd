"""The ``web`` search handler: configuration → provider → items (→ full pages).

Request options (``request.options``, :class:`WebOptions`) it reads:

- ``sites`` (list of domains), ``time_range`` (``day``/``week``/``month``/``year``):
  passed to the provider.
- ``keywords`` (bool, default ``web.keywords``): turn a conversational query into
  keywords with the builtin extractor before searching (``uses.keyword``,
  ``keyword.max_keywords`` and ``keyword.language`` apply).
- ``fetch_pages`` (bool, default ``web.fetch_pages``): replace each item's snippet by the
  text of its page (the snippet moves to ``metadata["snippet"]``), fetched concurrently
  under the SSRF guard and the limits of ``web.fetch``.
- ``max_pages`` (int): fetch at most this many pages (default ``web.fetch.max_pages``).
- ``max_keywords`` (int), ``language`` (str): override ``keyword.max_keywords`` /
  ``keyword.language`` for this search.

Keywords come from the run's extractor, ``ctx.deps.keywords``: in an assistant's stream
the ``uses.keyword`` processor (an assistant, an MCP tool, or builtin); elsewhere the
builtin extractor, with a warning in ``Result.warnings`` when ``uses.keyword`` names
another processor. The handler declares ``keyword_queries``, so auto search extracts
them once, before the search, and tells the handler so (``keywords: false``).

Result links are untrusted: one that is not a safe http(s) URL is removed from its item
(``url=None``, reason in ``metadata["url_refused"]``; the item's text is kept) and the
Result gets a warning saying how many were refused and why. Scores are on the project's
absolute 0..1 scale (see :mod:`agent_search.web._normalize`); ``web.min_score`` floors are
applied by the searcher, not here.
"""

from __future__ import annotations

import hashlib
import math
import time
from typing import TYPE_CHECKING

import anyio
from pydantic import Field

from agent_search.config import KeywordConfig, SearchConfig
from agent_search.context import Context
from agent_search.errors import ConfigError, InputError
from agent_search.registry import config_option
from agent_search.trace import span
from agent_search.types import Count, Request, Result, ResultItem, SearchOptions, TimeRange
from agent_search.web.errors import CircuitOpenError, MissingAPIKeyError, ProviderError
from agent_search.web.settings import LEGACY_KEYS, FetchSettings, WebSettings

if TYPE_CHECKING:  # imported where used: the providers' HTTP clients load on the first search
    from agent_search.web._resilience import CircuitBreaker
    from agent_search.web.providers import ProviderResponse, WebProvider


MAX_SITES = 100
"""Most sites one search may name."""


class WebOptions(SearchOptions):
    """The web handler's parameters (``request.options``; keys of other handlers are
    ignored); the searcher fills unset ones from the ``web`` and ``keyword`` sections
    once (:meth:`filled`)."""

    sites: list[str] | None = Field(default=None, max_length=MAX_SITES, description=(
        "search only these sites (domains)"))
    time_range: TimeRange | None = Field(default=None, description=(
        "only pages from the last day, week, month or year"))
    keywords: bool | None = config_option(WebSettings, "keywords", "web.keywords")
    fetch_pages: bool | None = config_option(WebSettings, "fetch_pages", "web.fetch_pages")
    max_pages: Count | None = config_option(FetchSettings, "max_pages", "web.fetch.max_pages")
    max_keywords: Count | None = config_option(KeywordConfig, "max_keywords",
                                               "keyword.max_keywords")
    language: str | None = config_option(KeywordConfig, "language", "keyword.language")

    def filled(self, config: SearchConfig) -> WebOptions:
        if None not in (self.keywords, self.fetch_pages, self.max_keywords, self.language):
            return self
        web, kw = config.web.settings(WebSettings), config.keyword
        return self.model_copy(update={
            "keywords": web.keywords if self.keywords is None else self.keywords,
            "fetch_pages": web.fetch_pages if self.fetch_pages is None else self.fetch_pages,
            "max_keywords": self.max_keywords or kw.max_keywords,
            "language": self.language or kw.language})


class WebHandler:
    """Searches the web through the configured provider.

    Providers are built lazily per distinct configuration (an assistant may override the
    global ``web`` section) and kept; each (provider, endpoint) has one circuit breaker
    shared by all of them. The API key is read from the environment on every search, so
    a key set after start-up is picked up.
    """

    type = "web"
    options_model = WebOptions
    keyword_queries = True
    """A search engine wants keywords: auto search extracts them and says so
    (``keywords: false``)."""

    def __init__(self, config: SearchConfig | None = None) -> None:
        self.config = config or SearchConfig()
        self.settings = self.config.web.settings(WebSettings)
        self._providers: dict[str, tuple[str, WebProvider]] = {}
        self._retired: list[WebProvider] = []
        self._breakers: dict[tuple[str, str], CircuitBreaker] = {}
        self._config_keys: dict[int, tuple[WebSettings, str]] = {}
        self._budgets: dict[tuple[str, str], list[float]] = {}  # → [window start, calls]

    def can_handle(self, ctx: Context, request: Request) -> bool:
        return request.type == "web"

    async def search(self, ctx: Context, request: Request) -> Result:
        try:
            settings = self.settings_for(ctx.config)  # an error names its key: web.provider
            options = WebOptions.of(request).filled(ctx.config)  # the searcher's, filled
        except (ConfigError, InputError, ValueError) as exc:
            return Result(type="web", query=request.query, error=str(exc))
        query = request.query
        warnings: list[str] = []
        if options.keywords:
            query = await self._keyword_query(ctx, query, options, warnings)

        limit = min(request.limit or settings.max_results, settings.max_results)
        response, tried = await self._ask(settings.chain(), query, limit, options)
        if response is None:
            return Result(type="web", query=request.query, error=_all_failed(tried),
                          fallback=tried or None)
        items = response.items
        warnings.extend(_refused(response.provider, items))
        if query != request.query:
            for item in items:
                item.metadata["search_query"] = query
        await _fetch_pages(items, settings, options)
        return Result(type="web", query=request.query, items=items, total=len(items),
                      warnings=warnings, provider=response.provider, fallback=tried or None)

    async def _ask(self, chain: list[WebSettings], query: str, limit: int,
                   options: WebOptions) -> tuple[ProviderResponse | None, list[str]]:
        """The first provider of ``chain`` that answers, and why each one before it did
        not (``"<provider>: <reason>"``). A failure that the next provider would meet
        too (a bad query) ends the search; see :func:`falls_back`. A provider that has a
        next one gets at most its share of the time left (the time left divided by the
        providers left), so a hanging one leaves time for the others."""
        tried: list[str] = []
        for i, settings in enumerate(chain):
            left = len(chain) - i
            try:
                provider = self.provider_for(settings)
                self._spend(settings, provider)
                response = await _call(provider, query, limit, options, left)
            except ProviderError as exc:
                tried.append(str(exc))
                if not falls_back(exc):
                    break
                continue
            return response, tried
        return None, tried

    def _spend(self, settings: WebSettings, provider: WebProvider) -> None:
        """Count one call against the provider's budget; raise :class:`BudgetSpent`
        instead when it is spent (before any call is made)."""
        budget = settings.budget
        if budget is None:
            return
        key = (provider.name, provider.base_url)
        now = time.monotonic()
        window = self._budgets.get(key)
        if window is None or now - window[0] >= budget.per:
            window = self._budgets[key] = [now, 0]
        if window[1] >= budget.calls:
            retry_in = budget.per - (now - window[0])
            raise BudgetSpent(provider.name, budget.calls, budget.per, retry_in)
        window[1] += 1

    async def cache_version(self, ctx: Context, request: Request) -> str | None:
        """The web has no version this process can see: an entry is good for the
        cache's TTL (the key holds the provider settings, so another provider or
        endpoint is another entry)."""
        return ""

    # -- configuration -------------------------------------------------------------------

    def settings_for(self, config: SearchConfig) -> WebSettings:
        """The validated ``web`` settings of ``config`` (validated once per section)."""
        return config.web.settings(WebSettings)

    def provider_for(self, settings: WebSettings) -> WebProvider:
        """The provider for ``settings`` with the current API key (built on first use)."""
        from agent_search.web._resilience import CircuitBreaker
        from agent_search.web.providers import api_key_for, create_provider, provider_class

        api_key = api_key_for(settings)
        endpoint = (settings.provider, provider_class(settings.provider).endpoint_for(settings))
        digest = hashlib.sha256((api_key or "").encode()).hexdigest()[:16]
        key = self._config_key(settings)
        known = self._providers.get(key)
        if known is not None and known[0] == digest:
            return known[1]
        breaker = self._breakers.get(endpoint)
        if breaker is None:
            breaker = self._breakers[endpoint] = CircuitBreaker(settings.provider,
                                                                settings.breaker)
        provider = create_provider(settings, api_key=api_key, breaker=breaker)
        if known is not None:  # the key changed: the old client is closed with the handler
            self._retired.append(known[1])
        self._providers[key] = (digest, provider)
        return provider

    def _config_key(self, settings: WebSettings) -> str:
        """The settings that shape a provider, as a string (memoised per settings object:
        settings objects are themselves cached, so the id is stable)."""
        known = self._config_keys.get(id(settings))
        if known is not None and known[0] is settings:
            return known[1]
        key = settings.model_dump_json(
            include={"provider", "base_url", "timeout", "provider_options", *LEGACY_KEYS,
                     "mcp_servers", "retry", "breaker", "api_key_env"})
        self._config_keys[id(settings)] = (settings, key)
        return key

    async def _keyword_query(self, ctx: Context, query: str, options: WebOptions,
                             warnings: list[str]) -> str:
        """The query as keywords, by the run's extractor (``ctx.deps.keywords``: the
        builtin one, or the ``uses.keyword`` delegate of an assistant's stream)."""
        kw = ctx.config.keyword
        keywords = await ctx.deps.keywords(
            ctx.config.uses.keyword, query, max_keywords=options.max_keywords or kw.max_keywords,
            language=options.language or kw.language, warnings=warnings)
        return " ".join(keywords) if keywords else query

    async def aclose(self) -> None:
        """Close every provider's connections."""
        providers = [p for _, p in self._providers.values()] + self._retired
        self._providers, self._retired = {}, []
        for provider in providers:
            await provider.aclose()


def create_handler(config: SearchConfig | None = None) -> WebHandler:
    """The ``web`` handler for ``config``; raises :class:`ConfigError` naming the key when
    the ``web`` section is invalid."""
    return WebHandler(config)


class BudgetSpent(ProviderError):
    """The provider's call budget (``web.budget``) is spent for this window."""

    def __init__(self, provider: str, calls: int, per: float, retry_in: float) -> None:
        super().__init__(provider, f"call budget spent ({calls} calls per {per:g}s; "
                                   f"next call in {max(0.0, retry_in):.1f}s)")


FALLBACK_STATUSES = frozenset({401, 402, 403, 429})
"""HTTP answers after which the next provider is asked (and every 5xx): rate limits, a
payment or quota wall, a key refused. Other 4xx say the request is wrong everywhere."""


def falls_back(exc: ProviderError) -> bool:
    """Whether the next provider should be asked after ``exc``: a missing key, an open
    circuit, a spent budget, a timeout or a connection failure, or an answer in
    :data:`FALLBACK_STATUSES` or 5xx."""
    if isinstance(exc, MissingAPIKeyError | CircuitOpenError | BudgetSpent):
        return True
    if exc.status is None:
        return exc.retryable  # timeouts and connection failures are retryable
    return exc.status in FALLBACK_STATUSES or exc.status >= 500


async def _call(provider: WebProvider, query: str, limit: int, options: WebOptions,
                left: int) -> ProviderResponse:
    """One provider's answer, traced; with ``left`` > 1 providers to go, bounded to its
    share of the time left."""
    share = remaining_share(left)
    with span("web_search", provider=provider.name) as node:
        try:
            with anyio.CancelScope(deadline=share) as scope:
                response = await provider.search_response(
                    query, limit=limit, sites=list(options.sites or ()),
                    time_range=options.time_range)
            if scope.cancelled_caught:
                raise ProviderError(provider.name, "no answer within its share of the "
                                    "deadline", retryable=True)
        except ProviderError as exc:
            node.status, node.error = "failed", str(exc)
            raise
        node.attributes["result_count"] = len(response.items)
    return response


def remaining_share(left: int) -> float:
    """The deadline of a provider with ``left - 1`` others after it: now plus its share
    of the time left (no deadline of its own when it is the last, or there is none)."""
    deadline = anyio.current_effective_deadline()
    if left <= 1 or math.isinf(deadline):
        return math.inf
    now = anyio.current_time()
    return now + (deadline - now) / left


def _all_failed(tried: list[str]) -> str:
    """The error of a search no provider answered: the one reason, or all of them."""
    if len(tried) == 1:
        return tried[0]
    return f"all {len(tried)} providers failed: {'; '.join(tried)}"


def _refused(provider: str, items: list[ResultItem]) -> list[str]:
    """The warning for result URLs the provider's reader refused (and removed), if any."""
    refused = sorted({str(i.metadata["url_refused"]) for i in items
                      if "url_refused" in i.metadata})
    if not refused:
        return []
    count = sum("url_refused" in i.metadata for i in items)
    return [f"{provider}: {count} result URL(s) refused and removed "
            f"(only http(s) links are passed on): {'; '.join(refused[:3])}"]


async def _fetch_pages(items: list[ResultItem], settings: WebSettings,
                       options: WebOptions) -> None:
    """The pages of the results read into them, when the settings or the request's
    options ask for it."""
    fetch = settings.fetch_pages if options.fetch_pages is None else options.fetch_pages
    if fetch and items:
        from agent_search.web._fetch import attach_pages

        with span("fetch_pages"):
            await attach_pages(items, settings, max_pages=options.max_pages)
