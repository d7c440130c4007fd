"""Web search providers, the registry that finds one by its ``web.provider`` name, and
the factory that builds one from :class:`WebSettings`.

The public names are exported from here; the modules behind them (``_base``, ``_tavily``
...) are private."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from agent_search.web._resilience import CircuitBreaker
from agent_search.web.providers._base import (
    HttpProvider,
    ProviderResponse,
    SearchParams,
    WebProvider,
)
from agent_search.web.providers._bing import BingProvider
from agent_search.web.providers._brave import BraveProvider
from agent_search.web.providers._google import GoogleProvider
from agent_search.web.providers._mcp import MCPProvider
from agent_search.web.providers._native import (
    BingWebPage,
    BraveWebResult,
    GoogleWebPage,
    NativeFormat,
    NativeRecord,
    SearXNGResult,
    SerpAPIResult,
    SerperResult,
    TavilyResult,
)
from agent_search.web.providers._searxng import SearXNGProvider
from agent_search.web.providers._serpapi import SerpAPIProvider
from agent_search.web.providers._serper import SerperProvider
from agent_search.web.providers._tavily import TavilyProvider

if TYPE_CHECKING:
    from agent_search.web.settings import WebSettings

PROVIDER_CLASSES: dict[str, type[WebProvider]] = {
    cls.name: cls for cls in (TavilyProvider, SerperProvider, SerpAPIProvider, BraveProvider,
                              GoogleProvider, BingProvider, SearXNGProvider, MCPProvider)}
"""The providers by name, in the order error messages list them. ``mcp`` stands for
every ``mcp:<server>`` value."""


def provider_class(name: str) -> type[WebProvider]:
    """The class the ``web.provider`` value ``name`` names; ValueError saying which
    values exist when none does."""
    cls = PROVIDER_CLASSES.get(name.partition(":")[0])
    if cls is not None and cls.accepts(name):
        return cls
    *first, last = [c.spelling() for c in PROVIDER_CLASSES.values()]
    raise ValueError(f"unknown provider {name!r}; one of {', '.join(first)} or {last}")


def api_key_for(settings: WebSettings) -> str | None:
    """The API key from the environment variable the settings name (None if unset)."""
    env = provider_class(settings.provider).key_env_for(settings)
    return (os.environ.get(env) or None) if env else None


def create_provider(settings: WebSettings, *, api_key: str | None = None,
                    breaker: CircuitBreaker | None = None) -> WebProvider:
    """The provider ``settings.provider`` names, configured from ``settings``.

    ``api_key`` defaults to the environment variable the settings name (``api_key_env``,
    else the provider's own); a provider that needs one raises
    :class:`~agent_search.web.errors.MissingAPIKeyError` without it.
    """
    cls = provider_class(settings.provider)
    return cls.from_settings(settings, api_key=api_key, breaker=breaker)


__all__ = [
    "PROVIDER_CLASSES",
    "BingProvider",
    "BingWebPage",
    "BraveProvider",
    "BraveWebResult",
    "GoogleProvider",
    "GoogleWebPage",
    "HttpProvider",
    "MCPProvider",
    "NativeFormat",
    "NativeRecord",
    "ProviderResponse",
    "SearXNGProvider",
    "SearXNGResult",
    "SearchParams",
    "SerpAPIProvider",
    "SerpAPIResult",
    "SerperProvider",
    "SerperResult",
    "TavilyProvider",
    "TavilyResult",
    "WebProvider",
    "api_key_for",
    "create_provider",
    "provider_class",
]
