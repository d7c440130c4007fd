"""``agent-search ask``: JSON lines of events, the human display, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

HOOKS = '''
from agent_search.types import Result, ResultItem

class Docs:
    type = "kb"
    def can_handle(self, ctx, request):
        return True
    async def search(self, ctx, request):
        items = [ResultItem(title=f"Guide {i}", content=f"Step {i}: run make demo.",
                            document_id=f"g{i}", collection="docs", score=0.9 - i / 10)
                 for i in range(3)]
        return Result(type="kb", query=request.query, items=items)

async def create(ctx, messages, options):
    # a hook may register a handler of its own; this one stands in for a built kb
    if not any(type(h).__name__ == "Docs" for h in ctx.searcher.registry.handlers("kb")):
        ctx.searcher.registry.register(Docs(), first=True)
    return None
'''


def make_project(tmp_path: Path) -> Path:
    adir = tmp_path / "assistants" / "cli"
    adir.mkdir(parents=True)
    (adir / "package.yao").write_text(json.dumps(
        {"name": "cli", "search": {"kb": True}, "kb": {"collections": ["docs"]}}))
    (adir / "hooks.py").write_text(HOOKS)
    (tmp_path / "config").mkdir()
    return tmp_path


def ask(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AGENT_SEARCH_HOME": str(cwd / "home"), "COLUMNS": "120"}
    exe = Path(sys.executable).parent / "agent-search"
    return subprocess.run([str(exe), "ask", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("proj"))


def test_json_lines_of_events(project: Path) -> None:
    out = ask(project, "How do I run the demo?", "--assistant", "cli", "--json")
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds[0] == "search_start" and kinds[-3:] == ["citations", "grounding", "done"]
    assert kinds.count("search_result") == 3 and "text" in kinds
    assert all("request_id" in e for e in events)
    assert events[-1]["references"]


def test_human_display(project: Path) -> None:
    out = ask(project, "How do I run the demo?", "--assistant", "cli")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert '🔍 Searching kb "How do I run the demo?"...' in text
    assert "📄 Found 3 results (kb):" in text
    assert "1. #ref:1 - Guide 0" in text
    assert "✅ Search complete (" in text
    assert "offline" in text and "References" in text


def test_no_search_flag(project: Path) -> None:
    out = ask(project, "How do I run the demo?", "--assistant", "cli", "--no-search", "--json")
    kinds = [json.loads(line)["event"] for line in out.stdout.splitlines()]
    assert "search_start" not in kinds and kinds[-1] == "done"


def test_unknown_assistant_is_one_line_error(project: Path) -> None:
    out = ask(project, "q", "--assistant", "missing")
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "missing" in out.stderr


def test_broken_package_is_one_line_error_with_line(tmp_path: Path) -> None:
    adir = tmp_path / "assistants" / "bad"
    adir.mkdir(parents=True)
    (adir / "package.yao").write_text('{\n "name": "x",\n oops\n}')
    out = ask(tmp_path, "q", "--assistant", "bad")
    assert out.returncode == 2 and ("line 3" in out.stderr or "line 4" in out.stderr)
    assert "package.yao" in out.stderr and "Traceback" not in out.stderr
