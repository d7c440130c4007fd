from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_search.cli import main
from agent_search.cli.search import parse_order, parse_where

ROOT = Path(__file__).resolve().parents[2]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(args)
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["search", "video", "cats"], "TYPE 'video'"),
        (["search", "web", "q", "--limit", "abc"], "--limit"),
        (["search", "web", "q", "--limit", "0"], "limit 0 is outside"),
        (["search", "web", "q", "--bogus"], "--bogus"),
        (["search", "web", "   "], "query must not be empty"),
        (["search", "kb", "q", "--threshold", "2"], "threshold 2.0 is outside 0..1"),
        (["search", "db", "q", "--where", "price:~:1"], "unknown operator '~'"),
        (["search", "db", "q", "--where", "price"], "expected FIELD:OP:VALUE"),
        (["search", "db", "q", "--order", "price:up"], "expected FIELD:asc or FIELD:desc"),
        (["search", "web", "q", "--time-range", "decade"], "--time-range 'decade'"),
        (["search", "web", "q", "--config", "/nonexistent"], "--config /nonexistent"),
        (["search", "web", "q", "--assistant", "nobody"], "--assistant 'nobody'"),
        (["search"], "Missing argument"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    args: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(args, capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("agent-search: error:")
    assert needle in lines[0]
    assert "Traceback" not in err


def test_bad_config_file_exits_2_naming_file_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "search.yao").write_text('{"web": {"max_results": 0}}')
    code, _, err = run(["search", "web", "q", "--config", str(tmp_path)], capsys)
    assert code == 2 and "search.yao: web.max_results" in err


def test_json_output_is_one_result_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["search", "web", "q", "--config", str(tmp_path), "--json"], capsys)
    doc = json.loads(out)
    assert doc["type"] == "web" and doc["query"] == "q" and "items" in doc
    # exit status says whether the search succeeded
    assert (code == 0) == (doc["error"] is None)


def test_where_and_order_parsing() -> None:
    w = parse_where("price:<:100")
    assert (w.field, w.op, w.value) == ("price", "<", 100)
    assert parse_where("genre:in:Jazz,Blues").value == ["Jazz", "Blues"]
    assert parse_where('tags:in:["a","b"]').value == ["a", "b"]
    assert parse_where("name:like:%AC/DC%").value == "%AC/DC%"
    assert parse_where("deleted_at:is null").op == "is null"
    assert parse_order("price").order == "desc"
    assert parse_order("price:ASC").order == "asc"


def test_console_script_entry_point_runs() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "agent_search", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert proc.returncode == 0 and "search" in proc.stdout


def test_version_flag(capsys: pytest.CaptureFixture[str]) -> None:
    from agent_search import __version__

    code, out, _ = run(["--version"], capsys)
    assert code == 0 and out.strip() == f"agent-search {__version__}"


def _notes_db(tmp_path: Path) -> Path:
    import sqlite3

    db = tmp_path / "notes.db"
    with sqlite3.connect(db) as conn:
        conn.execute("create table notes (id integer primary key, title text, "
                     "__yao_created_by text, __yao_team_id text, public integer)")
        conn.executemany("insert into notes values (?, ?, ?, ?, ?)", [
            (1, "alpha plan", "u1", "t1", 0), (2, "beta plan", "u2", "t2", 0),
            (3, "gamma plan", "u2", "t2", 1)])
    return db


@pytest.mark.parametrize(("identity", "titles"), [
    ([], {"gamma plan"}),
    (["--user", "u1"], {"alpha plan", "gamma plan"}),
    (["--user", "u2", "--team", "t2"], {"beta plan", "gamma plan"}),
])
def test_user_and_team_flags_say_who_is_asking(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], identity: list[str],
        titles: set[str]) -> None:
    db = _notes_db(tmp_path)
    code, out, _ = run(["search", "db", "plan", "--model", "notes", "--db-url", str(db),
                        "--json", *identity], capsys)
    assert code == 0
    assert {i["title"] for i in json.loads(out)["items"]} == titles


@pytest.mark.parametrize("bad", ["", " u1", "u1\n", "u" * 200])
def test_bad_identity_exits_2(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["search", "web", "q", "--user", bad], capsys)
    assert code == 2 and "--user" in err


def test_human_output_shows_plan_total_and_warnings(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = _notes_db(tmp_path)
    code, out, _ = run(["search", "db", "plan", "--db-url", str(db), "--user", "u1",
                        "--limit", "1"], capsys)
    assert code == 0
    assert "total: 2 matches, 1 shown" in out
    assert "plan:" in out
    assert "warning:" in out  # no model named: the search says it searched every table
