"""Command line entry point: ``agent-search``."""

from __future__ import annotations

import functools
import inspect
import sys
from typing import Annotated, Any

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


def _paragraphs(text: str | None) -> str | None:
    """Help text with each paragraph on one line, so the terminal wraps it evenly
    (docstrings are wrapped at 90 columns; wrapped again, they come out ragged)."""
    if not text:
        return text
    blocks = [" ".join(block.split()) for block in inspect.cleandoc(text).split("\n\n")]
    return "\n\n".join(b for b in blocks if b)


def _tidy(command: Any) -> Any:
    """The help of ``command`` and its sub-commands as a reader wants it: a plain flag
    (``--json``, ``--help``) shows no ``<bool>`` type, and help paragraphs wrap evenly.
    Duck-typed: typer builds the commands with the click it ships."""
    command.help = _paragraphs(command.help)
    command.short_help = _paragraphs(command.short_help)
    for param in command.params:
        _tidy_option(param)
    help_option = command.get_help_option

    def get_help_option(ctx: Any) -> Any:
        return _tidy_option(help_option(ctx))

    command.get_help_option = get_help_option
    for sub in getattr(command, "commands", {}).values():
        _tidy(sub)
    return command


def _tidy_option(param: Any) -> Any:
    if param is not None and getattr(param, "param_type_name", "") == "option":
        if getattr(param, "is_flag", False):
            param.metavar = ""
        param.help = _paragraphs(param.help)
    return param


@functools.cache
def command() -> Any:
    """The click command of :data:`app`, built once with every sub-command attached."""
    return _tidy(typer.main.get_command(app))


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
        code = command().main(args=argv, prog_name="agent-search", standalone_mode=False)
    except TyperException as exc:
        message = _usage_error(exc)
        if message:  # empty when the help was shown for a bare command
            print(f"agent-search: error: {message}", file=sys.stderr)
        sys.exit(int(getattr(exc, "exit_code", 2) or 2))
    except typer.Abort:
        print("agent-search: aborted", file=sys.stderr)
        sys.exit(130)
    except KeyboardInterrupt:
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)


def _usage_error(exc: TyperException) -> str:
    """A usage error as one line, led by the flag or argument it is about when the
    framework's message does not name it."""
    format_message = getattr(exc, "format_message", None)
    message = str(format_message() if callable(format_message) else exc)
    param = getattr(exc, "param", None)
    opts = getattr(param, "opts", None) or []
    name = opts[0] if opts else getattr(param, "name", None)
    if getattr(param, "param_type_name", "") == "argument":
        name = getattr(param, "metavar", None) or name  # the name its help shows
    if name and str(name) not in message:
        message = f"{name}: {message}"
    return " ".join(message.split())


__all__ = ["app", "command", "main"]
