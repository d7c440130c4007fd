"""Fixtures shared by every test folder."""

from __future__ import annotations

from pathlib import Path

import pytest

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
