"""The searcher as an MCP server (``agent-search mcp`` serves it over stdio).

Tools (each returns the Result JSON of ``agent-search search --json``):

- ``web_search(query, limit, sites, time_range, fetch_pages)``
- ``kb_search(query, limit, collections, threshold, graph, mode)``
- ``db_search(query, limit, models, wheres, orders)``
- ``search(query, types, limit)`` — several types at once, merged (deduplicated,
  weighted, reranked) into one result.

Arguments are validated by the SDK against each tool's JSON Schema (derived from the
annotated signatures below) and again by :class:`~agent_search.types.Request`; a failed
search comes back as a Result whose ``error`` says why, like everywhere else. Citation
ids are unique across the whole server session (one allocator for every call).

Built with the official ``mcp`` SDK (``MCPServer``, formerly ``FastMCP``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from agent_search._text import check_tree, scrub
from agent_search.citation import CitationAllocator
from agent_search.context import Context
from agent_search.searcher import Searcher
from agent_search.types import MAX_QUERY_CHARS, Result

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

SearchType = Literal["web", "kb", "db"]
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
        return await self.run({"type": "web", "query": query, "limit": limit,
                               "sites": sites or [], "time_range": time_range,
                               "options": {"fetch_pages": True} if fetch_pages else {}})

    async def kb_search(
        self, query: Query, limit: Limit = None,
        collections: Annotated[list[str] | None, Field(
            description="Knowledge-base collections (default: configured)")] = None,
        threshold: Annotated[float | None, Field(
            ge=0, le=1, description="Minimum relevance score 0..1")] = None,
        graph: Annotated[bool, Field(description="Add related graph entities")] = False,
        mode: Annotated[Literal["hybrid", "dense", "sparse"] | None, Field(
            description="Retrieval mode (default: hybrid)")] = None,
    ) -> dict[str, Any]:
        """Search the knowledge base (documents ingested with `agent-search kb ingest`)."""
        return await self.run({"type": "kb", "query": query, "limit": limit,
                               "collections": collections or [], "threshold": threshold,
                               "graph": graph, "options": {"mode": mode} if mode else {}})

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
        return await self.run({"type": "db", "query": query, "limit": limit,
                               "models": models or [], "wheres": wheres or [],
                               "orders": orders or []})

    async def search(
        self, query: Query,
        types: Annotated[list[SearchType] | None, Field(
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
            merged.error = "; ".join(f"{r.type}: {r.error}" for r in results)
        return merged.to_json()


def _server_class() -> type[MCPServer[Any]]:
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError:  # mcp 1.x
        from mcp.server.fastmcp import FastMCP as MCPServer  # type: ignore[no-redef,attr-defined,unused-ignore]
    return MCPServer


def create_server(searcher: Searcher, *, user_id: str | None = None,
                  team_id: str | None = None) -> tuple[MCPServer[Any], SearchTools]:
    """An MCP server offering the four search tools of ``searcher``, answering as
    ``user_id`` / ``team_id`` (permission filters; anonymous when both are None)."""
    tools = SearchTools(searcher, user_id=user_id, team_id=team_id)
    server = _server_class()(
        name="agent-search",
        instructions="Search tools: web_search, kb_search, db_search and search "
                     "(multi-source). Cite results by their citation_id.")
    for fn in (tools.web_search, tools.kb_search, tools.db_search, tools.search):
        server.add_tool(fn, name=fn.__name__, structured_output=True)
    return server, tools
