"""MCP, both ways, in two sub-packages that share nothing private:

- :mod:`agent_search.mcp.client`: one :class:`MCPConnection` per server, configured by
  one :class:`MCPServerSettings` model, behind the ``mcp:<server>`` web provider,
  ``uses.*`` delegation, ``mcp_resource`` data sources and MCP rerankers. Its names are
  re-exported here.
- :mod:`agent_search.mcp.server` (imported on its own because it needs the searcher):
  ``create_server(searcher)`` offers ``web_search``, ``kb_search``, ``db_search`` and
  ``search`` as MCP tools; ``agent-search mcp`` serves them over stdio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_search._lazy import lazy_exports

if TYPE_CHECKING:
    from agent_search.mcp.client import (
        MCPConnection,
        MCPError,
        MCPServers,
        MCPServerSettings,
        tool_value,
    )

__getattr__, __dir__ = lazy_exports(__name__, dict.fromkeys(
    ("MCPConnection", "MCPError", "MCPServerSettings", "MCPServers", "tool_value"), "client"))
"""Imported on first use, so the server side (``import agent_search.mcp.server``) does
not load the client side."""

__all__ = ["MCPConnection", "MCPError", "MCPServerSettings", "MCPServers", "tool_value"]
