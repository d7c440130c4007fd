"""The tests that need a program pip cannot install (Chromium for the page, PostgreSQL for
the shared record store) are skipped with a one-line reason on a machine without it, and
fail under CI (``CI=true``), where nothing may be skipped for that reason. Seen for real:
the suite is run again with both pointed at missing paths."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NEEDS_PROGRAMS = ["tests/server/test_page.py", "tests/server/test_records_db.py"]


def _run_without_programs(ci: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env |= {"AGENT_SEARCH_TEST_CHROMIUM": "/nonexistent/chromium",
            "AGENT_SEARCH_TEST_PG_BINDIR": "/nonexistent/postgresql/bin"}
    if ci:
        env["CI"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
         *NEEDS_PROGRAMS], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
        check=False)


@pytest.mark.parametrize("ci", [False, True], ids=["user", "ci"])
def test_missing_programs_skip_for_users_and_fail_under_ci(ci: bool) -> None:
    run = _run_without_programs(ci)
    summary = run.stdout.strip().splitlines()[-1]
    if ci:
        assert run.returncode != 0, run.stdout[-2000:]
        assert "4 passed" not in summary and "skipped" not in summary, summary
        assert "CI=true: the page tests must run" in run.stdout
        assert "CI=true: PostgreSQL tests must run" in run.stdout
    else:
        assert run.returncode == 0, run.stdout[-2000:]
        assert summary.startswith("4 skipped"), summary
        assert "/nonexistent/chromium is missing (install it with .ci/chromium.sh" in run.stdout
        assert "PostgreSQL not available: initdb/pg_ctl not found" in run.stdout
