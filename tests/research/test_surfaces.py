"""Research mode through the command line and the MCP server."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agent_search import Searcher
from agent_search.mcp.server import create_server

from .test_research import QUESTION, Notes

pytestmark = pytest.mark.anyio


def test_ask_research_streams_the_plan_and_rounds(tmp_path: Path) -> None:
    db = tmp_path / "sky.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE planet (id INTEGER PRIMARY KEY, name TEXT, moons INT)")
        conn.executemany("INSERT INTO planet (name, moons) VALUES (?, ?)",
                         [("Mars", 2), ("Jupiter", 95), ("Saturn", 146)])
    env = {**os.environ, "AGENT_SEARCH_HOME": str(tmp_path / "home")}
    exe = Path(sys.executable).parent / "agent-search"
    out = subprocess.run([str(exe), "ask", "How many moons does Mars have and how many "
                          "moons does Saturn have?", "--db-url", f"sqlite:///{db}",
                          "--connector", "offline", "--research", "--json"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines()]
    kinds = [e["event"] for e in events]
    plan = next(e for e in events if e["event"] == "research_plan")
    assert plan["parts"] == ["How many moons does Mars have",
                             "how many moons does Saturn have?"]
    assert "research_round" in kinds and "research_done" in kinds
    assert kinds[-1] == "done"


async def test_the_mcp_research_tool() -> None:
    async with Searcher(handlers=[Notes()]) as searcher:
        server, _ = create_server(searcher, user_id="u1")
        tools = {t.name: t for t in await server.list_tools()}
        assert "research" in tools
        out = await server.call_tool("research", {"query": QUESTION, "limit": 1})
    data = out.structured_content or json.loads(out.content[0].text)  # type: ignore[union-attr]
    assert data["stopped"] == "covered"
    assert [p["covered"] for p in data["parts"]] == [True, True]
