"""The scenarios of Semantic Kernel's text-search ADR, end to end against local servers.

Web providers are servers of ours on 127.0.0.1 answering with the real recorded payloads
of ``tests/data/web-search-api-responses``; the chat model of the function-calling
scenarios is a local OpenAI-compatible server streaming SSE, driven through the agent
package's real client. Nothing here is mocked inside the process.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_search import Context, SearchConfig, Searcher
from agent_search.textsearch import (
    BingWebPage,
    BraveWebResult,
    GoogleWebPage,
    SearcherTextSearch,
    SearchOptions,
    SearchPlugin,
    TavilyResult,
    WebProviderTextSearch,
    count_parameter,
    create_search_function,
    create_search_plugin,
    equal_to,
    filter_from_arguments,
    query_parameter,
    render_prompt,
    site_parameter,
    skip_parameter,
)
from agent_search.web import create_handler

from ..support.local_http import LocalServer, Reply, Seen, recorded, recorded_json

pytestmark = pytest.mark.anyio

QUERY = "What is the Semantic Kernel?"
KEY = "test-key-123"
BING_ALL = "bing_what_is_the_semantic_kernel.json"
BING_SITE = "bing_site_filter_devblogs_microsoft.com.json"  # starts with a UTF-8 BOM


def _bing_route(server: LocalServer, general: bytes | None = None) -> None:
    """Bing v7: the site-filtered payload when the query restricts to devblogs."""
    general = general if general is not None else recorded(BING_ALL)

    def route(seen: Seen) -> Reply:
        if seen.headers.get("ocp-apim-subscription-key") != KEY:
            return Reply(401, {"error": {"message": "bad key"}})
        q = seen.param("q") or ""
        return Reply(200, recorded(BING_SITE) if "site:devblogs.microsoft.com" in q else general)

    server.route("GET", "/v7.0/search", route)


@pytest.fixture
def bing(server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalServer]:
    monkeypatch.setenv("BING_API_KEY", KEY)
    _bing_route(server)
    yield server


def _bing_config(server: LocalServer, tmp_path: Path, **web: Any) -> SearchConfig:
    return SearchConfig(home=tmp_path, web={"provider": "bing", "base_url": server.url,
                                            "allow_private_hosts": ["127.0.0.1"], **web})


def _pages() -> list[dict[str, Any]]:
    return list(recorded_json(BING_ALL)["webPages"]["value"])


# -- RAG scenarios ---------------------------------------------------------------------


async def test_rag_with_strings(bing: LocalServer, tmp_path: Path) -> None:
    """``{{SearchPlugin.Search $query}}. {{$query}}`` — snippets only, no links."""
    text_search = WebProviderTextSearch.from_config(_bing_config(bing, tmp_path))
    plugin = create_search_plugin(text_search, "SearchPlugin")
    prompt = await render_prompt(
        "{% for s in SearchPlugin.Search(query) %}{{ s }}\n{% endfor %}. {{ query }}",
        plugins=[plugin], query=QUERY)
    pages = _pages()
    assert pages[0]["snippet"] in prompt and pages[1]["snippet"] in prompt
    assert pages[2]["snippet"] not in prompt  # count defaults to 2
    assert "https://" not in prompt
    assert prompt.endswith(f". {QUERY}")
    sent = bing.seen("/v7.0/search")[-1]
    assert sent.param("q") == QUERY and sent.param("count") == "2"
    await text_search.aclose()


async def test_rag_with_name_value_link_and_citations(bing: LocalServer,
                                                      tmp_path: Path) -> None:
    """The Handlebars name/value/link prompt; results come through the searcher, so each
    carries a citation id from the request's allocator."""
    config = _bing_config(bing, tmp_path)
    searcher = Searcher(config)
    searcher.registry.register(create_handler(config))
    plugin = create_search_plugin(SearcherTextSearch(searcher, "web"))
    ctx = searcher.context()
    ctx.citations.allocate_many(3)  # the request's auto search already used 1..3
    template = (
        "{% for r in SearchPlugin.GetTextSearchResults(query, count=4) %}"
        "Name: {{ r.name }}\nValue: {{ r.value }}\nLink: {{ r.link }}\n"
        "Ref: #ref:{{ r.citation_id }}\n-----------------\n{% endfor %}\n"
        "{{ query }}\n\nInclude citations to the relevant information where it is "
        "referenced in the response.")
    prompt = await render_prompt(template, plugins=[plugin], ctx=ctx, query=QUERY)
    blocks = prompt.split("-----------------\n")[:4]
    for page, block, ref in zip(_pages()[:4], blocks, ["4", "5", "6", "7"], strict=True):
        assert f"Name: {page['name']}\n" in block
        assert f"Value: {page['snippet']}\n" in block
        assert f"Link: {page['url']}\n" in block
        assert f"Ref: #ref:{ref}\n" in block
    assert ctx.citations.issued == 7
    await searcher.aclose()


