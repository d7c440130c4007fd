"""Database handlers for the tests: a handler on a URL with exact totals, the backends
the db tests run on, the demo assistant's committed models, and async set-up run from
synchronous (session) fixtures."""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_search.config import SearchConfig
from agent_search.db import DBHandler, create_handler

from .data import ROOT

__all__ = ["BACKENDS", "DEMO_MODELS", "copy_demo_assistant", "make_handler", "run_in_thread"]

DEMO_MODELS = ROOT / "assistants" / "demo" / "models"

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
"""The params of a fixture that runs its tests on both backends (PostgreSQL's marked)."""


def run_in_thread(fn: Callable[[], Awaitable[None]]) -> None:
    """Run async set-up in its own thread and loop: session fixtures may be first requested
    from inside a running event loop (module-scoped async fixtures)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(anyio.run, fn).result()


def make_handler(url: str, tmp_path: Path, *, assistant_dir: Path | None = None,
                 config_dir: Path | None = None, **db: Any) -> DBHandler:
    db.setdefault("count_max", 100_000)  # exact totals (the default cap is 1,000)
    config = SearchConfig(home=tmp_path / "home", db={"url": url, **db})
    return create_handler(config, config_dir=config_dir, assistant_dir=assistant_dir)


def copy_demo_assistant(root: Path) -> Path:
    """An assistant folder ``demo`` whose models are the committed sample definitions."""
    adir = root / "assistants" / "demo"
    shutil.copytree(DEMO_MODELS, adir / "models")
    return adir
