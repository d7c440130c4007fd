"""``agent-search kb ingest|list|drop`` — build and manage knowledge-base collections."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import anyio
import typer

from agent_search.cli.app import app, console, err_console, fail, print_json, progress_bar
from agent_search.config import SearchConfig, load_config
from agent_search.errors import ConfigError

kb_app = typer.Typer(help="Manage knowledge-base collections (ingest, list, drop).",
                     no_args_is_help=True)
app.add_typer(kb_app, name="kb")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]
ConfigOpt = Annotated[Path | None, typer.Option("--config", help="Configuration folder.")]


def _config(config_dir: Path | None) -> SearchConfig:
    try:
        return load_config(config_dir)
    except ConfigError as exc:
        fail(str(exc))


@kb_app.command("ingest")
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders (.txt .md .html .pdf, "
                                                     "BEIR corpus.jsonl).")],
    collection: Annotated[str, typer.Option("--collection", "-c", help="Target collection.")],
    graph: Annotated[bool | None, typer.Option("--graph/--no-graph",
                                               help="Build the entity graph too.")] = None,
    config_dir: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Ingest files into a collection (created on first use). Re-ingesting replaces."""
    from agent_search.kb import StoreError, ingest_paths
    from agent_search.kb.embedder import EmbeddingError
    from agent_search.kb.ingest import CollectionMismatchError

    config = _config(config_dir)
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        fail(f"no such file or folder: {', '.join(missing)}")
    try:
        with progress_bar("embedding", enabled=not json_out) as on_progress:
            report = anyio.run(lambda: ingest_paths(config, paths, collection, graph=graph,
                                                    progress=on_progress))
    except (ValueError, CollectionMismatchError) as exc:
        fail(str(exc))
    except (StoreError, EmbeddingError) as exc:
        fail(str(exc), 1)
    if json_out:
        print_json(report.to_json())
    else:
        console.print(
            f"{report.collection}: {report.documents} document(s), {report.chunks} chunk(s) "
            f"from {report.files} file(s); embedded {report.embedded}, unchanged "
            f"{report.unchanged}, removed {report.deleted}; {report.seconds:.1f}s "
            f"({report.docs_per_s:.1f} docs/s, peak RSS {report.peak_rss_mb:.0f} MB)",
            highlight=False)
        for skipped in report.skipped:
            err_console.print(f"skipped {skipped.source}: {skipped.reason}", highlight=False)
    if report.documents == 0 and report.skipped:
        raise typer.Exit(1)


@kb_app.command("list")
def list_(config_dir: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """List collections with their size and embedding model."""
    from agent_search.kb import StoreError, list_collections

    config = _config(config_dir)
    try:
        rows = anyio.run(lambda: list_collections(config))
    except StoreError as exc:
        fail(str(exc), 1)
    if json_out:
        print_json(rows)
        return
    if not rows:
        console.print("no collections")
    for row in rows:
        console.print(f"{row['name']}\t{row['points']} chunks\t"
                      f"{row.get('embedding_model', '?')}", highlight=False)


@kb_app.command("drop")
def drop(name: Annotated[str, typer.Argument(help="Collection to delete.")],
         config_dir: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """Delete a collection and its entity graph."""
    from agent_search.kb import StoreError, drop_collection

    config = _config(config_dir)
    try:
        dropped = anyio.run(lambda: drop_collection(config, name))
    except ValueError as exc:
        fail(str(exc))
    except StoreError as exc:
        fail(str(exc), 1)
    if not dropped:
        fail(f"collection {name!r} not found")
    if json_out:
        print_json({"dropped": name})
    else:
        console.print(f"dropped {name}", highlight=False)