async def test_rag_with_native_bing_web_pages(bing: LocalServer, tmp_path: Path) -> None:
    """``GetBingWebPages``: Bing's own fields (snippet, display url, date last crawled)."""
    text_search = WebProviderTextSearch.from_config(_bing_config(bing, tmp_path))
    pages = await text_search.get_search_results(QUERY, SearchOptions(
        top=3, include_total_count=True))
    assert all(isinstance(p, BingWebPage) for p in pages.items)
    recorded_pages = _pages()
    assert [p.display_url for p in pages.items] == [r["displayUrl"]
                                                    for r in recorded_pages[:3]]
    assert pages.items[0].date_last_crawled == recorded_pages[0]["dateLastCrawled"]
    assert pages.total_count == recorded_json(BING_ALL)["webPages"]["totalEstimatedMatches"]

    plugin = create_search_plugin(text_search)
    prompt = await render_prompt(
        "{% for p in SearchPlugin.GetSearchResults(query) %}Name: {{ p.name }}\n"
        "Snippet: {{ p.snippet }}\nLink: {{ p.displayUrl }}\n"
        "Date Last Crawled: {{ p.dateLastCrawled }}\n-----\n{% endfor %}{{ query }}",
        plugins=[plugin], query=QUERY)
    assert f"Date Last Crawled: {recorded_pages[1]['dateLastCrawled']}" in prompt
    assert f"Link: {recorded_pages[1]['displayUrl']}" in prompt
    await text_search.aclose()


