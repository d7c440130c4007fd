"""The ``agent-search`` command: the typer app and helpers shared by its sub-commands.

Sub-command modules (``search``, ``kb``, ``eval``, ``ask``, ``mcp``) attach themselves
to :data:`app` in ``agent_search/cli/__init__.py``. Every command takes ``--json``; bad
input exits 2 with one line naming what was wrong.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
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


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 chunk``, ``2 chunks``, ``0 chunks`` (``nouns`` for an irregular plural)."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"


MAX_IDENTITY_CHARS = 128


def check_identity(value: str | None, flag: str) -> str | None:
    """``--user`` / ``--team`` as given, or exit 2: an identity drives permission filters,
    so it must be exactly what the caller means (no padding, no control characters)."""
    if value is None:
        return None
    if not value or len(value) > MAX_IDENTITY_CHARS:
        fail(f"{flag}: expected 1..{MAX_IDENTITY_CHARS} characters")
    if value != value.strip() or not value.isprintable():
        fail(f"{flag} {value!r}: no leading/trailing spaces or control characters")
    return value


def print_json(data: Any) -> None:
    """One JSON document on stdout."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")


def print_json_line(data: Any) -> None:
    """One JSON line (for streams), flushed at once."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


@contextlib.contextmanager
def progress_bar(label: str, *, enabled: bool) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr for long work; yields ``update(done, total)``, which may
    be called from worker threads. Disabled (a no-op) for ``--json`` or without a TTY."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=err_console,
                        disable=not (enabled and sys.stderr.isatty()))
    task = progress.add_task(label, total=None)

    def update(done: int, total: int) -> None:
        progress.update(task, completed=done, total=total)

    with progress:
        yield update
