"""An MCP server (stdio) the delegation tests start as a real process.

Tools: ``keywords``, ``rerank`` (reverses the order: the last document is the most
relevant), ``query`` (answers an invalid DSL first when the text says ``bad_first``),
``broken`` (raises), ``slow`` (sleeps 30 s). Resource: ``docs://guide``.
``python mcp_tools_server.py http PORT`` serves streamable HTTP instead of stdio.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from mcp.server.mcpserver import MCPServer

server = MCPServer("agent-search-test-tools")


@server.tool()
def keywords(text: str, max_keywords: int = 10, language: str = "auto") -> list[str]:
    """Keywords of a text: here, its capitalised words (so tests can tell it ran)."""
    return [w.strip(".,?!") for w in text.split() if w[:1].isupper()][:max_keywords]


@server.tool()
def rerank(query: str, documents: list[str]) -> list[dict[str, Any]]:
    n = len(documents)
    return [{"index": i, "relevance_score": (i + 1) / n} for i in range(n)]


@server.tool()
def query(text: str, schemas: list[dict[str, Any]], feedback: str | None = None
          ) -> dict[str, Any]:
    model = next((s["id"] for s in schemas if str(s.get("id", "")).endswith("product")),
                 schemas[0]["id"])
    if "bad_first" in text and feedback is None:
        return {"model": model, "wheres": [{"field": "no_such_field", "value": 1}]}
    return {"model": model, "wheres": [{"field": "price", "op": "<", "value": 100}],
            "orders": [{"field": "price", "order": "asc"}]}


@server.tool()
def broken(text: str = "", query: str = "", documents: list[str] | None = None,
           max_keywords: int = 10, language: str = "auto") -> str:
    raise RuntimeError("this tool always fails")


@server.tool()
def slow(text: str = "", query: str = "", documents: list[str] | None = None,
         max_keywords: int = 10, language: str = "auto") -> str:
    time.sleep(30)
    return "too late"


@server.resource("docs://guide")
def guide() -> str:
    return "The guide says: run make demo first. Then ask a question."


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "http":  # streamable HTTP on 127.0.0.1:PORT/mcp
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
