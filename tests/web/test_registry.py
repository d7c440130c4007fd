"""The provider registry: each provider class owns its name, key variable, base URL,
native records and its own settings section (``web.<name>``); the registry is a table
plus the ``agent_search.web_providers`` entry points, so a class added to either is
configurable like a builtin one. The flat keys of earlier releases still work, with a
DeprecationWarning."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from typing import Any

import pytest

import agent_search.registry as plugin_door
import agent_search.web.providers as providers_face
from agent_search import SearchConfig, Searcher
from agent_search.errors import ConfigError
from agent_search.types import ResultItem
from agent_search.web import (
    PROVIDER_CLASSES,
    GoogleProvider,
    MCPProvider,
    MissingAPIKeyError,
    SearchParams,
    SerpAPIProvider,
    WebProvider,
    WebSettings,
    create_handler,
    create_provider,
    provider_class,
)
from agent_search.web.providers import ProviderSettings

pytestmark = pytest.mark.anyio

HTTP_PROVIDERS = [name for name in PROVIDER_CLASSES if name != "mcp"]


@pytest.mark.parametrize("name", HTTP_PROVIDERS)
def test_each_class_configures_itself(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cls = PROVIDER_CLASSES[name]
    extra: dict[str, Any] = {"google": {"cx": "engine-id"}} if name == "google" else {}
    if cls.default_base_url is None:
        extra["base_url"] = "http://127.0.0.1:9"
    provider = create_provider(WebSettings(provider=name, **extra), api_key="k")
    assert type(provider) is cls and provider.name == name
    assert provider.base_url == (extra.get("base_url") or cls.default_base_url)
    assert cls.native is not None  # every builtin API has its own record type
    if cls.default_key_env is not None:
        monkeypatch.delenv(cls.default_key_env, raising=False)
        with pytest.raises(MissingAPIKeyError, match=cls.default_key_env):
            create_provider(WebSettings(provider=name, **extra))
        monkeypatch.setenv(cls.default_key_env, "from-env")
        assert create_provider(WebSettings(provider=name, **extra)).api_key == "from-env"


def test_provider_extras_come_from_the_providers_own_section(
        monkeypatch: pytest.MonkeyPatch) -> None:
    config = SearchConfig().merged({"web": {
        "provider": "serpapi", "serpapi": {"engine": "bing", "country": "de",
                                           "include_answer": False}}})
    serpapi = create_provider(WebSettings.from_section(config.web), api_key="k")
    assert isinstance(serpapi, SerpAPIProvider)
    assert (serpapi.engine, serpapi.country, serpapi.include_answer) == ("bing", "de", False)
    monkeypatch.setenv("MY_CX", "cx-from-env")
    google = create_provider(WebSettings(provider="google", google={"cx_env": "MY_CX"}),
                             api_key="k")
    assert isinstance(google, GoogleProvider) and google.cx == "cx-from-env"


def test_flat_keys_of_earlier_releases_still_work_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match=r"web\.engine is deprecated.*"
                                                r"web\.serpapi\.engine"):
        settings = WebSettings(provider="serpapi", engine="bing", include_answer=False,
                               serpapi={"include_answer": True})
    serpapi = create_provider(settings, api_key="k")
    assert isinstance(serpapi, SerpAPIProvider)
    # the flat key fills what the section leaves unset; the section wins where both say
    assert (serpapi.engine, serpapi.include_answer) == ("bing", True)


def test_a_bad_key_of_a_providers_section_is_named() -> None:
    with pytest.raises(ConfigError, match=r"google\.cxx: unknown key"):
        WebSettings.from_section({"provider": "google", "google": {"cxx": "1"}})
    with pytest.raises(ConfigError, match=r"tavily\.search_depth: Input should be"):
        WebSettings.from_section({"provider": "bing", "tavily": {"search_depth": "deep"}})
    with pytest.raises(ConfigError, match=r"web\.googel: unknown key"):
        WebSettings.from_section({"provider": "google", "googel": {"cx": "1"}})


@pytest.mark.parametrize(("section", "message"), [
    ({"provider": "google", "google": {"cxx": "1"}},
     "web.google.cxx: unknown key — did you mean 'cx'?"),
    ({"provider": "google", "google": {"cx": 3}}, "web.google.cx: Input should be a valid string"),
    ({"provider": "google", "googel": {"cx": "1"}},
     "web.googel: unknown key — did you mean 'google'?"),
    ({"provder": "google"}, "web.provder: unknown key — did you mean 'provider'?"),
    ({"provider": "googel"}, "web.provider: unknown provider 'googel'; one of tavily, serper, "
     "serpapi, brave, google, bing, searxng or mcp:<server> — did you mean 'google'?"),
])
def test_a_misspelt_provider_section_key_or_name_gets_did_you_mean(
        section: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        WebSettings.from_section(section)
    assert str(refused.value) == message


def test_names_are_checked_against_the_registry() -> None:
    assert provider_class("mcp:local") is MCPProvider
    for bad in ("mcp:", "duckduckgo", "mcp"):
        with pytest.raises(ConfigError) as refused:
            WebSettings.from_section({"provider": bad})
        assert str(refused.value) == (
            f"web.provider: unknown provider {bad!r}; one of tavily, serper, serpapi, brave, "
            "google, bing, searxng or mcp:<server>")
    with pytest.raises(ConfigError, match=r"'mcp:x' names no server in web\.mcp_servers "
                                          r"\(known: none\)"):
        WebSettings.from_section({"provider": "mcp:x"})


class EchoSettings(ProviderSettings):
    """``web.echo``: the language the echo says it answers in."""

    language: str | None = None


class EchoProvider(WebProvider):
    """A provider the package does not ship: it answers the query back."""

    name = "echo"
    requires_key = False
    settings_model = EchoSettings

    def __init__(self, *, language: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.language = language

    async def _request(self, params: SearchParams, timeout: float) -> Any:
        return {"text": f"{params.query} ({self.language})"}

    def parse(self, raw: Any, params: SearchParams) -> list[ResultItem]:
        return [ResultItem(type="web", content=raw["text"], score=0.9)]


async def test_a_registered_class_is_a_provider_like_the_builtin_ones(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(PROVIDER_CLASSES, "echo", EchoProvider)
    config = SearchConfig().merged({"web": {"provider": "echo", "echo": {"language": "fr"}}})
    searcher = Searcher(config)
    searcher.registry.register(create_handler(config))
    result = await searcher.search({"type": "web", "query": "bonjour"})
    assert result.error is None, result.error
    assert [i.content for i in result.items] == ["bonjour (fr)"]
    assert EchoProvider(api_key=None).native_records({"text": "x"}) is None


class TimeoutProvider(EchoProvider):
    name = "timeout"


class LegacyEchoProvider(EchoProvider):
    """A provider written before providers had sections: it read shared ``web`` keys."""

    name = "legacy"
    settings_model = ProviderSettings
    settings_options = ("language",)


def test_a_provider_reading_shared_keys_still_works_with_a_warning(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(PROVIDER_CLASSES, "legacy", LegacyEchoProvider)
    with pytest.warns(DeprecationWarning, match="web.language is deprecated"):
        settings = WebSettings(provider="legacy", language="it")
    with pytest.warns(DeprecationWarning, match="settings_options is deprecated"):
        provider = create_provider(settings)
    assert isinstance(provider, LegacyEchoProvider) and provider.language == "it"


def _plugins(monkeypatch: pytest.MonkeyPatch, *points: EntryPoint) -> None:
    """The entry points a package of the caller's would declare, read afresh."""
    def found(group: str) -> tuple[EntryPoint, ...]:
        return points if group == providers_face.ENTRY_POINT_GROUP else ()

    monkeypatch.setattr(plugin_door, "entry_points", found)
    monkeypatch.setattr(providers_face, "_plugins_read", False)
    monkeypatch.setattr(providers_face, "PROVIDER_CLASSES", dict(PROVIDER_CLASSES))


async def test_an_entry_point_registers_a_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    _plugins(monkeypatch, EntryPoint("echo", f"{__name__}:EchoProvider",
                                     providers_face.ENTRY_POINT_GROUP))
    config = SearchConfig().merged({"web": {"provider": "echo", "echo": {"language": "de"}}})
    searcher = Searcher(config)
    searcher.registry.register(create_handler(config))
    result = await searcher.search({"type": "web", "query": "hallo"})
    assert result.error is None, result.error
    assert [i.content for i in result.items] == ["hallo (de)"]


def test_a_bad_provider_entry_point_is_a_configuration_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    group = providers_face.ENTRY_POINT_GROUP
    for point, message in [
            (EntryPoint("echo", f"{__name__}:EchoSettings", group), "not a WebProvider"),
            (EntryPoint("google", f"{__name__}:EchoProvider", group), "already in use"),
            (EntryPoint("timeout", f"{__name__}:TimeoutProvider", group), "name of a web key"),
            (EntryPoint("echo2", f"{__name__}:EchoProvider", group), "differs from")]:
        _plugins(monkeypatch, point)
        with pytest.raises(ConfigError, match=message):
            WebSettings.from_section({"provider": "tavily"})