async def test_rag_with_full_web_pages(server: LocalServer, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """``GetFullWebPages``: each result's value is its page's text; a page that cannot be
    fetched keeps its snippet."""
    monkeypatch.setenv("BING_API_KEY", KEY)
    payload = recorded_json(BING_ALL)
    for i, page in enumerate(payload["webPages"]["value"]):
        page["url"] = f"{server.url}/page/{i}"
    _bing_route(server, json.dumps(payload).encode())
    page = ("<html><head><title>SK overview</title></head><body>"
            "<nav>menu</nav><article><h1>Introduction to Semantic Kernel</h1>"
            "<p>Semantic Kernel is a lightweight, open-source development kit. "
            "It lets you build AI agents and integrate models into C#, Python or "
            "Java code. The kernel is the central component that manages "
            "services and plugins.</p></article></body></html>")
    server.route("GET", "/page/0", Reply(200, page, {"content-type": "text/html; charset=utf-8"}))
    # /page/1 is not served: 404

    text_search = WebProviderTextSearch.from_config(_bing_config(server, tmp_path))
    fn = create_search_function(
        text_search, function_name="GetFullWebPages",
        description="Perform a search for content related to the specified query. The "
                    "search will return the name, full web page content and link for the "
                    "related content.",
        output_type="text_search_result", method=text_search.get_web_pages)
    plugin = SearchPlugin("SearchPlugin", [fn])
    ctx = Context()
    prompt = await render_prompt(
        "{% for r in SearchPlugin.GetFullWebPages(query) %}Name: {{ r.name }}\n"
        "Value: {{ r.value }}\nLink: {{ r.link }}\n-----\n{% endfor %}{{ query }}",
        plugins=[plugin], ctx=ctx, query=QUERY)
    first, second = prompt.split("-----\n")[:2]
    assert "The kernel is the central component that manages services and plugins." in first
    assert "menu" not in first  # boilerplate stripped
    assert f"Value: {payload['webPages']['value'][1]['snippet']}\n" in second
    assert ctx.trace.find("fetch_pages")

    direct = await text_search.get_web_pages(QUERY, {"top": 2})
    assert direct.metadata["pages_fetched"] == 1
    assert "404" in direct.metadata["page_errors"][f"{server.url}/page/1"]
    await text_search.aclose()


# -- function calling ------------------------------------------------------------------


class ScriptedModel:
    """A local OpenAI-compatible chat server: on the first turn it calls the tool it is
    told to, with the arguments given; once tool results are in the conversation it
    answers, citing the links of those results as markdown."""

    def __init__(self, server: LocalServer, tool: str, arguments: dict[str, Any]) -> None:
        self.tool, self.arguments = tool, arguments
        self.bodies: list[dict[str, Any]] = []
        server.route("POST", "/v1/chat/completions", self._route)

    def _route(self, seen: Seen) -> Reply:
        body = seen.json()
        self.bodies.append(body)
        tool_messages = [m for m in body["messages"] if m["role"] == "tool"]
        if not tool_messages:
            call = {"index": 0, "id": "call_1", "type": "function",
                    "function": {"name": self.tool, "arguments": json.dumps(self.arguments)}}
            chunks = [{"choices": [{"delta": {"tool_calls": [call]}, "finish_reason": None}]},
                      {"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}]
        else:
            results = json.loads(tool_messages[-1]["content"])
            refs = " ".join(f"([{r['name']}]({r['link']}))" for r in results)
            text = f"The Semantic Kernel is a lightweight SDK {refs}"
            chunks = [{"choices": [{"delta": {"content": text}, "finish_reason": None}]},
                      {"choices": [{"delta": {}, "finish_reason": "stop"}]}]
        data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        return Reply(200, data, {"content-type": "text/event-stream"})


async def _chat_with_tools(model_url: str, plugin: SearchPlugin, question: str,
                           ctx: Context) -> str:
    """The minimal auto-invoke loop of the ADR samples: offer the plugin's tools, run the
    calls the model makes (concurrently), send their results back, return the answer."""
    from agent_search.agent.llm.openai import OpenAIChatClient
    from agent_search.agent.settings import ConnectorSettings

    client = OpenAIChatClient("local", ConnectorSettings(base_url=model_url, model="m"))
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    try:
        for _ in range(3):
            text, calls = "", []
            async for event in client.stream_chat(messages, tools=plugin.tools()):
                text += event.text
                calls.extend(event.tool_calls)
            if not calls:
                return text
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": c.id, "type": "function",
                 "function": {"name": c.name, "arguments": c.arguments}} for c in calls]})
            outputs: dict[str, str] = {}
            async with anyio.create_task_group() as tg:
                for call in calls:
                    tg.start_soon(_run_tool, plugin, call, ctx, outputs)
            messages.extend({"role": "tool", "tool_call_id": c.id, "content": outputs[c.id]}
                            for c in calls)
        raise AssertionError("the model kept calling tools")
    finally:
        await client.aclose()


async def _run_tool(plugin: SearchPlugin, call: Any, ctx: Context,
                    outputs: dict[str, str]) -> None:
    outputs[call.id] = await plugin[call.name].invoke_text(call.arguments, ctx)


