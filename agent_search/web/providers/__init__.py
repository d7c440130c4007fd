"""Web search providers, the registry that finds one by its ``web.provider`` name, and
the factory that builds one from :class:`WebSettings`.

A provider is one module: its class (a :class:`WebProvider`), its settings (the keys of
its section ``web.<name>``, a :class:`ProviderSettings`) and its API's native record (a
:class:`NativeRecord`). It becomes configurable by one line: in :data:`BUILTIN_PROVIDERS`
for the package's own, or, for a package of yours, an entry point in the
``agent_search.web_providers`` group (read like the handlers' ``agent_search.handlers``)::

    [project.entry-points."agent_search.web_providers"]
    echo = "my_package.echo:EchoProvider"

The builtin classes and records stay importable from here by name; the modules behind
them (``_base``, ``_tavily`` ...) are private.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING

from agent_search.errors import ConfigError
from agent_search.registry import entry_point_plugins
from agent_search.web._resilience import CircuitBreaker
from agent_search.web.providers._base import (
    HttpProvider,
    LocaleSettings,
    ProviderResponse,
    ProviderSettings,
    SearchParams,
    WebProvider,
)
from agent_search.web.providers._bing import BingProvider, BingWebPage
from agent_search.web.providers._brave import BraveProvider, BraveWebResult
from agent_search.web.providers._google import GoogleProvider, GoogleWebPage
from agent_search.web.providers._mcp import MCPProvider
from agent_search.web.providers._native import NativeFormat, NativeRecord
from agent_search.web.providers._searxng import SearXNGProvider, SearXNGResult
from agent_search.web.providers._serpapi import SerpAPIProvider, SerpAPIResult
from agent_search.web.providers._serper import SerperProvider, SerperResult
from agent_search.web.providers._tavily import TavilyProvider, TavilyResult

if TYPE_CHECKING:
    from agent_search.web.settings import WebSettings

BUILTIN_PROVIDERS: dict[str, str] = {
    "tavily": "agent_search.web.providers._tavily:TavilyProvider",
    "serper": "agent_search.web.providers._serper:SerperProvider",
    "serpapi": "agent_search.web.providers._serpapi:SerpAPIProvider",
    "brave": "agent_search.web.providers._brave:BraveProvider",
    "google": "agent_search.web.providers._google:GoogleProvider",
    "bing": "agent_search.web.providers._bing:BingProvider",
    "searxng": "agent_search.web.providers._searxng:SearXNGProvider",
    "mcp": "agent_search.web.providers._mcp:MCPProvider",
}
"""The package's providers: ``web.provider`` value → ``module:Class``, in the order error
messages list them. ``mcp`` stands for every ``mcp:<server>`` value. Adding a provider
is its module and one line here."""

ENTRY_POINT_GROUP = "agent_search.web_providers"
"""The entry-point group plug-in provider classes are registered under."""


def _provider_class(cls: object) -> type[WebProvider]:
    if not (isinstance(cls, type) and issubclass(cls, WebProvider)):
        raise TypeError(f"{cls!r} is not a WebProvider class")
    return cls


def _load(ref: str) -> type[WebProvider]:
    module, _, name = ref.partition(":")
    return _provider_class(getattr(importlib.import_module(module), name))


PROVIDER_CLASSES: dict[str, type[WebProvider]] = {
    name: _load(ref) for name, ref in BUILTIN_PROVIDERS.items()}
"""The providers by name: the builtin ones, then (on first look-up) the plug-ins."""

_plugins_read = False


def _check_name(name: str, cls: type[WebProvider], where: str) -> None:
    """A provider's name is its section key under ``web``: no other provider may have
    it (the settings refuse one named like a ``web`` key), and its class answers to it."""
    if name in PROVIDER_CLASSES:
        raise ConfigError(f"web provider plug-in {name!r} ({where}) takes a name already "
                          "in use by another provider", key=where)
    if cls.name != name:
        raise ConfigError(f"web provider plug-in {where}: the entry point's name {name!r} "
                          f"differs from the class's name {cls.name!r}", key=where)


def load_plugins() -> None:
    """Add the classes of the ``agent_search.web_providers`` entry points to
    :data:`PROVIDER_CLASSES` (once per process, in name order). One that cannot be
    loaded, is no :class:`WebProvider`, or takes a name in use is a ConfigError naming
    its entry point, never a silently shadowed provider."""
    global _plugins_read
    if _plugins_read:
        return
    _plugins_read = True
    for name, cls, where in entry_point_plugins(ENTRY_POINT_GROUP, "web provider",
                                                _provider_class):
        _check_name(name, cls, where)
        PROVIDER_CLASSES[name] = cls


def provider_class(name: str) -> type[WebProvider]:
    """The class the ``web.provider`` value ``name`` names; ValueError saying which
    values exist when none does."""
    load_plugins()
    cls = PROVIDER_CLASSES.get(name.partition(":")[0])
    if cls is not None and cls.accepts(name):
        return cls
    *first, last = [c.spelling() for c in PROVIDER_CLASSES.values()]
    raise ValueError(f"unknown provider {name!r}; one of {', '.join(first)} or {last}")


def provider_names() -> tuple[str, ...]:
    """The registered providers' names: the keys of their sections under ``web``."""
    load_plugins()
    return tuple(PROVIDER_CLASSES)


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
    "BUILTIN_PROVIDERS",
    "ENTRY_POINT_GROUP",
    "PROVIDER_CLASSES",
    "BingProvider",
    "BingWebPage",
    "BraveProvider",
    "BraveWebResult",
    "GoogleProvider",
    "GoogleWebPage",
    "HttpProvider",
    "LocaleSettings",
    "MCPProvider",
    "NativeFormat",
    "NativeRecord",
    "ProviderResponse",
    "ProviderSettings",
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
    "load_plugins",
    "provider_class",
    "provider_names",
]
