"""Command line entry point: ``agent-search``."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from typer.exceptions import TyperException

from agent_search._text import surrogate_message
from agent_search.cli import ask as _ask  # noqa: F401  (registers the command)
from agent_search.cli import eval as _eval  # noqa: F401  (registers the command)
from agent_search.cli import kb as _kb  # noqa: F401  (registers the command)
from agent_search.cli import mcp as _mcp  # noqa: F401  (registers the command)
from agent_search.cli import search as _search  # noqa: F401  (registers the command)
from agent_search.cli import serve as _serve  # noqa: F401  (registers the command)
from agent_search.cli.app import app


def _print_version(value: bool) -> None:
    if value:
        from agent_search import __version__

        print(f"agent-search {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[bool, typer.Option(
        "--version", callback=_print_version, is_eager=True,
        help="Print the version and exit")] = False,
) -> None:
    """Search layer for AI agents: web, knowledge-base and database search."""


def main(argv: list[str] | None = None) -> None:
    """Run the CLI. Usage errors print one line naming the bad flag or value and exit 2
    (instead of the framework's boxed, multi-line error). An argument that is not valid
    UTF-8 (it reaches Python as lone surrogates) is refused the same way."""
    args = sys.argv[1:] if argv is None else argv
    for i, arg in enumerate(args, start=1):
        problem = surrogate_message(arg, f"argument {i}")
        if problem:
            print(f"agent-search: error: {problem}", file=sys.stderr)
            sys.exit(2)
    try:
        code = app(args=argv, standalone_mode=False)
    except TyperException as exc:
        format_message = getattr(exc, "format_message", None)
        message = format_message() if callable(format_message) else str(exc)
        param = getattr(exc, "param", None)
        opts = getattr(param, "opts", None) or []
        name = opts[0] if opts else getattr(param, "name", None)
        if name and str(name) not in message:
            message = f"{name}: {message}"
        if str(message).strip():  # empty when the help was shown for a bare command
            print(f"agent-search: error: {' '.join(str(message).split())}", file=sys.stderr)
        sys.exit(int(getattr(exc, "exit_code", 2) or 2))
    except typer.Abort:
        print("agent-search: aborted", file=sys.stderr)
        sys.exit(130)
    except KeyboardInterrupt:
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)


__all__ = ["app", "main"]
