"""The ``agent-search`` command: the typer app and helpers shared by its sub-commands.

Sub-command modules (``search``, ``kb``, ``eval``, ``ask``, ``mcp``) attach themselves
to :data:`app` in ``agent_search/cli/__init__.py``. Every command takes ``--json``; bad
input exits 2 with one line naming what was wrong.
"""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer
from rich.console import Console

app = typer.Typer(
    name="agent-search",
    help="Search layer for AI agents: web, knowledge-base and database search.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

console = Console()
err_console = Console(stderr=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one line to stderr and exit (2 = bad input, 1 = the operation failed)."""
    line = " ".join(str(message).split())
    print(f"agent-search: error: {line}", file=sys.stderr)
    raise typer.Exit(code)


def print_json(data: Any) -> None:
    """One JSON document on stdout."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")


def print_json_line(data: Any) -> None:
    """One JSON line (for streams), flushed at once."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()
