"""A small MCP server with search tools, run by the MCP provider tests as a real process.

    python mcp_search_server.py stdio
    python mcp_search_server.py http PORT

Tools: ``search`` answers ``{"items": [...]}`` from the recorded Tavily payload (sites
filter applied, the arguments echoed back); ``search_text`` answers plain text;
``search_list`` a JSON list in a text block; ``broken`` fails.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

try:  # mcp 2.x
    from mcp.server.mcpserver import MCPServer as FastMCP
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP  # type: ignore[no-redef]

# run as a script (no package import): the sample's path spelled out, as tests/support/data.py
RECORDED = (Path(__file__).resolve().parents[1] / "data" / "web-search-api-responses"
            / "tavily_what_is_the_semantic_kernel.json")

server = FastMCP("test-search")


@server.tool()
def search(query: str, limit: int = 10, sites: list[str] | None = None,
           time_range: str | None = None) -> dict[str, Any]:
    """Search the recorded results."""
    payload = json.loads(RECORDED.read_text(encoding="utf-8-sig"))
    items = [{"title": r["title"], "url": r["url"], "content": r["content"],
              "score": r["score"], "published": "2024-06-24", "server_pid": os.getpid()}
             for r in payload["results"]
             if not sites or any(s in r["url"] for s in sites)]
    return {"items": items[:limit],
            "echo": {"query": query, "limit": limit, "sites": sites, "time_range": time_range}}


@server.tool()
def search_text(query: str, limit: int = 10) -> str:
    """Answer in plain text."""
    return f"Plain answer about {query}: Semantic Kernel is an SDK."


@server.tool()
def search_list(query: str, limit: int = 10) -> str:
    """Answer a JSON list inside a text block."""
    return json.dumps([{"title": "A", "link": "https://a.example/x", "snippet": "<b>a</b>"},
                       {"title": "B", "link": "https://b.example/y", "snippet": "b"}][:limit])


@server.tool()
def broken(query: str, limit: int = 10) -> str:
    """Always fails."""
    raise RuntimeError("search backend unavailable")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
