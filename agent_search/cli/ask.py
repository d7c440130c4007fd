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

from agent_search.cli.app import app, check_identity, fail, plural, print_json_line
from agent_search.cli.search import resolve_assistant, resolve_config_dir
from agent_search.errors import AgentSearchError

if TYPE_CHECKING:
    from agent_search.agent import Assistant, Options
    from agent_search.events import (
        Citations,
        Done,
        Event,
        Grounding,
        Notice,
        SearchComplete,
        SearchResultEvent,
        SearchStart,
        TextDelta,
    )

_NOTICES_SHOWN: set[str] = set()
"""Notices already printed by this process (``make demo`` asks several questions in one
process: "web search is off" is said once, not on every question)."""


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
        handler = getattr(self, f"_on_{event.event}", None)
        if handler is not None:
            handler(event)
        self._spinner()

    def _on_search_start(self, event: SearchStart) -> None:
        self.queries[event.id] = event
        self.running += 1
        self.console.print(
            f"🔍 Searching {event.type} [bold]\"{escape(event.query)}\"[/bold]...")

    def _on_search_result(self, event: SearchResultEvent) -> None:
        self.results.setdefault(event.id, []).append(event)

    def _on_notice(self, event: Notice) -> None:
        if event.kind not in _NOTICES_SHOWN:
            _NOTICES_SHOWN.add(event.kind)
            self.console.print(f"ℹ️  {escape(event.text)}", style="dim")

    def _on_search_complete(self, event: SearchComplete) -> None:
        from agent_search.citation import format_marker

        c = self.console
        self.running = max(0, self.running - 1)
        items = self.results.pop(event.id, [])
        if event.error:
            c.print(f"⚠️  search failed: {escape(event.error)}", style="yellow")
            return
        c.print(f"📄 Found {plural(len(items), 'result')} ({event.type})"
                + (":" if items else ""))
        for n, r in enumerate(items, 1):
            marker = format_marker(r.citation_id or "?", self.fmt)
            c.print(f"   {n}. [cyan]{escape(marker)}[/cyan] - {escape(r.title or r.url or '')}")
        c.print(f"✅ Search complete ({event.duration_ms / 1000:.1f}s)")

    def _on_text(self, event: TextDelta) -> None:
        if not self.in_text:
            self.running = 0
            self._spinner()
            self.console.print()
            self.in_text = True
        sys.stdout.write(event.text)
        sys.stdout.flush()

    def _on_citations(self, event: Citations) -> None:
        from agent_search.citation import format_marker

        if self.in_text:
            sys.stdout.write("\n")
        if event.unknown:
            unknown = ", ".join(format_marker(u, self.fmt) for u in event.unknown)
            self.console.print(f"(unknown citations in the answer: {escape(unknown)})",
                               style="yellow")

    def _on_grounding(self, event: Grounding) -> None:
        unchecked = [e for e in event.grounding if e.get("status") == "unchecked"]
        for entry in event.grounding:
            if entry.get("status") == "unsupported":
                self.console.print(f"⚠️  unsupported: “{escape(str(entry.get('text', '')))}” — "
                                   f"{escape(str(entry.get('reason', '')))}", style="yellow")
        if unchecked:  # the check could not run on them: said once, never read as "fine"
            self.console.print(f"⚠️  {plural(len(unchecked), 'sentence')} not checked against "
                               f"the references: {escape(str(unchecked[0].get('reason', '')))}",
                               style="yellow")

    def _on_done(self, event: Done) -> None:
        from agent_search.citation import format_marker

        if not event.references:
            return
        self.console.print("\n[bold]References[/bold]")
        for ref in event.references:
            marker = format_marker(str(ref.get("citation_id")), self.fmt)
            where = ref.get("url") or ref.get("collection") or ref.get("model") or ""
            title = ref.get("title") or ""
            self.console.print(f"  [cyan]{escape(marker)}[/cyan] {escape(title)}"
                               + (f" — {escape(str(where))}" if where else ""))

    def close(self) -> None:
        self.running = 0
        self._spinner()


async def _ask(assistant: Assistant, question: str, options: Options, as_json: bool) -> int:
    from agent_search.events import Done, SearchComplete, TextDelta

    failed: list[str] = []
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
                elif isinstance(event, SearchComplete) and event.error:
                    failed.append(event.error)
    finally:
        if display is not None:
            display.close()
        await assistant.aclose()
    _held_hint(failed)
    return _finish(error, text)


def _held_hint(failed: list[str]) -> None:
    """A search that failed because a running service holds the knowledge base: say how
    to ask that service instead."""
    from agent_search.cli._kb_remote import held_by_server

    held = next((e for e in failed if "open in another process" in e), None)
    if held is not None:
        print("agent-search: hint: the knowledge base is open in another process"
              + held_by_server(held).replace("send the work to it with", "ask it with"),
              file=sys.stderr)


