"""Web search: the ``web`` handler and the providers behind it.

>>> from agent_search.web import create_handler
>>> searcher.registry.register(create_handler(config))

Providers (``web.provider``): tavily, serper, serpapi, brave, google, bing, searxng and
``mcp:<server>``; each is also usable on its own (:func:`create_provider`, or a provider
class) with ``await provider.search(query, limit=..., sites=..., time_range=...)``.
"""

from agent_search.web._fetch import Page, fetch_pages
from agent_search.web._ssrf import HostPolicy
from agent_search.web.errors import (
    CircuitOpenError,
    MissingAPIKeyError,
    ProviderError,
    UnsafeURLError,
)
from agent_search.web.handler import WebHandler, WebOptions, create_handler
from agent_search.web.providers import (
    PROVIDER_CLASSES,
    BingProvider,
    BraveProvider,
    GoogleProvider,
    HttpProvider,
    MCPProvider,
    ProviderResponse,
    SearchParams,
    SearXNGProvider,
    SerpAPIProvider,
    SerperProvider,
    TavilyProvider,
    WebProvider,
    create_provider,
    provider_class,
)
from agent_search.web.settings import (
    BreakerSettings,
    FetchSettings,
    MCPSearchServerSettings,
    RetrySettings,
    WebSettings,
)

__all__ = [
    "PROVIDER_CLASSES",
    "BingProvider",
    "BraveProvider",
    "BreakerSettings",
    "CircuitOpenError",
    "FetchSettings",
    "GoogleProvider",
    "HostPolicy",
    "HttpProvider",
    "MCPProvider",
    "MCPSearchServerSettings",
    "MissingAPIKeyError",
    "Page",
    "ProviderError",
    "ProviderResponse",
    "RetrySettings",
    "SearXNGProvider",
    "SearchParams",
    "SerpAPIProvider",
    "SerperProvider",
    "TavilyProvider",
    "UnsafeURLError",
    "WebHandler",
    "WebOptions",
    "WebProvider",
    "WebSettings",
    "create_handler",
    "create_provider",
    "fetch_pages",
    "provider_class",
]
