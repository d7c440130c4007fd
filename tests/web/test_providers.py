"""Every HTTP provider's real client against a local server that checks the request
(path, auth header, parameters) and answers with recorded (or documented-format)
payloads."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_search.web import ProviderError, WebSettings, create_provider
from agent_search.web.providers import WebProvider

from ..support.local_http import SECRET, LocalServer, Reply, recorded

pytestmark = pytest.mark.anyio


def make(server: LocalServer, provider: str, **extra: Any) -> WebProvider:
    settings = WebSettings(provider=provider, base_url=server.url, **{provider: extra})
    return create_provider(settings, api_key=SECRET)


# -- Tavily (official tavily-python client) -------------------------------------------------


async def test_tavily_recorded_payload_and_request(server: LocalServer) -> None:
    server.route("POST", "/search",
                 Reply(body=recorded("tavily_what_is_the_semantic_kernel.json")))
    async with make(server, "tavily") as provider:
        response = await provider.search_response("What is the Semantic Kernel?", limit=4,
                                                  time_range="week")
    seen = server.requests[0]
    assert seen.headers["authorization"] == f"Bearer {SECRET}"
    body = seen.json()
    assert body["query"] == "What is the Semantic Kernel?"
    assert body["max_results"] == 4
    assert body["time_range"] == "week"
    assert body["include_answer"] is True
    assert "include_domains" not in body
    items = response.items
    # the answer first, then the four results in Tavily's order with its scores kept
    assert items[0].metadata["kind"] == "answer"
    assert items[0].content.startswith("Semantic Kernel is an open-source SDK")
    results = items[1:]
    raw = json.loads(recorded("tavily_what_is_the_semantic_kernel.json"))
    assert [i.url for i in results] == [r["url"] for r in raw["results"]][: len(results)]
    assert results[0].score == pytest.approx(raw["results"][0]["score"])
    assert all(0.0 <= i.score <= 1.0 and i.type == "web" for i in items)
    assert results[0].metadata["position"] == 1
    assert "raw_content" in results[0].metadata
    assert response.raw["response_time"] == raw["response_time"]


async def test_tavily_sites_become_include_domains(server: LocalServer) -> None:
    server.route("POST", "/search",
                 Reply(body=recorded("tavily_site_filter_devblogs_microsoft.com.json")))
    async with make(server, "tavily", include_answer=False) as provider:
        items = await provider.search("What is the Semantic Kernel?", limit=10,
                                      sites=["https://devblogs.microsoft.com/"])
    body = server.requests[0].json()
    assert body["include_domains"] == ["devblogs.microsoft.com"]
    assert "include_answer" not in body
    assert len(items) == 4
    assert all(i.url and i.url.startswith("https://devblogs.microsoft.com/") for i in items)
    assert [i.score for i in items] == sorted((i.score for i in items), reverse=True)


# -- Serper -------------------------------------------------------------------------------

SERPER_PAYLOAD: dict[str, Any] = {
    "searchParameters": {"q": "semantic kernel site:devblogs.microsoft.com", "type": "search",
                         "num": 3, "tbs": "qdr:w", "engine": "google"},
    "answerBox": {"title": "Semantic Kernel", "link": "https://learn.microsoft.com/sk",
                  "snippet": "Semantic Kernel is a <b>lightweight</b>, open-source SDK."},
    "organic": [
        {"title": "Hello, Semantic Kernel!", "link": "https://devblogs.microsoft.com/semantic-kernel/hello-world/",
         "snippet": "Semantic Kernel (SK) is a lightweight SDK &amp; more...",
         "date": "Jun 24, 2024", "position": 1},
        {"title": "Semantic Kernel and AutoGen", "link": "https://devblogs.microsoft.com/semantic-kernel/autogen/",
         "snippet": "Microsoft's agentic AI story is evolving.", "position": 2,
         "sitelinks": [{"title": "Part 2", "link": "https://devblogs.microsoft.com/sk/p2"}]},
        {"title": "Introducing SK for Java", "link": "https://devblogs.microsoft.com/semantic-kernel/java/",
         "snippet": "3 days ago — Semantic Kernel for Java is open source.", "date": "3 days ago",
         "position": 3},
    ],
    "relatedSearches": [{"query": "semantic kernel python"}],
    "credits": 1,
}


async def test_serper_request_shape_and_answer_box(server: LocalServer) -> None:
    server.route("POST", "/search", Reply(body=SERPER_PAYLOAD))
    async with make(server, "serper", country="us", language="en") as provider:
        items = await provider.search("semantic kernel", limit=3,
                                      sites=["devblogs.microsoft.com"], time_range="week")
    seen = server.requests[0]
    assert seen.headers["x-api-key"] == SECRET
    assert seen.json() == {"q": "semantic kernel site:devblogs.microsoft.com", "num": 3,
                           "tbs": "qdr:w", "gl": "us", "hl": "en"}
    assert items[0].metadata["kind"] == "answer_box"
    assert items[0].content == "Semantic Kernel is a lightweight , open-source SDK."
    organic = items[1:]
    # the limit caps the answer box plus organic results
    assert len(items) == 3
    assert [i.metadata["position"] for i in organic] == [1, 2]
    assert organic[0].content == "Semantic Kernel (SK) is a lightweight SDK & more..."
    assert organic[0].metadata["published"] == "2024-06-24"
    assert organic[0].score > organic[1].score
    assert organic[1].metadata["sitelinks"][0]["title"] == "Part 2"


async def test_serper_several_sites_are_ored(server: LocalServer) -> None:
    server.route("POST", "/search", Reply(body={"organic": []}))
    async with make(server, "serper") as provider:
        assert await provider.search("kernel", sites=["a.com", "b.org"], time_range="year") == []
    body = server.requests[0].json()
    assert body["q"] == "kernel (site:a.com OR site:b.org)"
    assert body["tbs"] == "qdr:y"


# -- SerpAPI ------------------------------------------------------------------------------

SERPAPI_PAYLOAD: dict[str, Any] = {
    "search_metadata": {"id": "64f0", "status": "Success", "total_time_taken": 1.2},
    "search_parameters": {"engine": "google", "q": "semantic kernel", "num": "2"},
    "search_information": {"total_results": 1650000, "time_taken_displayed": 0.31},
    "answer_box": {"type": "organic_result", "title": "What is Semantic Kernel?",
                   "answer": "An SDK for AI orchestration", "link": "https://learn.microsoft.com/sk"},
    "organic_results": [
        {"position": 1, "title": "Introduction to Semantic Kernel",
         "link": "https://learn.microsoft.com/en-us/semantic-kernel/overview/",
         "displayed_link": "https://learn.microsoft.com › semantic-kernel",
         "snippet": "Semantic Kernel is a <em>lightweight</em>, open-source development kit",
         "date": "Jun 24, 2024", "source": "Microsoft Learn"},
        {"position": 2, "title": "microsoft/semantic-kernel - GitHub",
         "link": "https://github.com/microsoft/semantic-kernel",
         "snippet": "Integrate cutting-edge LLM technology quickly and easily into your apps"},
    ],
}


async def test_serpapi_request_shape(server: LocalServer) -> None:
    server.route("GET", "/search.json", Reply(body=SERPAPI_PAYLOAD))
    async with make(server, "serpapi") as provider:
        items = await provider.search("semantic kernel", limit=5, time_range="month",
                                      sites=["learn.microsoft.com"])
    seen = server.requests[0]
    assert seen.param("api_key") == SECRET
    assert seen.param("engine") == "google"
    assert seen.param("q") == "semantic kernel site:learn.microsoft.com"
    assert seen.param("tbs") == "qdr:m"
    assert seen.param("num") == "5"
    assert [i.metadata.get("kind") for i in items] == ["answer_box", None, None]
    assert items[1].content == "Semantic Kernel is a lightweight , open-source development kit"
    assert items[1].metadata["site_name"] == "Microsoft Learn"
    assert items[1].metadata["published"] == "2024-06-24"


async def test_serpapi_error_in_body_is_reported_without_key(server: LocalServer) -> None:
    server.route("GET", "/search.json",
                 Reply(status=401, body={"error": f"Invalid API key {SECRET}"}))
    async with make(server, "serpapi") as provider:
        with pytest.raises(ProviderError) as info:
            await provider.search("x")
    assert "401" in str(info.value)
    assert SECRET not in str(info.value)


# -- Brave --------------------------------------------------------------------------------


async def test_brave_recorded_payload(server: LocalServer) -> None:
    server.route("GET", "/res/v1/web/search",
                 Reply(body=recorded("brave_what_is_the_semantic_kernel.json")))
    async with make(server, "brave") as provider:
        items = await provider.search("What is Semantic Kernel", limit=10, time_range="day")
    seen = server.requests[0]
    assert seen.headers["x-subscription-token"] == SECRET
    assert seen.headers["accept"] == "application/json"
    assert seen.param("q") == "What is Semantic Kernel"
    assert seen.param("count") == "10"
    assert seen.param("freshness") == "pd"
    assert len(items) == 10
    first = items[0]
    assert first.title == "Introduction to Semantic Kernel | Microsoft Learn"
    assert "<strong>" not in first.content and "&#x27;" not in first.content
    assert "combines prompts with existing APIs" in first.content
    assert "model's request" in first.content
    assert items[1].metadata["published"] == "2024-07-25T00:00:00"
    assert [i.score for i in items] == sorted((i.score for i in items), reverse=True)


async def test_brave_site_filter_payload(server: LocalServer) -> None:
    server.route("GET", "/res/v1/web/search",
                 Reply(body=recorded("brave_site_filter_what_is_the_semantic_kernel.json")))
    async with make(server, "brave") as provider:
        items = await provider.search("What is Semantic Kernel", limit=20,
                                      sites=["devblogs.microsoft.com"])
    assert server.requests[0].param("q") == "What is Semantic Kernel site:devblogs.microsoft.com"
    assert server.requests[0].param("count") == "20"
    assert len(items) == 5


# -- Google Custom Search ---------------------------------------------------------------


async def test_google_recorded_payload(server: LocalServer) -> None:
    server.route("GET", "/customsearch/v1",
                 Reply(body=recorded("google_what_is_the_semantic_kernel.json")))
    async with make(server, "google", cx="1285518abfd4e4677") as provider:
        items = await provider.search("What is the Semantic Kernel?", limit=4, time_range="year")
    seen = server.requests[0]
    assert seen.headers["x-goog-api-key"] == SECRET
    assert "key" not in seen.query  # never in the URL
    assert seen.param("cx") == "1285518abfd4e4677"
    assert seen.param("num") == "4"
    assert seen.param("dateRestrict") == "y1"
    assert len(items) == 4
    assert items[0].url == "https://learn.microsoft.com/en-us/semantic-kernel/overview/"
    assert items[0].metadata["display_link"] == "learn.microsoft.com"
    assert "\u00a0" not in items[0].content


async def test_google_bom_payload_and_site_search(server: LocalServer) -> None:
    payload = recorded("google_site_filter_devblogs_microsoft.com.json")
    assert payload.startswith(b"\xef\xbb\xbf")
    server.route("GET", "/customsearch/v1", Reply(body=payload))
    async with make(server, "google", cx="abc") as provider:
        items = await provider.search("What is the Semantic Kernel?", limit=4,
                                      sites=["devblogs.microsoft.com"])
    seen = server.requests[0]
    assert seen.param("siteSearch") == "devblogs.microsoft.com"
    assert seen.param("siteSearchFilter") == "i"
    assert seen.param("q") == "What is the Semantic Kernel?"
    assert len(items) == 4
    assert all("devblogs.microsoft.com" in (i.url or "") for i in items)


async def test_google_needs_cx(server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_CSE_ID", raising=False)
    with pytest.raises(ProviderError, match=r"search engine id not configured"):
        make(server, "google")


# -- Bing v7 ------------------------------------------------------------------------------


async def test_bing_recorded_payload(server: LocalServer) -> None:
    server.route("GET", "/v7.0/search",
                 Reply(body=recorded("bing_what_is_the_semantic_kernel.json")))
    async with make(server, "bing") as provider:
        items = await provider.search("What is the Semantic Kernel?", limit=10, time_range="week")
    seen = server.requests[0]
    assert seen.headers["ocp-apim-subscription-key"] == SECRET
    assert seen.param("q") == "What is the Semantic Kernel?"
    assert seen.param("count") == "10"
    assert seen.param("freshness") == "Week"
    assert len(items) == 10
    assert items[0].title == "Introduction to Semantic Kernel | Microsoft Learn"
    assert items[0].metadata["published"] == "2024-06-24T00:00:00"
    assert items[0].metadata["site_name"] == "Microsoft Learn"


async def test_bing_bom_payload_site_filter_and_year(server: LocalServer) -> None:
    payload = recorded("bing_site_filter_devblogs_microsoft.com.json")
    assert payload.startswith(b"\xef\xbb\xbf")
    server.route("GET", "/v7.0/search", Reply(body=payload))
    async with make(server, "bing") as provider:
        items = await provider.search("What is the Semantic Kernel?", limit=4,
                                      sites=["devblogs.microsoft.com"], time_range="year")
    seen = server.requests[0]
    assert seen.param("q") == "What is the Semantic Kernel? site:devblogs.microsoft.com"
    freshness = seen.param("freshness") or ""
    assert len(freshness) == 22 and ".." in freshness  # YYYY-MM-DD..YYYY-MM-DD
    assert len(items) == 4


# -- SearXNG ------------------------------------------------------------------------------

SEARXNG_PAYLOAD: dict[str, Any] = {
    "query": "semantic kernel",
    "number_of_results": 0,
    "results": [
        {"url": "https://learn.microsoft.com/en-us/semantic-kernel/overview/",
         "title": "Introduction to Semantic Kernel",
         "content": "Semantic Kernel is a <b>lightweight</b> SDK",
         "engine": "duckduckgo", "engines": ["duckduckgo", "brave"], "positions": [1, 2],
         "score": 4.0, "category": "general", "publishedDate": "2024-06-24T00:00:00"},
        {"url": "https://github.com/microsoft/semantic-kernel",
         "title": "microsoft/semantic-kernel",
         "content": "Integrate LLM technology", "engine": "brave", "engines": ["brave"],
         "positions": [3], "score": 1.0, "category": "general", "publishedDate": None},
    ],
    "answers": [], "corrections": [], "infoboxes": [], "suggestions": ["semantic kernel python"],
    "unresponsive_engines": [],
}


async def test_searxng_needs_no_key(server: LocalServer) -> None:
    server.route("GET", "/search", Reply(body=SEARXNG_PAYLOAD))
    settings = WebSettings(provider="searxng", base_url=server.url)
    async with create_provider(settings, api_key=None) as provider:
        items = await provider.search("semantic kernel", time_range="month", sites=["github.com"])
    seen = server.requests[0]
    assert "authorization" not in seen.headers
    assert seen.param("format") == "json"
    assert seen.param("time_range") == "month"
    assert seen.param("q") == "semantic kernel site:github.com"
    assert [i.score for i in items] == [0.8, 0.76]  # by rank: SearXNG scores are relative
    assert items[0].content == "Semantic Kernel is a lightweight SDK"
    assert items[0].metadata["engines"] == ["duckduckgo", "brave"]
    assert items[0].metadata["published"] == "2024-06-24T00:00:00"


async def test_searxng_without_base_url_is_a_clear_error() -> None:
    with pytest.raises(ProviderError, match=r"searxng: base_url not configured"):
        create_provider(WebSettings(provider="searxng"), api_key=None)


# -- shared behaviour -----------------------------------------------------------------------


async def test_bad_json_is_a_provider_error(server: LocalServer) -> None:
    server.route("GET", "/v7.0/search", Reply(body=b"<html>oops</html>"))
    async with make(server, "bing") as provider:
        with pytest.raises(ProviderError, match=r"bing: invalid JSON"):
            await provider.search("x")


async def test_bad_time_range_is_refused_before_any_request(server: LocalServer) -> None:
    async with make(server, "brave") as provider:
        with pytest.raises(ProviderError, match=r"time_range 'decade'"):
            await provider.search("x", time_range="decade")
    assert server.requests == []


async def test_raw_payload_access(server: LocalServer) -> None:
    server.route("GET", "/v7.0/search",
                 Reply(body=recorded("bing_what_is_the_semantic_kernel.json")))
    async with make(server, "bing") as provider:
        raw = await provider.search_raw("What is the Semantic Kernel?")
    assert raw["_type"] == "SearchResponse"
