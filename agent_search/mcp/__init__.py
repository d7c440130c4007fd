"""MCP, both ways: client connections to MCP servers and the searcher as an MCP server.

Client side (:mod:`agent_search.mcp.client`): one :class:`MCPConnection` per server,
configured by one :class:`MCPServerSettings` model, behind the ``mcp:<server>`` web
provider, ``uses.*`` delegation, ``mcp_resource`` data sources and MCP rerankers.

Server side (:mod:`agent_search.mcp.server`, imported on its own because it needs the
searcher): ``create_server(searcher)`` offers ``web_search``, ``kb_search``,
``db_search`` and ``search`` as MCP tools; ``agent-search mcp`` serves them over stdio.
"""

from agent_search.mcp.client import MCPConnection, MCPError, MCPServers, tool_value
from agent_search.mcp.settings import MCPServerSettings

__all__ = ["MCPConnection", "MCPError", "MCPServerSettings", "MCPServers", "tool_value"]
