"""The server side of MCP: the searcher as an MCP server (``agent-search mcp`` serves it
over stdio). :func:`create_server` offers the searcher's registry as MCP tools
(``web_search``, ``kb_search``, ``db_search``, ``search``, ``<type>_search``);
:class:`SearchTools` are those tools as plain async methods. Nothing here is shared with
the client side (:mod:`agent_search.mcp.client`).
"""

from agent_search.mcp.server._tools import SearchTools, create_server

__all__ = ["SearchTools", "create_server"]
