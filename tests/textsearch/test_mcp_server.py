"""``agent-search mcp``: a real MCP client session (``mcp.client.stdio``) with the server
running in a subprocess, its web provider a local server replaying recorded Bing
payloads and its database a SQLite file of the test's own."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from agent_search.kb.settings import MODES

from ..support.local_http import LocalServer, Reply, Seen, recorded, recorded_json

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
QUERY = "What is the Semantic Kernel?"


def _structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    data = result.structured_content
    if data is None:
        data = json.loads(result.content[0].text)
    return dict(data)


@pytest.fixture
def setup(server: LocalServer, tmp_path: Path) -> StdioServerParameters:
    def bing(seen: Seen) -> Reply:
        q = seen.param("q") or ""
        name = ("bing_site_filter_devblogs_microsoft.com.json"
                if "site:devblogs.microsoft.com" in q else "bing_what_is_the_semantic_kernel.json")
        return Reply(200, recorded(name))

    server.route("GET", "/v7.0/search", bing)
    db = tmp_path / "music.db"
    with sqlite3.connect(db) as conn:
        conn.execute("create table artists (ArtistId integer primary key, Name text)")
        conn.executemany("insert into artists values (?, ?)",
                         [(1, "AC/DC"), (2, "Accept"), (3, "Aerosmith")])
    config = tmp_path / "config"
    config.mkdir()
    (config / "search.yao").write_text(json.dumps({
        "web": {"provider": "bing", "base_url": server.url},
        "db": {"url": f"sqlite:///{db}"},
    }))
    return StdioServerParameters(
        command=sys.executable, args=["-m", "agent_search", "mcp", "--config", str(config)],
        env={"BING_API_KEY": "k", "AGENT_SEARCH_HOME": str(tmp_path / "home"),
             "PYTHONPATH": str(ROOT)},
        cwd=str(tmp_path))


async def test_mcp_session_lists_and_calls_the_search_tools(
        setup: StdioServerParameters, server: LocalServer, tmp_path: Path) -> None:
    errlog = (tmp_path / "server.log").open("w")
    async with stdio_client(setup, errlog=errlog) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()

        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == {"web_search", "kb_search", "db_search", "search", "research"}
        web_schema = tools["web_search"].input_schema
        assert web_schema["required"] == ["query"]
        assert web_schema["properties"]["query"]["minLength"] == 1
        assert "site" in tools["web_search"].description.lower() or \
            "sites" in web_schema["properties"]
        mode = tools["kb_search"].input_schema["properties"]["mode"]
        assert {"enum": list(MODES), "type": "string"} in mode["anyOf"]  # the kb's own list

        web = _structured(await session.call_tool(
            "web_search", {"query": QUERY, "limit": 3, "sites": ["devblogs.microsoft.com"]}))
        assert web["error"] is None
        recorded_pages = recorded_json(
            "bing_site_filter_devblogs_microsoft.com.json")["webPages"]["value"]
        assert [i["url"] for i in web["items"]] == [p["url"] for p in recorded_pages[:3]]
        assert [i["citation_id"] for i in web["items"]] == ["1", "2", "3"]
        assert server.seen("/v7.0/search")[-1].param("q") == \
            f"{QUERY} site:devblogs.microsoft.com"

        db = _structured(await session.call_tool(
            "db_search", {"query": "artists named Accept", "models": ["artists"]}))
        assert db["error"] is None
        assert [i["data"]["Name"] for i in db["items"]] == ["Accept"]
        assert db["items"][0]["citation_id"] == "4"  # ids unique across the session

        merged = _structured(await session.call_tool(
            "search", {"query": "AC/DC", "types": ["web", "db"], "limit": 20}))
        assert merged["type"] == "merged"
        types = {i["type"] for i in merged["items"]}
        assert types == {"web", "db"}
        ids = [i["citation_id"] for i in merged["items"]]
        assert len(set(ids)) == len(ids) and min(int(i) for i in ids) > 4

        kb = _structured(await session.call_tool(
            "kb_search", {"query": "anything", "collections": ["missing"]}))
        assert kb["error"] and "missing" in kb["error"]
        assert "\n" not in kb["error"]

        bad = await session.call_tool("web_search", {"query": QUERY, "limit": 0})
        assert bad.is_error
        assert "limit" in bad.content[0].text

        bad_type = await session.call_tool("search", {"query": QUERY, "types": ["ftp"]})
        assert bad_type.is_error


def test_mcp_command_with_bad_configuration_exits_with_one_line(tmp_path: Path) -> None:
    import subprocess

    config = tmp_path / "config"
    config.mkdir()
    (config / "search.yao").write_text('{"web": {"provider": "nope"}}')
    proc = subprocess.run(
        [sys.executable, "-m", "agent_search", "mcp", "--config", str(config)],
        input="", capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT),
             "AGENT_SEARCH_HOME": str(tmp_path / "home")})
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        f"agent-search: error: {config / 'search.yao'}: web.provider: unknown provider "
        "'nope'; one of tavily, serper, "
        "serpapi, brave, google, bing, searxng or mcp:<server> (line 1)"]