def _ask_remote(server: str, assistant: str, question: str, api_key_env: str,
                search: bool | None, as_json: bool) -> int:
    """``--server``: the question streamed from the service, shown as a local one."""
    from agent_search.cli._ask_remote import RemoteAskError, events

    display = None if as_json else _Display(Console(highlight=False), "#ref:{id}")
    error: str | None = None
    text = False
    try:
        for event in events(server, assistant, question, api_key_env, search):
            if display is None:
                print_json_line(event.to_dict())
            else:
                display.show(event)  # type: ignore[arg-type]  # an event's fields
            text = text or event.event == "text"
            error = event.error if event.event == "done" else error
    except RemoteAskError as exc:
        fail(str(exc), 1)
    finally:
        if display is not None:
            display.close()
    return _finish(error, text)


def _finish(error: str | None, text: bool) -> int:
    """The exit code of an answer that ended with ``error`` (said on stderr): a warning
    after some text, an error without any."""
    if error:
        print(f"agent-search: {'warning' if text else 'error'}: {' '.join(error.split())}",
              file=sys.stderr)
        return 0 if text else 1
    return 0


def _load_checked(assistant: str | None, db_url: str | None, collections: list[str],
                  config: Path | None, connector: str | None) -> Assistant:
    """The assistant ``ask`` loads, its ``--connector`` checked: a clear error (and the
    assistant closed) for a connector it does not have."""
    try:
        loaded = _load(assistant, db_url, collections, resolve_config_dir(config))
    except (ValueError, AgentSearchError) as exc:
        fail(str(exc))
    problem = loaded.settings.connector_problem(connector) if connector is not None else None
    if problem is not None:
        hint = f" — did you mean {problem[1]!r}?" if problem[1] else ""
        anyio.run(loaded.aclose)
        fail(f"--connector: {problem[0]}{hint}")
    return loaded


def _load(assistant: str | None, db_url: str | None, collections: list[str],
          cdir: Path | None) -> Assistant:
    """The assistant to ask: the one named (its database and collections replaced by the
    flags), or one made of the flags alone, or the demo."""
    from agent_search.agent import Assistant

    if assistant is None and (db_url is not None or collections):
        return Assistant.for_sources(db_url=db_url, collections=collections, config_dir=cdir)
    path = resolve_assistant(assistant or "demo", cdir)
    assert path is not None  # an id was given
    overrides: dict[str, Any] = {}
    if db_url:
        overrides["db"] = {"url": db_url}
    if collections:
        overrides["kb"] = {"enabled": True, "collections": collections}
    return Assistant.load(path, config_dir=cdir, overrides=overrides or None)


def _close_kb_stores() -> None:
    """Release the local knowledge base (Qdrant local mode holds a lock and complains when
    it is only closed at interpreter shutdown)."""
    try:
        from agent_search.kb import close_stores
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
    collection: Annotated[list[str] | None, typer.Option(
        "--collection", "-c", help="Ask your knowledge-base collection (repeat for more), "
        "with no assistant folder; with --assistant, instead of its collections")] = None,
    search: Annotated[bool | None, typer.Option(
        "--search/--no-search", help="Force auto search on or off (default: the "
        "assistant's config)")] = None,
    research: Annotated[bool, typer.Option(
        "--research", help="Search in rounds until every part of the question is covered "
        "or a research budget is spent")] = False,
    config: Annotated[Path | None, typer.Option("--config", help="Config folder")] = None,
    connector: Annotated[str | None, typer.Option(
        "--connector", help="LLM connector from config/agent.yml ('offline' for none)")
    ] = None,
    user: Annotated[str | None, typer.Option(
        "--user", help="Who is asking (user id for permission filters)")] = None,
    team: Annotated[str | None, typer.Option(
        "--team", help="The asker's team id (permission filters)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines of events")] = False,
    server: Annotated[str | None, typer.Option(
        "--server", help="Ask a running 'agent-search serve' at this URL (it holds the "
                         "data home's knowledge base while it runs)")] = None,
    api_key_env: Annotated[str, typer.Option(
        "--api-key-env", help="Environment variable holding the API key for --server"
    )] = "AGENT_SEARCH_API_KEY",
) -> None:
    """Ask an assistant; streams search progress, the answer and its references."""
    from agent_search.agent import Options

    user, team = check_identity(user, "--user"), check_identity(team, "--team")
    if not question.strip():
        fail("QUESTION must not be empty")
    if server is not None:
        if any((db_url, collection, config, connector, user, team)):
            fail("--server: the server's assistant answers, as the API key's identity; "
                 "leave out --db-url/--collection/--config/--connector/--user/--team")
        code = _ask_remote(server, assistant or "demo", question, api_key_env, search,
                           as_json)
        if code:
            raise typer.Exit(code)
        return
    loaded = _load_checked(assistant, db_url, collection or [], config, connector)
    try:
        code = anyio.run(_ask, loaded, question, Options(search=search, connector=connector,
                                                    user_id=user, team_id=team,
                                                    research=research),
                         as_json)
    finally:
        _close_kb_stores()
    if code:
        raise typer.Exit(code)
