"""``mcp_resource`` data parts are limited to the assistant's listed resources.

A data part is the user's input; the MCP servers are the deployment's. Before the fix a
user could name any URI on any configured server (on the HTTP service: any key holder,
any resource). Now the assistant lists what may be read (``mcp_resources`` in
``package.yao``); anything else is refused before a server is contacted, and an assistant
that lists none reads none. Runs the real MCP test server (tests/support)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from agent_search.agent import Assistant, Options

SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_tools_server.py"
MCP = {"servers": {"tools": {"command": sys.executable, "args": [str(SERVER)],
                             "timeout": 30}}}


def _assistant(root: Path, package: dict[str, Any]) -> Assistant:
    adir, cdir = root / "assistants" / "a", root / "config"
    adir.mkdir(parents=True)
    cdir.mkdir()
    (adir / "package.yao").write_text(json.dumps(package))
    (cdir / "agent.yml").write_text(yaml.safe_dump({"mcp": MCP}))
    return Assistant.load(adir, config_dir=cdir, builtin_handlers=False)


def _ask(assistant: Assistant, sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    messages = [{"role": "user", "content": [
        {"type": "text", "text": "What does it say?"},
        {"type": "data", "data": {"sources": sources}}]}]

    async def go() -> list[dict[str, Any]]:
        try:
            return [e.to_dict() async for e in assistant.stream(messages, Options())]
        finally:
            await assistant.aclose()

    return anyio.run(go)


@pytest.mark.parametrize("package", [
    {"name": "none listed"},
    {"name": "other uri", "mcp_resources": [{"server": "tools", "uri": "docs://other"}]},
    {"name": "other server", "mcp_resources": [{"server": "web", "uri": "docs://*"}]},
])
def test_an_unlisted_resource_is_refused(tmp_path: Path, package: dict[str, Any]) -> None:
    events = _ask(_assistant(tmp_path, package),
                  [{"type": "mcp_resource", "name": "docs://guide", "server": "tools"},
                   {"type": "mcp_resource", "name": "docs://guide"}])
    done = [e for e in events if e["event"] == "search_complete"]
    assert len(done) == 2
    assert all("not among this assistant's resources" in (e["error"] or "") for e in done)
    assert "run make demo first" not in json.dumps(events)


def test_a_listed_resource_is_read(tmp_path: Path) -> None:
    package = {"name": "t", "mcp_resources": [{"server": "tools", "uri": "docs://*"}]}
    events = _ask(_assistant(tmp_path, package),
                  [{"type": "mcp_resource", "name": "docs://guide"}])
    assert "run make demo first" in json.dumps(events)
