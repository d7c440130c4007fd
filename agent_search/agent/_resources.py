"""The ``mcp_resource`` search handler: a user data source that reads an MCP resource.

Registered by the runtime on its searcher, so a resource gets citation ids, source
``"user"``, events and a trace node like any other search. ``request.options``:
``uri`` (required) and ``server`` (an MCP server id; the only declared server when
omitted).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_search.mcp.client import MCPServers
from agent_search.trace import span
from agent_search.types import Result, ResultItem

if TYPE_CHECKING:
    from agent_search.context import Context
    from agent_search.types import Request


class McpResourceHandler:
    type = "mcp_resource"
    searchable = False  # reads one named resource: never asked a free-text question

    def __init__(self, clients: MCPServers) -> None:
        self.clients = clients

    def can_handle(self, ctx: Context, request: Request) -> bool:
        return isinstance(request.options.get("uri"), str)

    async def search(self, ctx: Context, request: Request) -> Result:
        uri = str(request.options["uri"])
        server = request.options.get("server")
        if not server:
            if len(self.clients.servers) != 1:
                return Result(type=self.type, query=request.query,
                              error=f"{uri}: say which MCP server "
                                    "('server' on the data source)")
            server = next(iter(self.clients.servers))
        with span("mcp_read", server=server, uri=uri):
            contents = await self.clients.read_resource(str(server), uri)
        items = [ResultItem(type=self.type, title=u, url=u, content=text, score=1.0,
                            document_id=u, collection=f"mcp:{server}")
                 for u, text in contents]
        return Result(type=self.type, query=request.query, items=items, total=len(items))
