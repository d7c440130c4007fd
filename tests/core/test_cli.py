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
