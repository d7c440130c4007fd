"""The file types the kb reads are listed from the ingest's format table, never by hand:
``kb ingest --help``, the HTTP service's upload routes and docs/cli.md name every suffix
of ``FORMATS``, and the cheap list the help reads (``agent_search.kb.formats``, which
loads no reader) is that table's suffixes in its order."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_search.cli.app import app
from agent_search.kb._ingest import BINARY_SUFFIXES, FORMATS, TEXT_SUFFIXES
from agent_search.kb.formats import SUFFIXES, describe

ROOT = Path(__file__).resolve().parents[2]


def _lists(text: str, suffix: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(suffix)}(?!\w)", text) is not None


def test_the_cheap_list_is_the_format_table() -> None:
    assert tuple(FORMATS) == SUFFIXES


def test_describe_groups_by_kind() -> None:
    assert describe((".md", ".markdown", ".pdf")) == "Markdown .md .markdown, PDF (text layer) .pdf"
    assert describe((".xyz",)) == ".xyz"  # outside the table: alone, not dropped


def test_ingest_help_lists_every_format() -> None:
    result = CliRunner().invoke(app, ["kb", "ingest", "--help"], terminal_width=400,
                                env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    missing = [s for s in FORMATS if not _lists(result.output, s)]
    assert missing == []


def test_docs_list_every_format() -> None:
    row = next(line for line in (ROOT / "docs" / "cli.md").read_text().splitlines()
               if line.startswith("| `agent-search kb ingest PATH..."))
    assert [s for s in FORMATS if not _lists(row, s)] == []


def test_upload_routes_describe_what_they_take() -> None:
    pytest.importorskip("fastapi")
    from agent_search.server._kb_routes import kb_router

    descriptions = {route.path: route.description for route in kb_router.routes  # type: ignore[attr-defined]
                    if getattr(route, "methods", None) == {"POST"}}
    text = descriptions["/v1/kb/{collection}/documents"]
    files = descriptions["/v1/kb/{collection}/files"]
    assert [s for s in TEXT_SUFFIXES if not _lists(text, s)] == []
    assert [s for s in BINARY_SUFFIXES if _lists(text, s)] == []
    assert [s for s in TEXT_SUFFIXES + BINARY_SUFFIXES if not _lists(files, s)] == []


def test_the_help_loads_no_reader(tmp_path: Path) -> None:
    code = ("import sys\nfrom agent_search.cli import main\n"
            "try:\n    main(['kb', 'ingest', '--help'])\nexcept SystemExit:\n    pass\n"
            "print([m for m in sys.modules if m.startswith('agent_search.kb._ingest')])")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False,
                          env={"PYTHONPATH": str(ROOT), "AGENT_SEARCH_HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"
