"""The client side of MCP: connections to MCP servers, on the official ``mcp`` SDK client.

One :class:`MCPConnection` per server serves every MCP client use of the package: the
``mcp:<server>`` web provider, ``uses.*`` delegation, ``mcp_resource`` data sources and
MCP rerankers (through :class:`MCPServers`, the servers ``config/agent.yml`` declares),
each configured by one :class:`MCPServerSettings`. Every failure is an :class:`MCPError`
with a one-line message. The SDK itself is imported on a connection's first call.
"""

from agent_search.mcp.client._connection import MCPConnection, MCPError, MCPServers, tool_value
from agent_search.mcp.client.settings import MCPServerSettings

__all__ = ["MCPConnection", "MCPError", "MCPServerSettings", "MCPServers", "tool_value"]