async def test_function_calling_with_the_default_plugin(bing: LocalServer,
                                                        tmp_path: Path) -> None:
    config = _bing_config(bing, tmp_path)
    searcher = Searcher(config)
    searcher.registry.register(create_handler(config))
    plugin = create_search_plugin(SearcherTextSearch(searcher, "web"), "SearchPlugin")
    model = ScriptedModel(bing, "SearchPlugin-GetTextSearchResults",
                          {"query": QUERY, "count": 3})
    ctx = searcher.context()
    answer = await _chat_with_tools(f"{bing.url}/v1", plugin, QUERY + " Include citations.",
                                    ctx)

    offered = model.bodies[0]["tools"]
    assert [t["function"]["name"] for t in offered] == [
        "SearchPlugin-Search", "SearchPlugin-GetTextSearchResults",
        "SearchPlugin-GetSearchResults"]
    assert offered[1]["function"]["parameters"]["properties"]["count"]["maximum"] == 50
    tool_content = json.loads(model.bodies[1]["messages"][-1]["content"])
    pages = _pages()
    assert [(r["name"], r["link"], r["citation_id"]) for r in tool_content] == [
        (p["name"], p["url"], str(i)) for i, p in enumerate(pages[:3], start=1)]
    for page in pages[:3]:
        assert f"({page['url']})" in answer


async def test_function_calling_with_custom_description_and_site_filter(
        bing: LocalServer, tmp_path: Path) -> None:
    """The plugin searches only devblogs.microsoft.com: a fixed filter in the options."""
    text_search = WebProviderTextSearch.from_config(_bing_config(bing, tmp_path))
    plugin = SearchPlugin("SearchPlugin", [create_search_function(
        text_search, output_type="text_search_result",
        options=SearchOptions(filter=equal_to("site", "devblogs.microsoft.com")))],
        description="Search Microsoft Dev Blogs site")
    model = ScriptedModel(bing, "SearchPlugin-GetTextSearchResults",
                          {"query": QUERY, "count": 4})
    answer = await _chat_with_tools(f"{bing.url}/v1", plugin, QUERY, Context())

    assert plugin.description == "Search Microsoft Dev Blogs site"
    q = bing.seen("/v7.0/search")[-1].param("q")
    assert q == f"{QUERY} site:devblogs.microsoft.com"
    tool_content = json.loads(model.bodies[1]["messages"][-1]["content"])
    assert len(tool_content) == 4
    assert {r["link"].split("/")[2] for r in tool_content} == {"devblogs.microsoft.com"}
    assert answer.count("(https://devblogs.microsoft.com/") == 4
    await text_search.aclose()


async def test_function_calling_search_by_site_chosen_by_the_model(
        bing: LocalServer, tmp_path: Path) -> None:
    """The ADR's CreateSearchBySite: an optional ``site`` argument becomes a filter."""
    text_search = WebProviderTextSearch.from_config(_bing_config(bing, tmp_path))
    fn = create_search_function(
        text_search, function_name="Search",
        description="Perform a search for content related to the specified query and "
                    "optionally from the specified domain.",
        parameters=[query_parameter(), count_parameter(), skip_parameter(), site_parameter()],
        output_type="text_search_result",
        filter_update=filter_from_arguments({"site": "site"}))
    plugin = SearchPlugin("SearchPlugin", [fn], "Search Microsoft Dev Blogs site")
    model = ScriptedModel(bing, "SearchPlugin-Search",
                          {"query": QUERY, "count": 4, "site": "devblogs.microsoft.com"})
    await _chat_with_tools(f"{bing.url}/v1", plugin,
                           QUERY + " Only include results from devblogs.microsoft.com.",
                           Context())
    assert "site" in model.bodies[0]["tools"][0]["function"]["parameters"]["properties"]
    assert bing.seen("/v7.0/search")[-1].param("q") == f"{QUERY} site:devblogs.microsoft.com"
    tool_content = json.loads(model.bodies[1]["messages"][-1]["content"])
    assert {r["link"].split("/")[2] for r in tool_content} == {"devblogs.microsoft.com"}

    # without a site the same function searches everywhere
    out = await fn.invoke({"query": QUERY, "count": 5})
    assert bing.seen("/v7.0/search")[-1].param("q") == QUERY
    assert len({r["link"].split("/")[2] for r in out}) > 1
    await text_search.aclose()


