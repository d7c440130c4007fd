"""Fixtures shared by every test folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from .support.data import require_bench_data
from .support.local_http import LocalServer

# Fixtures several folders use, defined once: the throwaway PostgreSQL cluster (db, server
# and security tests run on it). Only the rootdir's conftest may name plugins.
pytest_plugins = ["tests.support.postgres"]

# Property tests everywhere: no per-example deadline (a loaded machine made a 0.06 ms
# example take 262 ms, and a deadline turned that into a failure; the tests bound their
# own time where it matters), and under CI the same examples every run, so a red CI is
# never a coin toss (tests/security/conftest.py builds its profiles on this one).
CI = os.environ.get("CI", "").lower() == "true"
settings.register_profile("suite", deadline=None, derandomize=CI)
settings.load_profile("suite")


def pytest_runtest_setup(item: pytest.Item) -> None:
    """``@pytest.mark.bench_data("set", ...)``: a test about the benchmark data in
    ``../shared/data`` skips with a one-line reason where it is absent (a user's clone)
    and fails under ``CI=true`` (tests/support/data.py). Every other test runs on data it
    makes or on the samples in ``tests/data``."""
    for marker in item.iter_markers("bench_data"):
        require_bench_data(*marker.args)


@pytest.fixture(scope="module")
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """The one event loop choice of the suite: asyncio (the db drivers are asyncio's), or
    the backend a test is parametrized with (tests/agent runs on trio too: its conftest).
    Module scope, so module-scoped async fixtures (one db handler per test module) can
    use it; anyio's own default would run every async test on trio as well."""
    return str(getattr(request, "param", "asyncio"))


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own $AGENT_SEARCH_HOME so nothing leaks between tests."""
    home = tmp_path / "home"
    monkeypatch.setenv("AGENT_SEARCH_HOME", str(home))
    return home


@pytest.fixture
def server() -> Iterator[LocalServer]:
    """A real HTTP server on 127.0.0.1; tests script its routes (see local_http.py)."""
    s = LocalServer().start()
    try:
        yield s
    finally:
        s.stop()
