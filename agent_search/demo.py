"""``make demo``: build the demo's data from the project itself, then ask the demo assistant.

1. the sample shop database (products and orders, with permission columns) in
   ``$AGENT_SEARCH_HOME/agent.db``, generated here — no outside data;
2. the ``docs`` knowledge-base collection from the project's README and ``docs/``
   (idempotent: a second run re-embeds nothing that did not change);
3. ``agent-search ask`` on ``assistants/demo`` for a few questions, with live progress,
   auto search of kb, db and web (without the web provider's API key, web search is left
   out and a notice says once how to turn it on), and an answer with citations (offline
   extractive responder when no LLM is configured; a count question gets the count).

Run ``python -m agent_search.demo [QUESTION ...]`` from the project root.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from rich.console import Console

from agent_search.cli.app import plural, progress_bar
from agent_search.loader import load_config

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = (
    "How does agent-search keep citation ids unique across hooks and auto search?",
    "Which products under $50 are in stock?",
    "How many orders are there?",
)

console = Console()


def _knowledge_sources() -> list[Path]:
    """The README and the Markdown pages of ``docs/``: the text a user asks about. The
    folder's screenshot would be read by OCR, and a page shot in two columns reads as
    lines across both, which is noise beside the pages that say the same."""
    pages = sorted((ROOT / "docs").rglob("*.md")) if (ROOT / "docs").is_dir() else []
    return [p for p in [ROOT / "README.md", *pages] if p.exists()]


async def build_demo_data() -> None:
    """Create what the demo assistant searches; safe to run again."""
    from agent_search.db.sample import create_sample_database_async
    from agent_search.kb import ingest_paths

    config = load_config(ROOT / "config", assistant_dir=ROOT / "assistants" / "demo")
    config.home.mkdir(parents=True, exist_ok=True)
    db_path = config.home / "agent.db"
    if not db_path.exists():
        await create_sample_database_async(db_path)
        console.print(f"[green]✓[/green] sample database: {db_path}")
    else:
        console.print(f"[green]✓[/green] sample database already there: {db_path}")

    with progress_bar("ingesting docs (bytes)", enabled=True) as progress:
        report = await ingest_paths(config, _knowledge_sources(), "docs", progress=progress)
    console.print(
        f"[green]✓[/green] knowledge base 'docs': {plural(report.files, 'file')}, "
        f"{plural(report.chunks, 'chunk')} "
        f"({report.embedded} embedded, {report.unchanged} unchanged) in {report.seconds:.1f} s"
    )
    for skipped in report.skipped:
        console.print(f"  [yellow]skipped[/yellow] {skipped.source}: {skipped.reason}")


def main(argv: list[str] | None = None) -> int:
    questions = (sys.argv[1:] if argv is None else argv) or list(QUESTIONS)
    console.rule("agent-search demo: building the data")
    from agent_search.errors import AgentSearchError
    from agent_search.kb import EmbeddingError, StoreError

    try:
        anyio.run(build_demo_data)
    except (AgentSearchError, EmbeddingError, StoreError, OSError) as exc:
        # a set-up problem (missing model package, locked store, unwritable home): one line
        print(f"agent-search demo: {exc}", file=sys.stderr)
        return 1
    from agent_search.cli import app

    for question in questions:
        console.rule(f"ask: {question}")
        code = app(args=["ask", question, "--assistant", str(ROOT / "assistants" / "demo"),
                         "--config", str(ROOT / "config")], standalone_mode=False)
        if isinstance(code, int) and code:
            return code
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
