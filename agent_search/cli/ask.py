"""``agent-search ask QUESTION`` — run an assistant's ``stream()``.

On a terminal: live progress like the spec's "Client Display Example" (searching…,
results with citation ids, complete with time), then the streamed answer and the
references it used. With ``--json``: one JSON line per output event.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import typer
from rich.console import Console
from rich.markup import escape

from agent_search.cli.app import app, check_identity, fail, print_json_line
from agent_search.cli.search import resolve_assistant, resolve_config_dir
from agent_search.errors import AgentSearchError

if TYPE_CHECKING:
    from agent_search.agent import Assistant, Options
    from agent_search.events import Event, SearchResultEvent, SearchStart


class _Display:
    """Human-readable progress: one block per search, then the answer."""

    def __init__(self, console: Console, fmt: str) -> None:
        self.console = console
        self.fmt = fmt
        self.results: dict[str, list[SearchResultEvent]] = {}
        self.queries: dict[str, SearchStart] = {}
        self.in_text = False
        self.running = 0
        self.status: Any = None

    def _spinner(self) -> None:
        if not self.console.is_terminal:
            return
        if self.running and self.status is None:
            self.status = self.console.status("Searching…")
            self.status.start()
        elif not self.running and self.status is not None:
            self.status.stop()
            self.status = None

    def show(self, event: Event) -> None:
        from agent_search.citation import format_marker
        from agent_search.events import (
            Citations,
            Done,
            Grounding,
            SearchComplete,
            SearchResultEvent,
            SearchStart,
            TextDelta,
        )

        c = self.console
        if isinstance(event, SearchStart):
            self.queries[event.id] = event
            self.running += 1
            c.print(f"🔍 Searching {event.type} [bold]\"{escape(event.query)}\"[/bold]...")
        elif isinstance(event, SearchResultEvent):
            self.results.setdefault(event.id, []).append(event)
        elif isinstance(event, SearchComplete):
            self.running = max(0, self.running - 1)
            items = self.results.pop(event.id, [])
            seconds = event.duration_ms / 1000
            if event.error:
                c.print(f"⚠️  search failed: {escape(event.error)}", style="yellow")
            else:
                c.print(f"📄 Found {len(items)} results ({event.type}):")
                for n, r in enumerate(items, 1):
                    marker = format_marker(r.citation_id or "?", self.fmt)
                    title = r.title or r.url or ""
                    c.print(f"   {n}. [cyan]{escape(marker)}[/cyan] - {escape(title)}")
                c.print(f"✅ Search complete ({seconds:.1f}s)")
        elif isinstance(event, TextDelta):
            if not self.in_text:
                self.running = 0
                self._spinner()
                c.print()
                self.in_text = True
            sys.stdout.write(event.text)
            sys.stdout.flush()
        elif isinstance(event, Citations):
            if self.in_text:
                sys.stdout.write("\n")
            if event.unknown:
                unknown = ", ".join(format_marker(u, self.fmt) for u in event.unknown)
                c.print(f"(unknown citations in the answer: {escape(unknown)})", style="yellow")
        elif isinstance(event, Grounding):
            for entry in event.grounding:
                if entry.get("status") == "unsupported":
                    c.print(f"⚠️  unsupported: “{escape(str(entry.get('text', '')))}” — "
                            f"{escape(str(entry.get('reason', '')))}", style="yellow")
        elif isinstance(event, Done) and event.references:
            c.print("\n[bold]References[/bold]")
            for ref in event.references:
                marker = format_marker(str(ref.get("citation_id")), self.fmt)
                where = ref.get("url") or ref.get("collection") or ref.get("model") or ""
                title = ref.get("title") or ""
                c.print(f"  [cyan]{escape(marker)}[/cyan] {escape(title)}"
                        + (f" — {escape(str(where))}" if where else ""))
        self._spinner()

    def close(self) -> None:
        self.running = 0
        self._spinner()


async def _ask(assistant: Assistant, question: str, options: Options, as_json: bool) -> int:
    from agent_search.events import Done, TextDelta

    display = None if as_json else _Display(Console(highlight=False),
                                            assistant.searcher.config.citation.format)
    error: str | None = None
    text = False
    try:
        async with assistant.run_stream([{"role": "user", "content": question}],
                                        options) as events:
            async for event in events:
                if as_json:
                    print_json_line(event.to_dict())
                else:
                    assert display is not None
                    display.show(event)
                if isinstance(event, TextDelta):
                    text = True
                elif isinstance(event, Done):
                    error = event.error
    finally:
        if display is not None:
            display.close()
        await assistant.aclose()
    if error:
        print(f"agent-search: {'warning' if text else 'error'}: {' '.join(error.split())}",
              file=sys.stderr)
        return 0 if text else 1
    return 0


def _close_kb_stores() -> None:
    """Release the local knowledge base (Qdrant local mode holds a lock and complains when
    it is only closed at interpreter shutdown)."""
    try:
        from agent_search.kb._store import close_stores
    except ImportError:
        return
    close_stores()


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question to ask the assistant")],
    assistant: Annotated[str | None, typer.Option(
        "--assistant", "-a", help="Assistant id (assistants/<id>) or folder [default: demo]")
    ] = None,
    db_url: Annotated[str | None, typer.Option(
        "--db-url", help="Ask your own database (SQLAlchemy URL), with no assistant folder; "
        "with --assistant, that assistant's database")] = None,
    search: Annotated[bool | None, typer.Option(
        "--search/--no-search", help="Force auto search on or off (default: the "
        "assistant's config)")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="Config folder")] = None,
    connector: Annotated[str | None, typer.Option(
        "--connector", help="LLM connector from config/agent.yml ('offline' for none)")
    ] = None,
    user: Annotated[str | None, typer.Option(
        "--user", help="Who is asking (user id for permission filters)")] = None,
    team: Annotated[str | None, typer.Option(
        "--team", help="The asker's team id (permission filters)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines of events")] = False,
) -> None:
    """Ask an assistant; streams search progress, the answer and its references."""
    from agent_search.agent import Assistant, Options

    user, team = check_identity(user, "--user"), check_identity(team, "--team")
    if not question.strip():
        fail("QUESTION must not be empty")
    try:
        cdir = resolve_config_dir(config)
        if db_url is not None and assistant is None:
            loaded = Assistant.for_database(db_url, config_dir=cdir)
        else:
            path = resolve_assistant(assistant or "demo", cdir)
            assert path is not None  # an id was given
            loaded = Assistant.load(path, config_dir=cdir,
                                    overrides={"db": {"url": db_url}} if db_url else None)
    except (ValueError, AgentSearchError) as exc:
        fail(str(exc))
    problem = loaded.settings.connector_problem(connector) if connector is not None else None
    if problem is not None:
        hint = f" — did you mean {problem[1]!r}?" if problem[1] else ""
        anyio.run(loaded.aclose)
        fail(f"--connector: {problem[0]}{hint}")
    try:
        code = anyio.run(_ask, loaded, question, Options(search=search, connector=connector,
                                                    user_id=user, team_id=team),
                         as_json)
    finally:
        _close_kb_stores()
    if code:
        raise typer.Exit(code)
