"""The registry is the list: a handler type registered in one place (an
``agent_search.handlers`` entry point) is searchable from Python, the CLI, the MCP
server, the HTTP service and auto search, with nothing else changed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from agent_search import Searcher
from agent_search.agent import Assistant
from agent_search.mcp.server import create_server

pytestmark = pytest.mark.anyio

PLUGIN = '''
from typing import Literal

from pydantic import BaseModel

from agent_search import Result, ResultItem


class NewsOptions(BaseModel):
    region: Literal["eu", "us"] | None = None


class NewsHandler:
    type = "news"
    options_model = NewsOptions

    def __init__(self, config):
        self.config = config

    def can_handle(self, ctx, request):
        return True

    async def search(self, ctx, request):
        item = ResultItem(title=f"News: {request.query}", url="https://news.example/1",
                          content=f"Today in the news: {request.query}.", score=0.9)
        return Result(type="news", query=request.query, items=[item])


def create_handler(config):
    return NewsHandler(config)
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A distribution on sys.path whose metadata registers ``news``: one registration."""
    root = tmp_path / "site"
    info = root / "news_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (root / "news_plugin.py").write_text(PLUGIN)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: news-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[agent_search.handlers]\nnews = news_plugin:create_handler\n")
    monkeypatch.syspath_prepend(str(root))
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    config = tmp_path / "project" / "config"
    config.mkdir(parents=True)
    adir = tmp_path / "project" / "assistants" / "newsdesk"
    adir.mkdir(parents=True)
    (adir / "package.yao").write_text(json.dumps(
        {"name": "newsdesk", "search": {"types": {"news": True}}}))
    return tmp_path / "project"


def _titles(result: dict[str, Any]) -> list[str]:
    return [i["title"] for i in result["items"]]


async def test_python(plugin: Path, project: Path) -> None:
    async with Searcher.from_config(project / "config") as searcher:
        assert "news" in searcher.registry.searchable_types
        result = await searcher.search({"type": "news", "query": "elections"})
    assert result.error is None and [i.title for i in result.items] == ["News: elections"]


def test_cli(plugin: Path, project: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(plugin), "AGENT_SEARCH_HOME": str(project / "h")}
    exe = Path(sys.executable).parent / "agent-search"
    out = subprocess.run([str(exe), "search", "news", "elections", "--json", "--config",
                          str(project / "config")], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert _titles(json.loads(out.stdout)) == ["News: elections"]


async def test_mcp(plugin: Path, project: Path) -> None:
    async with Searcher.from_config(project / "config") as searcher:
        server, _ = create_server(searcher)
        tools = {t.name: t for t in await server.list_tools()}
        assert "news_search" in tools
        types = tools["search"].input_schema["properties"]["types"]
        assert "news" in json.dumps(types)
        one = await server.call_tool("news_search", {"query": "elections"})
        both = await server.call_tool("search", {"query": "elections", "types": ["news"]})
    for out in (one, both):
        data = out.structured_content or json.loads(out.content[0].text)
        assert _titles(data) == ["News: elections"]


async def test_http(plugin: Path, project: Path) -> None:
    from agent_search.server.app import create_app
    from agent_search.server.service import Service, ServiceOptions

    service = Service.load(ServiceOptions(config_dir=project / "config",
                                          assistants_dir=project / "assistants"))
    transport = httpx.ASGITransport(app=create_app(service))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            response = await c.post("/v1/search", json={"type": "news", "query": "elections"})
    finally:
        await service.aclose()
    assert response.status_code == 200, response.text
    assert _titles(response.json()) == ["News: elections"]


async def test_auto_search(plugin: Path, project: Path) -> None:
    assistant = Assistant.load(project / "assistants" / "newsdesk",
                               config_dir=project / "config")
    try:
        events = [e.to_dict() async for e in assistant.stream("What happened today?")]
    finally:
        await assistant.aclose()
    starts = [e for e in events if e["event"] == "search_start"]
    assert [e["type"] for e in starts] == ["news"]
    assert any(e["event"] == "search_result" and e["title"].startswith("News:")
               for e in events)
