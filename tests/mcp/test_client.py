"""The one MCP client connection (agent_search.mcp) against a real MCP server process
(tests/support/mcp_tools_server.py), and the one settings model both configurations use."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agent_search.agent.settings import AgentSettings
from agent_search.errors import ConfigError
from agent_search.mcp import MCPConnection, MCPError, MCPServers, MCPServerSettings, tool_value
from agent_search.web.settings import WebSettings

pytestmark = pytest.mark.anyio

TOOLS_SERVER = str(Path(__file__).parents[1] / "support" / "mcp_tools_server.py")


def tools_settings(**extra: Any) -> MCPServerSettings:
    return MCPServerSettings(command=sys.executable, args=[TOOLS_SERVER], **extra)


async def test_servers_call_tools_and_read_resources(tmp_path: Path) -> None:
    servers = MCPServers({"tools": tools_settings()}, log_dir=tmp_path / "logs")
    assert await servers.call_tool("tools", "keywords", {"text": "hotels in Paris near the Louvre"}
                                   ) == ["Paris", "Louvre"]
    assert await servers.read_resource("tools", "docs://guide") == [
        ("docs://guide", "The guide says: run make demo first. Then ask a question.")]
    with pytest.raises(MCPError) as failed:
        await servers.call_tool("tools", "broken", {})
    assert str(failed.value).startswith("mcp:tools: tool 'broken' failed: ")
    assert "\n" not in str(failed.value) and not failed.value.retryable
    with pytest.raises(MCPError, match=r"'nope' is not declared in config/agent\.yml "
                                       r"\(declared: tools\)"):
        await servers.call_tool("nope", "keywords", {})
    assert (tmp_path / "logs" / "mcp-tools.log").is_file()  # the server's stderr went there


async def test_timeouts_and_unstartable_servers_are_one_line_errors() -> None:
    slow = MCPConnection("tools", tools_settings(timeout=1.5))
    with pytest.raises(MCPError, match=r"^mcp:tools: timed out after 1\.5s$") as failed:
        await slow.call_tool("slow", {}, timeout=20)  # the server's own timeout caps it
    assert failed.value.retryable
    gone = MCPConnection("gone", MCPServerSettings(command="/nonexistent/mcp-server"))
    with pytest.raises(MCPError, match=r"^mcp:gone: cannot reach the MCP server \("):
        await gone.call_tool("search", {})


async def test_a_kept_session_serves_every_call_until_closed() -> None:
    connection = MCPConnection("tools", tools_settings(), keep_alive=True)
    try:
        await connection.call_tool("keywords", {"text": "One Two"})
        kept = connection._kept
        assert kept is not None
        with pytest.raises(MCPError):  # an error the server sends keeps the session
            await connection.call_tool("no_such_tool", {})
        await connection.call_tool("keywords", {"text": "Three"})
        assert connection._kept is kept
    finally:
        await connection.aclose()
    assert connection._kept is None
    with pytest.raises(MCPError, match="connection closed"):
        await connection.call_tool("keywords", {"text": "Four"})


def test_tool_value_reads_every_answer_shape() -> None:
    def text(*blocks: str) -> SimpleNamespace:
        return SimpleNamespace(structured_content=None,
                               content=[SimpleNamespace(type="text", text=b) for b in blocks])

    assert tool_value(SimpleNamespace(structured_content={"items": [1]}, content=[])) == {
        "items": [1]}
    assert tool_value(SimpleNamespace(structured_content={"result": [1, 2]}, content=[])) == [
        1, 2]
    assert tool_value(SimpleNamespace(structured_content={"result": ' ["a"] '}, content=[])
                      ) == ["a"]
    assert tool_value(text('{"a": 1}')) == {"a": 1}
    assert tool_value(text(" plain ", "text ")) == "plain \n\ntext"
    assert tool_value(text("[not json")) == "[not json"


def test_one_settings_model_for_agent_and_web_servers(tmp_path: Path) -> None:
    spec = {"url": "http://127.0.0.1:1/mcp", "headers": {"X-Team": "t1"}, "timeout": 5}
    (tmp_path / "agent.yml").write_text(f"mcp:\n  servers:\n    s: {spec}\n")
    agent_server = AgentSettings.load(tmp_path).mcp.servers["s"]
    web_server = WebSettings(provider="mcp:s", mcp_servers={"s": spec}).mcp_servers["s"]
    assert type(agent_server) is MCPServerSettings
    assert isinstance(web_server, MCPServerSettings)
    assert agent_server.model_dump() == web_server.model_dump(exclude={"tool", "keep_alive"})
    # the search tool to call is the web provider's business, refused in agent.yml
    (tmp_path / "agent.yml").write_text("mcp:\n  servers:\n    s: {command: x, tool: t}\n")
    with pytest.raises(ConfigError, match=r"mcp\.servers\.s\.tool"):
        AgentSettings.load(tmp_path)


def test_the_client_and_the_server_sides_load_apart() -> None:
    """mcp/ is two sub-packages that share nothing: either side imports without the
    other (checked in a fresh interpreter)."""
    import subprocess

    code = ("import sys\nimport agent_search.mcp.{side}\n"
            "print('agent_search.mcp.{other}' in sys.modules)")
    for side, other in (("server", "client"), ("client", "server")):
        done = subprocess.run([sys.executable, "-c", code.format(side=side, other=other)],
                              capture_output=True, text=True, timeout=120, check=True)
        assert done.stdout.strip() == "False", (side, done.stdout, done.stderr[-500:])
