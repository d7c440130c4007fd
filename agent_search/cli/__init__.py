"""Command line entry point: ``agent-search``."""

from __future__ import annotations

from agent_search.cli import search as _search  # noqa: F401  (registers the command)
from agent_search.cli.app import app


def main() -> None:
    app()


__all__ = ["app", "main"]
