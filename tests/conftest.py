"""Fixtures shared by every test folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .support.local_http import LocalServer

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


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