# -- every recorded provider -----------------------------------------------------------

PROVIDERS = [
    # provider, method, path, general payload, site payload, native type, site in request
    ("bing", "GET", "/v7.0/search", BING_ALL, BING_SITE, BingWebPage,
     lambda s: "site:devblogs.microsoft.com" in (s.param("q") or "")),
    ("google", "GET", "/customsearch/v1", "google_what_is_the_semantic_kernel.json",
     "google_site_filter_devblogs_microsoft.com.json", GoogleWebPage,
     lambda s: s.param("siteSearch") == "devblogs.microsoft.com"),
    ("brave", "GET", "/res/v1/web/search", "brave_what_is_the_semantic_kernel.json",
     "brave_site_filter_what_is_the_semantic_kernel.json", BraveWebResult,
     lambda s: "site:devblogs.microsoft.com" in (s.param("q") or "")),
    ("tavily", "POST", "/search", "tavily_what_is_the_semantic_kernel.json",
     "tavily_site_filter_devblogs_microsoft.com.json", TavilyResult,
     lambda s: s.json().get("include_domains") == ["devblogs.microsoft.com"]),
]


@pytest.mark.parametrize(("provider", "method", "path", "general", "site", "native",
                          "has_site"), PROVIDERS, ids=[p[0] for p in PROVIDERS])
async def test_each_recorded_provider_gives_native_text_and_site_filtered_results(
        server: LocalServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        provider: str, method: str, path: str, general: str, site: str, native: type,
        has_site: Any) -> None:
    monkeypatch.setenv(f"{provider.upper()}_API_KEY", KEY)
    monkeypatch.setenv("GOOGLE_CSE_ID", "cse-1")
    server.route(method, path, lambda seen: Reply(
        200, recorded(site) if has_site(seen) else recorded(general)))
    # no answer box as a first item: a key of the providers that have one, in their section
    own = {provider: {"include_answer": False}} if provider == "tavily" else {}
    config = SearchConfig(home=tmp_path, web={"provider": provider, "base_url": server.url,
                                              **own})
    text_search = WebProviderTextSearch.from_config(config)
    try:
        records = await text_search.get_search_results(QUERY, {"top": 3})
        assert records.items and all(isinstance(r, native) for r in records.items)
        texts = await text_search.get_text_search_results(QUERY, {"top": 3})
        assert len(texts.items) == min(3, len(records.items))
        assert all(t.name and t.value and t.link for t in texts.items)
        assert "<strong>" not in texts.items[0].value  # provider markup stripped
        filtered = await text_search.get_text_search_results(
            QUERY, {"top": 3, "filter": equal_to("site", "devblogs.microsoft.com")})
        assert has_site(server.seen(path)[-1])
        assert filtered.items
        strings = await text_search.search(QUERY, {"top": 2, "skip": 1})
        assert strings.items == [t.value for t in texts.items[1:3]]
    finally:
        await text_search.aclose()


async def test_provider_failures_are_one_line_errors(server: LocalServer, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_search.textsearch import TextSearchError

    monkeypatch.setenv("BING_API_KEY", "wrong")
    _bing_route(server)
    text_search = WebProviderTextSearch.from_config(_bing_config(server, tmp_path))
    with pytest.raises(TextSearchError, match=r"^bing: HTTP 401: API key rejected$"):
        await text_search.search(QUERY)
    with pytest.raises(TextSearchError, match="cannot filter on field 'lang'"):
        await text_search.search(QUERY, {"filter": equal_to("lang", "en")})
    await text_search.aclose()
