"""Where the tests' data comes from: the repository, never ``../shared``.

A user's clone has only the repository, so every test runs on data it makes or on the
small redistributable samples in ``tests/data/`` (each folder has a ``SOURCE.md``:
origin, licence, attribution). The one exception is a test *about* the benchmark data
(``../shared/data``, beside the project root on the developers' machines and in CI):
it is marked ``@pytest.mark.bench_data("<set>", ...)`` (or reads the path through
:func:`bench_data`), and then

* skips with a one-line reason when the set is absent (a user's clone), and
* fails under ``CI=true``, where the data is laid beside the clone, so a CI run that
  silently skipped it cannot pass.

The marker is enforced by ``tests/conftest.py`` (``pytest_runtest_setup``).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEST_DATA = ROOT / "tests" / "data"
"""The samples shipped with the repository."""

BENCH_DATA = ROOT.parent / "shared" / "data"
"""The benchmark data; only ``bench/`` and tests marked ``bench_data`` read it."""

RECORDED = TEST_DATA / "web-search-api-responses"
"""Real responses of the web search APIs, recorded (see its SOURCE.md)."""

CHINOOK_SQL = TEST_DATA / "chinook" / "Chinook_Sqlite.sql"
"""The Chinook sample database as its SQLite script (see its SOURCE.md)."""

KB_SAMPLE = TEST_DATA / "kb-sample"
"""A small retrieval set in BEIR's layout, written for the tests (see its SOURCE.md)."""


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def missing_bench_data(*names: str) -> str | None:
    """The one-line reason a test of benchmark sets ``names`` cannot run here, or None."""
    absent = [n for n in names if not (BENCH_DATA / n).exists()]
    if not absent:
        return None
    return f"benchmark data absent: {', '.join(absent)} (not in {BENCH_DATA})"


def require_bench_data(*names: str) -> None:
    """Skip (fail under ``CI=true``) unless every set in ``names`` is in ``../shared/data``."""
    reason = missing_bench_data(*names)
    if reason is None:
        return
    if in_ci():
        pytest.fail(f"{reason}; CI=true lays it beside the clone, so it must be there")
    pytest.skip(reason)


def bench_data(name: str) -> Path:
    """The folder of benchmark set ``name``, for a fixture or test about it (skips or fails
    as :func:`require_bench_data` says when it is absent)."""
    require_bench_data(name)
    return BENCH_DATA / name


def build_chinook(target: Path) -> Path:
    """Chinook as a SQLite file at ``target``, built from the shipped script (~1 s): the
    same tables, rows and schema as the project's ``Chinook_Sqlite.sqlite`` release."""
    script = CHINOOK_SQL.read_text(encoding="utf-8-sig")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.unlink(missing_ok=True)
    with sqlite3.connect(tmp) as conn:
        conn.executescript(script)
    conn.close()
    tmp.replace(target)
    return target
