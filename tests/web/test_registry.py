"""The provider registry: each provider class owns its name, key variable, base URL,
native records and the settings it reads; the registry is built from the classes, so a
class added to it is configurable like a builtin one."""

from __future__ import annotations

from typing import Any

import pytest

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

pytestmark = pytest.mark.anyio

HTTP_PROVIDERS = [name for name in PROVIDER_CLASSES if name != "mcp"]


@pytest.mark.parametrize("name", HTTP_PROVIDERS)
def test_each_class_configures_itself(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cls = PROVIDER_CLASSES[name]
    extra: dict[str, Any] = {"cx": "engine-id"} if name == "google" else {}
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


def test_provider_extras_come_from_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    serpapi = create_provider(WebSettings(provider="serpapi", engine="bing", country="de",
                                          include_answer=False), api_key="k")
    assert isinstance(serpapi, SerpAPIProvider)
    assert (serpapi.engine, serpapi.country, serpapi.include_answer) == ("bing", "de", False)
    monkeypatch.setenv("MY_CX", "cx-from-env")
    google = create_provider(WebSettings(provider="google", cx_env="MY_CX"), api_key="k")
    assert isinstance(google, GoogleProvider) and google.cx == "cx-from-env"


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


class EchoProvider(WebProvider):
    """A provider the package does not ship: it answers the query back."""

    name = "echo"
    requires_key = False
    settings_options = ("language",)

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
    config = SearchConfig().merged({"web": {"provider": "echo", "language": "fr"}})
    searcher = Searcher(config)
    searcher.registry.register(create_handler(config))
    result = await searcher.search({"type": "web", "query": "bonjour"})
    assert result.error is None, result.error
    assert [i.content for i in result.items] == ["bonjour (fr)"]
    assert EchoProvider(api_key=None).native_records({"text": "x"}) is None
