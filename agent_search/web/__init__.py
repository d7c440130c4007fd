"""Web search: the ``web`` handler and the providers behind it.

>>> from agent_search.web import create_handler
>>> searcher.registry.register(create_handler(config))

Providers (``web.provider``): tavily, serper, serpapi, brave, google, bing, searxng and
``mcp:<server>``, each with its own keys in ``web.<provider>``; each is also usable on
its own (:func:`create_provider`, or a provider class) with
``await provider.search(query, limit=..., sites=..., time_range=...)``. A provider of
your own is one module registered by an ``agent_search.web_providers`` entry point
(see :mod:`agent_search.web.providers`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_search._lazy import lazy_exports

if TYPE_CHECKING:
    from agent_search.web._fetch import Page, fetch_pages
    from agent_search.web._ssrf import HostPolicy
    from agent_search.web.errors import (
        CircuitOpenError,
        MissingAPIKeyError,
        ProviderError,
        UnsafeURLError,
    )
    from agent_search.web.handler import WebHandler, WebOptions, create_handler, falls_back
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
        CallBudget,
        FetchSettings,
        MCPSearchServerSettings,
        RetrySettings,
        WebSettings,
    )

_HOME = {
    "BingProvider": "providers", "BraveProvider": "providers", "BreakerSettings": "settings",
    "CallBudget": "settings", "falls_back": "handler",
    "CircuitOpenError": "errors", "FetchSettings": "settings", "GoogleProvider": "providers",
    "HostPolicy": "_ssrf", "HttpProvider": "providers", "MCPProvider": "providers",
    "MCPSearchServerSettings": "settings", "MissingAPIKeyError": "errors",
    "PROVIDER_CLASSES": "providers", "Page": "_fetch", "ProviderError": "errors",
    "ProviderResponse": "providers", "RetrySettings": "settings",
    "SearXNGProvider": "providers", "SearchParams": "providers",
    "SerpAPIProvider": "providers", "SerperProvider": "providers",
    "TavilyProvider": "providers", "UnsafeURLError": "errors", "WebHandler": "handler",
    "WebOptions": "handler", "WebProvider": "providers", "WebSettings": "settings",
    "create_handler": "handler", "create_provider": "providers", "fetch_pages": "_fetch",
    "provider_class": "providers",
}
"""Where each public name lives: imported on first use, so building the handler (every
searcher does) loads no provider's client library (tavily, requests) or page fetcher
before a web search."""


__getattr__, __dir__ = lazy_exports(__name__, _HOME)


__all__ = [
    "PROVIDER_CLASSES",
    "BingProvider",
    "BraveProvider",
    "BreakerSettings",
    "CallBudget",
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
    "falls_back",
    "fetch_pages",
    "provider_class",
]
