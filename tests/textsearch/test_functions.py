"""Search functions (tools): JSON Schemas, argument validation, invocation, plugins."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_search import Searcher
from agent_search.textsearch import (
    FunctionParameter,
    SearcherTextSearch,
    SearchOptions,
    SearchPlugin,
    TextSearchError,
    ToolArgumentError,
    count_parameter,
    create_search_function,
    create_search_plugin,
    equal_to,
    filter_from_arguments,
    query_parameter,
    site_parameter,
    skip_parameter,
)
from agent_search.types import ResultItem

from ..support.corpus import Handlers

pytestmark = pytest.mark.anyio

QUERY = "What is the Semantic Kernel?"


def test_default_function_schema_is_exact(searcher: Searcher) -> None:
    fn = create_search_function(SearcherTextSearch(searcher, "web"))
    assert fn.name == "Search"
    assert fn.parameters_schema == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to search for",
                      "minLength": 1, "maxLength": 16384},
            "count": {"type": "integer", "description": "Number of results", "default": 2,
                      "minimum": 1, "maximum": 50},
            "skip": {"type": "integer", "description": "Number of results to skip",
                     "default": 0, "minimum": 0, "maximum": 1000},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    tool = fn.openai_tool()
    assert tool["type"] == "function"
    assert set(tool["function"]) == {"name", "description", "parameters"}
    assert tool["function"]["name"] == "Search"
    assert tool["function"]["parameters"] is not None
    json.dumps(tool)  # serialisable as sent to an API


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"query": 42}, "argument 'query' must be of type string, got 42"),
        ({"query": QUERY, "count": "3"}, "argument 'count' must be of type integer, got \"3\""),
        ({"query": QUERY, "count": 0}, "argument 'count' is 0; allowed range is 1..50"),
        ({"query": QUERY, "count": 51}, "argument 'count' is 51; allowed range is 1..50"),
        ({"query": QUERY, "count": True}, "argument 'count' must be of type integer"),
        ({"query": QUERY, "count": 2.5}, "argument 'count' must be of type integer"),
        ({"query": QUERY, "skip": -1}, "argument 'skip' is -1; allowed range is 0..1000"),
        ({"query": QUERY, "site": "x"}, "unknown argument(s): 'site' was unexpected"),
        ({}, "missing argument: 'query'"),
        ({"query": ""}, "argument 'query' must be 1..16384 characters long"),
        ({"query": "   "}, "argument 'query' must not be blank"),
        ("{not json", "arguments are not valid JSON"),
        ("[1, 2]", "arguments must be a JSON object, not list"),
    ],
)
async def test_invalid_arguments_are_refused_with_a_clear_message(
        searcher: Searcher, handlers: Handlers, arguments: Any, message: str) -> None:
    fn = create_search_function(SearcherTextSearch(searcher, "web"))
    with pytest.raises(ToolArgumentError) as info:
        await fn.invoke(arguments)
    assert str(info.value).startswith("Search: ")
    assert message in str(info.value)
    assert "\n" not in str(info.value)
    assert handlers.web.requests == []  # nothing ran


async def test_invoke_maps_count_and_skip_and_accepts_json_strings(
        searcher: Searcher, handlers: Handlers) -> None:
    fn = create_search_function(SearcherTextSearch(searcher, "web"))
    default = await fn.invoke({"query": QUERY})
    assert len(default) == 2 and all(isinstance(s, str) for s in default)
    three = await fn.invoke(json.dumps({"query": QUERY, "count": 3, "skip": 1}))
    assert len(three) == 3
    assert handlers.web.requests[-1].limit == 4
    assert three[0] == default[1]  # skipped the first
    text = await fn.invoke_text({"query": QUERY, "count": 1})
    assert json.loads(text) == [default[0]]


async def test_text_search_result_output_carries_links_and_citation_ids(
        searcher: Searcher) -> None:
    fn = create_search_function(SearcherTextSearch(searcher, "web"),
                                output_type="text_search_result")
    assert fn.name == "GetTextSearchResults"
    ctx = searcher.context()
    ctx.citations.allocate_many(5)  # ids used earlier in the same request
    out = await fn.invoke({"query": QUERY, "count": 2}, ctx)
    assert [set(r) for r in out] == [{"name", "value", "link", "citation_id"}] * 2
    assert [r["citation_id"] for r in out] == ["6", "7"]
    assert all(r["link"].startswith("https://") for r in out)
    raw = await fn.run({"query": QUERY, "count": 1}, ctx)
    assert isinstance(raw.items[0].inner_content, ResultItem)
    assert raw.items[0].inner_content.citation_id == raw.items[0].citation_id == "8"


async def test_native_output_is_the_items_json(searcher: Searcher) -> None:
    fn = create_search_function(SearcherTextSearch(searcher, "db"), output_type="native")
    assert fn.name == "GetSearchResults"
    out = await fn.invoke({"query": "rock band", "count": 1})
    assert out[0]["model"] == "artists" and out[0]["data"]["Name"] == "AC/DC"
    assert out[0]["citation_id"] == "1"
    json.dumps(out)


async def test_string_mapper_and_fixed_options(searcher: Searcher,
                                               handlers: Handlers) -> None:
    fn = create_search_function(
        SearcherTextSearch(searcher, "web"), function_name="SearchDevBlogs",
        description="Search the Microsoft Dev Blogs site",
        string_mapper=lambda r: f"{r.name} <{r.link}>",
        options=SearchOptions(filter=equal_to("site", "devblogs.microsoft.com")))
    out = await fn.invoke({"query": QUERY, "count": 5})
    assert handlers.web.requests[-1].sites == ["devblogs.microsoft.com"]
    assert out and all(s.endswith(">") and "devblogs.microsoft.com" in s for s in out)
    assert fn.openai_tool()["function"]["description"] == "Search the Microsoft Dev Blogs site"


async def test_search_by_site_function_from_the_adr(searcher: Searcher,
                                                    handlers: Handlers) -> None:
    fn = create_search_function(
        SearcherTextSearch(searcher, "web"),
        function_name="Search",
        description="Perform a search for content related to the specified query and "
                    "optionally from the specified domain.",
        parameters=[query_parameter(), count_parameter(), skip_parameter(), site_parameter()],
        output_type="text_search_result",
        filter_update=filter_from_arguments({"site": "site"}))
    props = fn.parameters_schema["properties"]
    assert props["site"] == {"type": "string",
                             "description": "Only return results from this domain",
                             "minLength": 1, "maxLength": 253}
    assert fn.parameters_schema["required"] == ["query"]

    only_blogs = await fn.invoke({"query": QUERY, "count": 5,
                                  "site": "devblogs.microsoft.com"})
    assert handlers.web.requests[-1].sites == ["devblogs.microsoft.com"]
    assert {r["link"].split("/")[2] for r in only_blogs} == {"devblogs.microsoft.com"}

    anywhere = await fn.invoke({"query": QUERY, "count": 5})
    assert handlers.web.requests[-1].sites == []
    assert len({r["link"].split("/")[2] for r in anywhere}) > 1


async def test_filter_update_cannot_smuggle_unsupported_fields(searcher: Searcher) -> None:
    fn = create_search_function(
        SearcherTextSearch(searcher, "web"),
        parameters=[query_parameter(), FunctionParameter("author", "Author")],
        filter_update=filter_from_arguments({"author": "author"}))
    with pytest.raises(TextSearchError, match="cannot filter on field 'author'"):
        await fn.invoke({"query": QUERY, "author": "__import__('os')"})


def test_bad_function_definitions_are_refused(searcher: Searcher) -> None:
    ts = SearcherTextSearch(searcher, "web")
    with pytest.raises(ValueError, match="function name 'has space'"):
        create_search_function(ts, function_name="has space")
    with pytest.raises(ValueError, match="'query' parameter is required"):
        create_search_function(ts, parameters=[count_parameter()])
    with pytest.raises(ValueError, match="duplicate parameter"):
        create_search_function(ts, parameters=[query_parameter(), query_parameter()])
    with pytest.raises(ValueError, match="output_type 'html'"):
        create_search_function(ts, output_type="html")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="parameter name"):
        FunctionParameter("bad name")


async def test_default_plugin_has_three_functions_named_like_semantic_kernel(
        searcher: Searcher) -> None:
    plugin = create_search_plugin(SearcherTextSearch(searcher, "web"))
    assert [f.function_name for f in plugin] == ["Search", "GetTextSearchResults",
                                                 "GetSearchResults"]
    assert [t["function"]["name"] for t in plugin.tools()] == [
        "SearchPlugin-Search", "SearchPlugin-GetTextSearchResults",
        "SearchPlugin-GetSearchResults"]
    assert plugin["Search"] is plugin.get("SearchPlugin-Search")
    out = await plugin.invoke("SearchPlugin-GetTextSearchResults", {"query": QUERY})
    assert len(out) == 2 and out[0]["link"]
    with pytest.raises(ToolArgumentError, match="unknown function 'Nope'"):
        await plugin.invoke("Nope", {"query": QUERY})
    with pytest.raises(KeyError, match="no function 'Nope'"):
        plugin["Nope"]
    with pytest.raises(ValueError, match="two functions named"):
        SearchPlugin("P", [plugin["Search"], plugin["Search"]])


async def test_concurrent_tool_calls_share_one_allocator(searcher: Searcher) -> None:
    """Several tool calls of one model turn run concurrently; their ids never collide."""
    import anyio

    plugin = create_search_plugin(SearcherTextSearch(searcher))
    ctx = searcher.context()
    outputs: list[list[Any]] = []

    async def call(query: str) -> None:
        outputs.append(await plugin.invoke("GetTextSearchResults",
                                           {"query": query, "count": 3}, ctx))

    async with anyio.create_task_group() as tg:
        for q in ("semantic kernel", "hybrid search retrieval", "rock band", "kernel blog"):
            tg.start_soon(call, q)
    ids = [r["citation_id"] for out in outputs for r in out]
    assert len(outputs) == 4 and all(outputs) and len(ids) >= 8
    assert len(set(ids)) == len(ids)
