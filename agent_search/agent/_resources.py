"""The ``mcp_resource`` search handler: a user data source that reads an MCP resource.

Registered by the runtime on its searcher, so a resource gets citation ids, source
``"user"``, events and a trace node like any other search. ``request.options``:
``uri`` (required) and ``server`` (an MCP server id; the only declared server when
omitted).

A data part is the user's input, and the MCP servers are the deployment's: a user may
read only the resources the assistant lists in ``package.yao`` (``mcp_resources``:
server and URI, a trailing ``*`` for a prefix). Anything else is refused with an error
Result before any server is contacted; an assistant that lists none reads none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from agent_search.agent.package import McpResourceRef
from agent_search.mcp.client import MCPServers
from agent_search.trace import span
from agent_search.types import Result, ResultItem

if TYPE_CHECKING:
    from agent_search.context import Context
    from agent_search.types import Request


class McpResourceHandler:
    type = "mcp_resource"
    searchable = False  # reads one named resource: never asked a free-text question

    def __init__(self, clients: MCPServers, *,
                 allowed: Sequence[McpResourceRef] = ()) -> None:
        self.clients = clients
        self.allowed = tuple(allowed)

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
        if not any(ref.allows(str(server), uri) for ref in self.allowed):
            listed = ", ".join(f"{r.server}:{r.uri}" for r in self.allowed[:5]) or "none"
            return Result(type=self.type, query=request.query,
                          error=f"mcp_resource {uri[:200]!r} on server {str(server)[:80]!r} "
                                f"is not among this assistant's resources ({listed}); "
                                "not read")
        with span("mcp_read", server=server, uri=uri):
            contents = await self.clients.read_resource(str(server), uri)
        items = [ResultItem(type=self.type, title=u, url=u, content=text, score=1.0,
                            document_id=u, collection=f"mcp:{server}")
                 for u, text in contents]
        return Result(type=self.type, query=request.query, items=items, total=len(items))
