"""The command line reads the same everywhere: short flags where users expect them, help
without type noise, paragraphs that wrap evenly, one wording per bound, errors that name
a field once, ``ask --db-url`` without an assistant folder, ``serve`` on a busy port."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_search.cli import command, main


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(args)
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AGENT_SEARCH_HOME": str(cwd / "home"), "COLUMNS": "100"}
    exe = Path(sys.executable).parent / "agent-search"
    return subprocess.run([str(exe), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_search_takes_c_for_collection_and_a_for_assistant(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["search", "kb", "q", "-c", "nope", "--json"], capsys)
    assert code == 1 and json.loads(out)["error"].startswith(
        "kb: collection 'nope' not found: no collections in ")  # an empty data home
    code, _, err = run(["search", "kb", "q", "-a", "nobody"], capsys)
    assert code == 2 and "--assistant 'nobody'" in err


def _commands(cmd: Any) -> list[Any]:
    subs = getattr(cmd, "commands", {})
    return [cmd, *(c for sub in subs.values() for c in _commands(sub))]


@pytest.mark.parametrize("args", [["--help"], ["search", "--help"], ["kb", "--help"],
                                  ["ask", "--help"], ["kb", "ingest", "--help"]])
def test_help_shows_no_type_after_plain_flags(
        args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(args, capsys)
    assert code == 0 and "--help" in out and "<bool>" not in out


def test_help_paragraphs_are_one_line_each_so_they_wrap_evenly() -> None:
    for cmd in _commands(command()):
        texts = [cmd.help, cmd.short_help, *(getattr(p, "help", None) for p in cmd.params)]
        for text in filter(None, texts):
            assert "\n" not in text.replace("\n\n", ""), (cmd.name, text)


def test_the_kb_group_summary_lists_every_kb_command() -> None:
    kb = command().commands["kb"]
    assert all(name in kb.help for name in kb.commands), kb.help


@pytest.mark.parametrize("limit", ["0", "500"])
def test_limit_bounds_have_one_wording(limit: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["search", "web", "q", "--limit", limit], capsys)
    assert code == 2
    assert err.strip() == f"agent-search: error: --limit {limit} is outside 1..100 " \
                          "(options.max_limit)"


def test_an_empty_query_names_the_field_once(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["search", "web", "   "], capsys)
    assert code == 2 and "query must not be empty" in err and "query: query" not in err


def test_ask_db_url_asks_your_own_database_without_an_assistant(tmp_path: Path) -> None:
    db = tmp_path / "mine.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE planet (id INTEGER PRIMARY KEY, name TEXT, moons INT)")
        conn.executemany("INSERT INTO planet (name, moons) VALUES (?, ?)",
                         [("Mercury", 0), ("Earth", 1), ("Mars", 2), ("Jupiter", 95)])
    out = cli(tmp_path, "ask", "Which planets have more than 10 moons?", "--db-url",
              f"sqlite:///{db}",
              "--connector", "offline", "--json")
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines()]
    starts = [e for e in events if e["event"] == "search_start"]
    assert [e["type"] for e in starts] == ["db"]
    refs = events[-1]["references"]
    assert [r["title"] for r in refs] == ["Jupiter"] and refs[0]["model"] == "planet"


def test_serve_on_a_busy_port_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = cli(tmp_path, "serve", "--port", str(port))
    assert out.returncode == 2
    assert out.stderr.strip() == \
        f"agent-search: error: --port {port}: 127.0.0.1:{port} is already in use"
