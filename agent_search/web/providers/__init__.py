"""Web search providers, and the factory that builds one from :class:`WebSettings`."""

from __future__ import annotations

import os
from typing import Any

from agent_search.web.errors import MissingAPIKeyError
from agent_search.web.providers.base import (
    HttpProvider,
    ProviderResponse,
    SearchParams,
    WebProvider,
)
from agent_search.web.providers.bing import BingProvider
from agent_search.web.providers.brave import BraveProvider
from agent_search.web.providers.google import GoogleProvider
from agent_search.web.providers.searxng import SearXNGProvider
from agent_search.web.providers.serpapi import SerpAPIProvider
from agent_search.web.providers.serper import SerperProvider
from agent_search.web.providers.tavily import TavilyProvider
from agent_search.web.resilience import CircuitBreaker
from agent_search.web.settings import WebSettings

PROVIDER_CLASSES: dict[str, type[WebProvider]] = {
    "tavily": TavilyProvider,
    "serper": SerperProvider,
    "serpapi": SerpAPIProvider,
    "brave": BraveProvider,
    "google": GoogleProvider,
    "bing": BingProvider,
    "searxng": SearXNGProvider,
}


def api_key_for(settings: WebSettings) -> str | None:
    """The API key from the environment variable the settings name (None if unset)."""
    env = settings.key_env
    return (os.environ.get(env) or None) if env else None


def create_provider(settings: WebSettings, *, api_key: str | None = None,
                    breaker: CircuitBreaker | None = None) -> WebProvider:
    """The provider ``settings.provider`` names, configured from ``settings``.

    ``api_key`` defaults to the environment variable ``settings.key_env``; a provider that
    needs one raises :class:`MissingAPIKeyError` without it.
    """
    key = api_key if api_key is not None else api_key_for(settings)
    common: dict[str, Any] = {
        "api_key": key, "base_url": settings.base_url, "timeout": settings.timeout,
        "retry": settings.retry, "breaker": breaker or settings.breaker,
        "key_env": settings.key_env,
    }
    name = settings.provider
    if name.startswith("mcp:"):
        from agent_search.web.providers.mcp import MCPProvider

        server = name[4:]
        common.pop("base_url")
        return MCPProvider(server=server, config=settings.mcp_servers[server], **common)
    cls = PROVIDER_CLASSES[name]
    if cls.requires_key and not key:
        raise MissingAPIKeyError(name, settings.key_env or f"{name.upper()}_API_KEY")
    extras: dict[str, Any] = {}
    if name == "tavily":
        extras = {"search_depth": settings.search_depth,
                  "include_answer": settings.include_answer, "country": settings.country}
    elif name in ("serper", "serpapi"):
        extras = {"country": settings.country, "language": settings.language,
                  "include_answer": settings.include_answer}
        if name == "serpapi":
            extras["engine"] = settings.engine
    elif name == "google":
        extras = {"cx": settings.cx or os.environ.get(settings.cx_env),
                  "country": settings.country, "language": settings.language}
    elif name in ("brave", "bing"):
        extras = {"country": settings.country, "language": settings.language}
    elif name == "searxng":
        extras = {"language": settings.language}
    return cls(**common, **extras)


def __getattr__(name: str) -> Any:
    """``MCPProvider`` is imported on first use: the mcp SDK is heavy to import."""
    if name == "MCPProvider":
        from agent_search.web.providers.mcp import MCPProvider

        return MCPProvider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "PROVIDER_CLASSES",
    "BingProvider",
    "BraveProvider",
    "GoogleProvider",
    "HttpProvider",
    "MCPProvider",
    "ProviderResponse",
    "SearXNGProvider",
    "SearchParams",
    "SerpAPIProvider",
    "SerperProvider",
    "TavilyProvider",
    "WebProvider",
    "api_key_for",
    "create_provider",
]
