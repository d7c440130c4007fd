"""The ``web`` handler inside a real Searcher, against local provider servers."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from agent_search import ListSink, Request, SearchConfig, Searcher
from agent_search.errors import ConfigError
from agent_search.web import create_handler

from ..support.local_http import SECRET, LocalServer, Reply, recorded

pytestmark = pytest.mark.anyio


def searcher_for(web: dict[str, Any]) -> Searcher:
    config = SearchConfig().merged({"web": web})
    searcher = Searcher(config)
    searcher.registry.register(create_handler(config))
    return searcher


async def test_tavily_through_the_searcher(server: LocalServer,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", SECRET)
    server.route("POST", "/search", Reply(body=recorded("tavily_what_is_the_semantic_kernel.json")))
    searcher = searcher_for({"provider": "tavily", "base_url": server.url})
    result = await searcher.search({"type": "web", "query": "What is the Semantic Kernel?",
                                    "limit": 3, "sites": ["learn.microsoft.com"],
                                    "time_range": "month"})
    assert result.error is None
    assert len(result.items) == 3
    assert [i.citation_id for i in result.items] == ["1", "2", "3"]  # a fresh context
    assert all(i.source == "user" and i.type == "web" for i in result.items)
    body = server.requests[0].json()
    assert body["include_domains"] == ["learn.microsoft.com"]
    assert body["time_range"] == "month"
    assert body["max_results"] == 3


async def test_missing_key_is_a_result_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    searcher = searcher_for({"provider": "tavily", "base_url": "http://127.0.0.1:9"})
    result = await searcher.search({"type": "web", "query": "x"})
    assert result.error == "web: tavily: API key not configured (set TAVILY_API_KEY)"
    assert result.items == []


async def test_custom_key_env_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MY_BRAVE", raising=False)
    searcher = searcher_for({"provider": "brave", "api_key_env": "MY_BRAVE"})
    result = await searcher.search({"type": "web", "query": "x"})
    assert result.error == "web: brave: API key not configured (set MY_BRAVE)"


async def test_max_results_caps_the_request(server: LocalServer,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BING_API_KEY", SECRET)
    server.route("GET", "/v7.0/search",
                 Reply(body=recorded("bing_what_is_the_semantic_kernel.json")))
    searcher = searcher_for({"provider": "bing", "base_url": server.url, "max_results": 2})
    result = await searcher.search({"type": "web", "query": "semantic kernel", "limit": 8})
    assert server.requests[0].param("count") == "2"
    assert len(result.items) == 2


async def test_keywords_option_rewrites_the_query(server: LocalServer,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERPER_API_KEY", SECRET)
    server.route("POST", "/search", Reply(body={"organic": [
        {"title": "T", "link": "https://example.com/h", "snippet": "s", "position": 1}]}))
    searcher = searcher_for({"provider": "serper", "base_url": server.url})
    result = await searcher.search(Request(
        type="web", query="I want to find the best wireless headphones under $100",
        options={"keywords": True}))
    assert result.error is None
    sent = server.requests[0].json()["q"]
    assert sent == "wireless headphones under $100 best"
    assert result.items[0].metadata["search_query"] == sent
    assert result.query == "I want to find the best wireless headphones under $100"


async def test_keyword_limit_from_config(server: LocalServer,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERPER_API_KEY", SECRET)
    server.route("POST", "/search", Reply(body={"organic": []}))
    config = SearchConfig().merged({"web": {"provider": "serper", "base_url": server.url,
                                            "keywords": True},
                                    "keyword": {"max_keywords": 1}})
    searcher = Searcher(config)
    searcher.registry.register(create_handler(config))
    result = await searcher.search({"type": "web", "query": "the best wireless headphones"})
    assert result.error is None
    assert server.requests[0].json()["q"] == "wireless headphones"


async def test_assistant_level_config_switches_provider(server: LocalServer,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", SECRET)
    server.route("GET", "/res/v1/web/search",
                 Reply(body=recorded("brave_what_is_the_semantic_kernel.json")))
    searcher = searcher_for({"provider": "tavily", "base_url": "http://127.0.0.1:9"})
    assistant = searcher.config.merged({"web": {"provider": "brave", "base_url": server.url,
                                                "max_results": 3}})
    ctx = searcher.context(config=assistant)
    result = await searcher.search({"type": "web", "query": "semantic kernel"}, ctx=ctx)
    assert result.error is None
    assert len(result.items) == 3
    assert result.items[0].metadata["provider"] == "brave"


async def test_bad_option_is_a_result_error(server: LocalServer,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", SECRET)
    searcher = searcher_for({"provider": "tavily", "base_url": server.url})
    result = await searcher.search(Request(type="web", query="x",
                                           options={"fetch_pages": "sometimes"}))
    assert result.error is not None
    assert result.error.startswith("web: invalid option fetch_pages: ")
    assert server.requests == []


def test_bad_configuration_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"web\.retry\.attempts"):
        create_handler(SearchConfig().merged({"web": {"retry": {"attempts": 0}}}))
    with pytest.raises(ConfigError, match=r"web\.fetch_page: unknown key"):
        create_handler(SearchConfig().merged({"web": {"fetch_page": True}}))
    with pytest.raises(ConfigError, match=r"unknown provider 'duckduckgo'"):
        create_handler(SearchConfig().merged({"web": {"provider": "duckduckgo"}}))
    with pytest.raises(ConfigError, match=r"names no server in web.mcp_servers"):
        create_handler(SearchConfig().merged({"web": {"provider": "mcp:nope"}}))


@pytest.mark.parametrize(("provider", "method", "path", "env"), [
    ("tavily", "POST", "/search", "TAVILY_API_KEY"),
    ("serper", "POST", "/search", "SERPER_API_KEY"),
    ("serpapi", "GET", "/search.json", "SERPAPI_API_KEY"),
    ("brave", "GET", "/res/v1/web/search", "BRAVE_API_KEY"),
    ("google", "GET", "/customsearch/v1", "GOOGLE_API_KEY"),
    ("bing", "GET", "/v7.0/search", "BING_API_KEY"),
])
async def test_api_key_never_leaks(provider: str, method: str, path: str, env: str,
                                   server: LocalServer, monkeypatch: pytest.MonkeyPatch,
                                   caplog: pytest.LogCaptureFixture) -> None:
    """Failures of every kind (key echoed in a 400 body, 401, 429/500 with retries,
    connection refused) and successes: the key is in no log line, event, trace or
    error."""
    monkeypatch.setenv(env, SECRET)
    monkeypatch.setenv("GOOGLE_CSE_ID", "cx-1")
    caplog.set_level(logging.DEBUG)
    echo = {"error": {"message": f"bad request for key {SECRET}"}}
    server.route(method, path, [Reply(400, echo), Reply(401, echo),
                                Reply(429, echo, {"Retry-After": "0"}), Reply(500, echo),
                                Reply(500, echo), Reply(200, {})])
    events = ListSink()
    searcher = searcher_for({"provider": provider, "base_url": server.url,
                             "retry": {"attempts": 2, "initial_wait": 0.0},
                             "breaker": {"failure_threshold": 100}})
    ctx = searcher.context(events=events)
    results = [await searcher.search({"type": "web", "query": "q"}, ctx=ctx) for _ in range(4)]
    # a refused connection too
    down = searcher.config.merged({"web": {"base_url": "http://127.0.0.1:9"}})
    results.append(await searcher.search({"type": "web", "query": "q"},
                                         ctx=searcher.context(config=down, events=events)))
    errors = [r.error for r in results]
    assert errors[0] is not None and "400" in errors[0]
    assert errors[1] is not None and "401" in errors[1]
    assert errors[2] is not None and "500" in errors[2]  # 429 retried, then 500 twice
    assert errors[3] is None
    assert errors[4] is not None and "connection failed" in errors[4]
    assert len(server.requests) == 6
    texts = [json.dumps([r.to_json() for r in results]),
             json.dumps([e.to_dict() for e in events.events], default=str),
             json.dumps(ctx.trace.to_dict(), default=str),
             caplog.text,
             "\n".join(r.getMessage() for r in caplog.records)]
    for text in texts:
        assert SECRET not in text
    assert any("retrying" in r.getMessage() for r in caplog.records)


async def test_keyword_options_and_foreign_processor_warning(
        server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERPER_API_KEY", SECRET)
    server.route("POST", "/search", Reply(body={"organic": []}))
    config = SearchConfig().merged({"web": {"provider": "serper", "base_url": server.url},
                                    "uses": {"keyword": "keyword-agent"}})
    searcher = Searcher(config)
    searcher.registry.register(create_handler(config))
    result = await searcher.search(Request(
        type="web", query="I want to find the best wireless headphones under $100",
        options={"keywords": True, "max_keywords": 2}))
    assert result.error is None
    assert server.requests[0].json()["q"] == "wireless headphones under $100"
    assert result.warnings == ["uses.keyword 'keyword-agent' is not run by the web handler; "
                               "builtin keyword extraction was used"]


async def test_bad_site_is_refused_before_any_request(
        server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERPER_API_KEY", SECRET)
    searcher = searcher_for({"provider": "serper", "base_url": server.url})
    result = await searcher.search({"type": "web", "query": "q",
                                    "sites": ["example.com OR site:evil.com"]})
    assert result.error is not None
    assert result.error.startswith("web: serper: invalid site 'example.com OR site:evil.com'")
    assert server.requests == []


async def test_a_changed_key_is_used_on_the_next_search(
        server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.route("POST", "/search", Reply(body={"organic": []}))
    searcher = searcher_for({"provider": "serper", "base_url": server.url})
    monkeypatch.setenv("SERPER_API_KEY", "first-key-1111")
    assert (await searcher.search({"type": "web", "query": "q"})).error is None
    monkeypatch.setenv("SERPER_API_KEY", "second-key-2222")
    assert (await searcher.search({"type": "web", "query": "q"})).error is None
    assert [r.headers["x-api-key"] for r in server.requests] == ["first-key-1111",
                                                                 "second-key-2222"]
    handler = searcher.registry.handlers("web")[0]
    await handler.aclose()  # type: ignore[attr-defined]
