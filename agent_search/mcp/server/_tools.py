"""The searcher as an MCP server (``agent-search mcp`` serves it over stdio).

Tools (each returns the Result JSON of ``agent-search search --json``):

- ``web_search(query, limit, sites, time_range, fetch_pages)``
- ``kb_search(query, limit, collections, min_score, graph, mode)`` (``threshold``, the
  earlier name of ``min_score``, still accepted for a release)
- ``db_search(query, limit, models, wheres, orders)``
- ``search(query, types, limit)`` — several types at once, merged (deduplicated,
  weighted, reranked) into one result;
- ``<type>_search(query, limit)`` for every other searchable type the searcher's registry
  holds (a handler of your own, e.g. ``news_search``).

The registry is the list: the ``search`` tool's ``types`` and the per-type tools are the
searcher's searchable types, and ``kb_search``'s ``mode`` choices come from the kb
handler's options model, so a handler registered once is offered here too.

Arguments are validated by the SDK against each tool's JSON Schema (derived from the
annotated signatures below) and again by :class:`~agent_search.types.Request`; a failed
search comes back as a Result whose ``error`` says why, like everywhere else. Citation
ids are unique across the whole server session (one allocator for every call).

Built with the official ``mcp`` SDK (``MCPServer``, formerly ``FastMCP``).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from agent_search._results import search_error
from agent_search._text import check_tree, scrub
from agent_search.citation import CitationAllocator
from agent_search.context import Context
from agent_search.kb.settings import SearchMode
from agent_search.registry import option_choices
from agent_search.searcher import Searcher
from agent_search.types import MAX_QUERY_CHARS, Result

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

TimeRange = Literal["day", "week", "month", "year"]
Query = Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS,
                             description="What to search for")]
Limit = Annotated[int | None, Field(ge=1, le=100, description="Maximum number of results "
                                                              "(default: configured)")]


class SearchTools:
    """The tool implementations, bound to one searcher. Usable without MCP (tests,
    other servers): each method returns the Result JSON."""

    def __init__(self, searcher: Searcher, *, user_id: str | None = None,
                 team_id: str | None = None) -> None:
        self.searcher = searcher
        self.citations = CitationAllocator()
        # fixed for the whole session: no tool argument can change who is asking
        self.user_id = user_id
        self.team_id = team_id

    def context(self) -> Context:
        """A fresh context per call (events, trace) sharing the session's citation ids,
        with the identity the server was started for."""
        ctx = self.searcher.context(user_id=self.user_id, team_id=self.team_id)
        ctx.citations = self.citations
        return ctx

    async def run(self, fields: dict[str, Any]) -> dict[str, Any]:
        problem = check_tree(fields, root="arguments")
        if problem:  # not text: refused here, before it reaches a search or a reply
            return Result(type=scrub(str(fields.get("type", "")))[:64],
                          query=scrub(str(fields.get("query", ""))),
                          error=f"invalid request: {problem}").to_json()
        # the searcher validates the fields and answers bad ones with an error Result
        result = await self.searcher.search({k: v for k, v in fields.items() if v is not None},
                                            ctx=self.context())
        return result.to_json()

    async def web_search(
        self, query: Query, limit: Limit = None,
        sites: Annotated[list[str] | None, Field(
            description="Only return results from these domains")] = None,
        time_range: Annotated[TimeRange | None, Field(
            description="Only results from the last day/week/month/year")] = None,
        fetch_pages: Annotated[bool, Field(
            description="Replace snippets by the full text of the pages")] = False,
    ) -> dict[str, Any]:
        """Search the web. Results have a title, content (snippet or page text), url and
        a citation id."""
        options: dict[str, Any] = {"sites": sites} if sites else {}
        if time_range:
            options["time_range"] = time_range
        if fetch_pages:
            options["fetch_pages"] = True
        return await self.run({"type": "web", "query": query, "limit": limit,
                               "options": options})

    async def kb_search(
        self, query: Query, limit: Limit = None,
        collections: Annotated[list[str] | None, Field(
            description="Knowledge-base collections (default: configured)")] = None,
        min_score: Annotated[float | None, Field(
            ge=0, le=1, description="Minimum relevance score 0..1")] = None,
        graph: Annotated[bool, Field(description="Add related graph entities")] = False,
        mode: Annotated[SearchMode | None, Field(
            description="Retrieval mode (default: hybrid)")] = None,
        threshold: Annotated[float | None, Field(
            ge=0, le=1, description="Deprecated: min_score")] = None,
    ) -> dict[str, Any]:
        """Search the knowledge base (documents ingested with `agent-search kb ingest`)."""
        options: dict[str, Any] = {"collections": collections} if collections else {}
        if graph:
            options["graph"] = True
        if mode:
            options["mode"] = mode
        # ``threshold`` goes as the request's deprecated field: the request moves it to
        # min_score with a DeprecationWarning, and refuses two different floors
        return await self.run({"type": "kb", "query": query, "limit": limit,
                               "min_score": min_score, "threshold": threshold,
                               "options": options})

    async def db_search(
        self, query: Query, limit: Limit = None,
        models: Annotated[list[str] | None, Field(
            description="Database models (tables) to search (default: configured)")] = None,
        wheres: Annotated[list[dict[str, Any]] | None, Field(
            description="Extra conditions: {field, op, value} objects or "
                        "{'or': [...]} groups; data only, bound as SQL parameters")] = None,
        orders: Annotated[list[dict[str, Any]] | None, Field(
            description="Sort: {field, order: asc|desc} objects")] = None,
    ) -> dict[str, Any]:
        """Search the database with a natural-language question."""
        given = {"models": models, "wheres": wheres, "orders": orders}
        return await self.run({"type": "db", "query": query, "limit": limit,
                               "options": {k: v for k, v in given.items() if v}})

    async def typed_search(self, search_type: str, query: str,
                           limit: int | None = None) -> dict[str, Any]:
        """Search one type by its name (the tool of a type without a tool of its own)."""
        return await self.run({"type": search_type, "query": query, "limit": limit})

    async def search(
        self, query: Query,
        types: Annotated[list[str] | None, Field(
            description="Search types to run together (default: all available)")] = None,
        limit: Limit = None,
    ) -> dict[str, Any]:
        """Search several sources at once (web, knowledge base, database); results are
        merged, deduplicated and reranked into one list."""
        wanted = (list(dict.fromkeys(types)) if types
                  else self.searcher.registry.searchable_types)
        if not wanted:
            return Result(type="merged", query=query,
                          error="no search type is available").to_json()
        ctx = self.context()
        results = await self.searcher.search_many(
            [{"type": t, "query": query, "limit": limit} if limit else
             {"type": t, "query": query} for t in wanted], ctx=ctx)
        merged = await self.searcher.merge(results, ctx=ctx, query=query,
                                           top_n=limit or 0)
        if all(r.error for r in results):
            merged.error = "; ".join(search_error(r.type, r.error) for r in results)
        return merged.to_json()


    async def research(
        self, query: Query,
        types: Annotated[list[str] | None, Field(
            description="Search types each part is searched on (default: all available)")
        ] = None,
        limit: Limit = None,
    ) -> dict[str, Any]:
        """Research a question with several parts: rounds of searches until every part
        has a reference or a budget is spent. Returns the parts (covered or not, their
        citation ids), the rounds, the references and why it stopped."""
        wanted = (list(dict.fromkeys(types)) if types
                  else self.searcher.registry.searchable_types)
        report = await self.searcher.research(query, ctx=self.context(), types=wanted,
                                              limit=limit)
        return report.model_dump(mode="json")


def _server_class() -> type[MCPServer[Any]]:
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError:  # mcp 1.x
        from mcp.server.fastmcp import FastMCP as MCPServer  # type: ignore[no-redef,attr-defined,unused-ignore]
    return MCPServer


def create_server(searcher: Searcher, *, user_id: str | None = None,
                  team_id: str | None = None) -> tuple[MCPServer[Any], SearchTools]:
    """An MCP server offering the search tools of ``searcher``'s registry, answering as
    ``user_id`` / ``team_id`` (permission filters; anonymous when both are None)."""
    tools = SearchTools(searcher, user_id=user_id, team_id=team_id)
    registry = searcher.registry
    types = registry.searchable_types
    own: dict[str, Callable[..., Awaitable[dict[str, Any]]]] = {
        "web": tools.web_search, "kb": tools.kb_search, "db": tools.db_search}
    offered: list[Callable[..., Awaitable[dict[str, Any]]]] = [
        own[t] if t in own else _type_tool(tools, t) for t in types]
    if "kb" in types:
        offered[types.index("kb")] = _with_choices(
            tools.kb_search, "mode", option_choices(registry.options_model("kb"), "mode"))
    offered.append(_with_choices(tools.search, "types", tuple(types), many=True))
    offered.append(_with_choices(tools.research, "types", tuple(types), many=True))
    names = ", ".join(_tool_name(fn) for fn in offered)
    server = _server_class()(
        name="agent-search",
        instructions=f"Search tools: {names} (search runs several sources at once; "
                     "research searches in rounds until each part of a question is "
                     "covered). "
                     "Cite results by their citation_id.")
    for fn in offered:
        server.add_tool(fn, name=_tool_name(fn), structured_output=True)
    return server, tools


def _tool_name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "tool_name", None) or fn.__name__


def _type_tool(tools: SearchTools, search_type: str
               ) -> Callable[..., Awaitable[dict[str, Any]]]:
    """The ``<type>_search(query, limit)`` tool of a type without a tool of its own."""

    async def tool(query: Query, limit: Limit = None) -> dict[str, Any]:
        return await tools.typed_search(search_type, query, limit)

    tool.__name__ = f"{search_type}_search"
    tool.__doc__ = f"Search {search_type}. Results have a citation id."
    tool.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
        inspect.Parameter("query", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Query),
        inspect.Parameter("limit", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None,
                          annotation=Limit)], return_annotation=dict[str, Any])
    return tool


def _with_choices(method: Callable[..., Awaitable[dict[str, Any]]], name: str,
                  choices: tuple[str, ...], *, many: bool = False
                  ) -> Callable[..., Awaitable[dict[str, Any]]]:
    """``method`` as a tool whose parameter ``name`` accepts only ``choices`` (a list of
    them with ``many``): the JSON Schema the client sees lists what the registry holds."""
    if not choices:
        return method

    async def tool(**kwargs: Any) -> dict[str, Any]:
        return await method(**kwargs)

    allowed: Any = Literal.__getitem__(choices)
    signature = inspect.signature(method, eval_str=True)
    params = []
    for param in signature.parameters.values():
        if param.name == name:
            description = next((m.description for m in getattr(param.annotation,
                                                                 "__metadata__", ())
                                if isinstance(getattr(m, "description", None), str)), None)
            kind: Any = list[allowed] if many else allowed
            param = param.replace(annotation=Annotated[kind | None,
                                                       Field(description=description)])
        params.append(param.replace(kind=inspect.Parameter.KEYWORD_ONLY))
    tool.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        params, return_annotation=dict[str, Any])
    tool.__name__ = method.__name__
    tool.__doc__ = method.__doc__
    return tool
