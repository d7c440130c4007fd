"""``agent-search kb ingest|list|rm|drop|prune-evals|migrate|repair`` — build and manage
knowledge-base collections and their documents.

``kb ingest`` shows progress on stderr while it works: a live bar on a terminal, else (a
pipe, a log, CI) one line at least every :data:`PROGRESS_INTERVAL` seconds; ``--json``
keeps stdout for the one JSON document either way.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, NoReturn

import anyio
import typer

from agent_search.cli.app import app, console, err_console, fail, plural, print_json
from agent_search.errors import ConfigError
from agent_search.kb.formats import describe

if TYPE_CHECKING:
    from agent_search.config import SearchConfig

kb_app = typer.Typer(help="Manage knowledge-base collections and their documents (ingest, "
                          "list, rm, drop, prune-evals, migrate, repair).",
                     no_args_is_help=True)
app.add_typer(kb_app, name="kb")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]
ConfigOpt = Annotated[Path | None, typer.Option("--config", help="Configuration folder.")]
ServerOpt = Annotated[str | None, typer.Option(
    "--server", help="Send the work to a running 'agent-search serve' at this URL (text "
                     "documents; the API key's identity owns them).")]
KeyEnvOpt = Annotated[str, typer.Option(
    "--api-key-env", help="Environment variable holding the API key for --server.")]


PROGRESS_INTERVAL = 10.0
"""Seconds between progress lines when stderr is not a terminal."""


@contextlib.contextmanager
def work_progress(label: str, *, unit: Literal["bytes", "items"] = "bytes"
                  ) -> Iterator[Callable[[int, int], None]]:
    """Progress of long work on stderr; yields ``update(done, total)`` (bytes, or items
    with ``unit="items"``), which may be called from worker threads. A terminal gets a
    live bar; anything else a line when the work starts, then at least every
    :data:`PROGRESS_INTERVAL` seconds while it runs (from a timer, so a slow batch still
    shows the process is alive), and one at the end."""
    count = _size if unit == "bytes" else str
    if sys.stderr.isatty():
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        amount = DownloadColumn() if unit == "bytes" else MofNCompleteColumn()
        bar = Progress(TextColumn(label), BarColumn(), amount, TimeElapsedColumn(),
                       TimeRemainingColumn(), console=err_console)
        task = bar.add_task(label, total=None)

        def update_bar(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        with bar:
            yield update_bar
        return
    state = {"done": 0, "total": -1}
    lock = threading.Lock()
    stop = threading.Event()
    started = time.monotonic()

    def line() -> None:
        with lock:
            done, total = state["done"], state["total"]
        elapsed = int(time.monotonic() - started)
        where = f"{count(done)} of {count(total)} ({done * 100 // max(total, 1)}%)" \
            if total >= 0 else "starting"
        print(f"agent-search: {label}: {where}, {elapsed // 60}m{elapsed % 60:02d}s",
              file=sys.stderr, flush=True)

    def update(done: int, total: int) -> None:
        with lock:
            first = state["total"] < 0
            state["done"], state["total"] = max(done, state["done"]), total
        if first and total > 0:
            line()

    def beat() -> None:
        while not stop.wait(PROGRESS_INTERVAL):
            if state["total"] > 0 and state["done"] < state["total"]:
                line()

    timer = threading.Thread(target=beat, name="kb-progress", daemon=True)
    timer.start()
    try:
        yield update
    finally:
        stop.set()
        timer.join()
        if state["total"] > 0:
            line()


def _store_failed(exc: Exception) -> NoReturn:
    """Exit with the store's error: 2 for a collection that does not exist, else 1, with
    the way out when a running 'agent-search serve' holds the store."""
    from agent_search.cli._kb_remote import held_by_server
    from agent_search.kb import CollectionNotFound, StoreLockedError

    if isinstance(exc, CollectionNotFound):
        fail(str(exc))
    hint = held_by_server(str(exc)) if isinstance(exc, StoreLockedError) else ""
    fail(str(exc) + hint, 1)


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"


def _config(config_dir: Path | None) -> SearchConfig:
    """``--config``, else the project's configuration folder (as every command finds
    it), validated: a typo in any of its files is one line and exit 2."""
    from agent_search._builtins import check_builtin_sections
    from agent_search.cli.search import resolve_config_dir
    from agent_search.loader import load_config

    try:
        config = load_config(resolve_config_dir(config_dir))
        check_builtin_sections(config)
    except (ConfigError, ValueError) as exc:
        fail(str(exc))
    return config


@kb_app.command("ingest")
def ingest(
    paths: Annotated[list[Path], typer.Argument(help=f"Files or folders ({describe()}).")],
    collection: Annotated[str, typer.Option("--collection", "-c", help="Target collection.")],
    graph: Annotated[bool | None, typer.Option("--graph/--no-graph",
                                               help="Build the entity graph too.")] = None,
    user: Annotated[str | None, typer.Option(
        "--user", help="Owner of the documents (only they, and their team, read them).")] = None,
    team: Annotated[str | None, typer.Option(
        "--team", help="Team of the documents (its members read them).")] = None,
    share: Annotated[str | None, typer.Option(
        "--share", help="'team' (default with --team) or 'private' (the owner only).")] = None,
    public: Annotated[bool, typer.Option(
        "--public", help="Readable by everyone although owned.")] = False,
    keep_missing: Annotated[bool, typer.Option(
        "--keep-missing", help="Keep the documents of a folder whose file is gone.")] = False,
    server: ServerOpt = None,
    api_key_env: KeyEnvOpt = "AGENT_SEARCH_API_KEY",
    config_dir: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Ingest files into a collection (created on first use).

    A folder is mirrored: documents ingested from it (by the same owner) whose file is
    gone are removed and listed; --keep-missing keeps them. With --server too (the
    documents of the API key's owner and team).

    Without --user and --team the documents are public; with them, searches return them
    only to that user and (with --share team, the default with --team) the team.

    A file is one document however its path is written; re-ingesting adds, updates and
    removes chunks as the files changed and never duplicates. Files over kb.max_file_mb
    (default 20 MB) or beyond kb.max_run_mb (default 1000 MB) are skipped and reported."""
    from agent_search.kb import Access

    _check_ingest_options(paths, server, user or team or share or public)
    if server is not None:
        from agent_search.cli._kb_remote import client_root

        _ingest_remote(server, paths, collection, api_key_env, json_out,
                       mirror=not keep_missing, root=client_root(config_dir))
        return
    config = _config(config_dir)
    try:
        access = Access.of(user, team, public=public or None,
                           share=share)  # type: ignore[arg-type]  # checked by Access.of
    except ValueError as exc:
        fail(f"--user/--team/--share: {exc}")
    report = _ingest_local(config, paths, collection, graph=graph, access=access,
                           mirror=not keep_missing)
    if json_out:
        print_json(report.to_json())
    else:
        _print_report(report)
    if report.documents == 0 and report.skipped:
        raise typer.Exit(1)


def _ingest_local(config: SearchConfig, paths: list[Path], collection: str, *,
                  graph: bool | None, access: Any, mirror: bool) -> Any:
    """A local ingest's report, with the model prepared first and progress shown; a
    clear error (no traceback) when the input, the store or the embedder fails."""
    from agent_search.embedding import EmbeddingError
    from agent_search.kb import CollectionMismatchError, StoreError, ingest_paths

    try:
        _prepare_model(config)
        with work_progress("ingesting") as on_progress:
            return anyio.run(lambda: ingest_paths(config, paths, collection, graph=graph,
                                                  progress=on_progress, access=access,
                                                  mirror=mirror))
    except (ValueError, CollectionMismatchError) as exc:
        fail(str(exc))
    except (StoreError, EmbeddingError) as exc:
        _store_failed(exc)


def _prepare_model(config: SearchConfig) -> None:
    """The first ingest in a data home assembles the offline embedding model (~20 s):
    said, with a spinner on a terminal, rather than a silent wait before the progress."""
    from agent_search.embedding import get_embedder, model_prepared
    from agent_search.kb.settings import KBSettings

    settings = KBSettings.from_config(config)
    if model_prepared(settings, config.home):
        return
    text = (f"preparing the embedding model {settings.embedding_model} in "
            f"{config.home / 'models'} (once per data home, ~20 s)")
    err_console.print(text + "…", highlight=False, markup=False, soft_wrap=True)
    with err_console.status("preparing the embedding model…") if sys.stderr.isatty() \
            else contextlib.nullcontext():
        get_embedder(settings, config.home)


def _check_ingest_options(paths: list[Path], server: str | None, owner: object) -> None:
    """Fail on paths that do not exist, and on an owner given with --server, before any
    work."""
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        fail(f"no such file or folder: {', '.join(missing)}")
    if server is not None and owner:
        fail("--server: the API key decides the owner and team; leave out "
             "--user/--team/--share/--public")


def _print_report(report: Any) -> None:
    """A local ingest's report: its counts, then what happened to single files."""
    console.print(
        f"{report.collection}: {plural(report.documents, 'document')}, "
        f"{plural(report.chunks, 'chunk')} from {plural(report.files, 'file')}: "
        f"chunks added {report.added}, updated {report.updated}, "
        f"unchanged {report.unchanged}, removed {report.removed}; "
        f"{report.seconds:.1f}s ({report.docs_per_s:.1f} docs/s, peak RSS "
        f"{report.peak_rss_mb:.0f} MB)", highlight=False)
    _print_file_notes(report.to_json())


def _print_file_notes(out: dict[str, Any]) -> None:
    """What happened to single files (gone, so removed; skipped; read with a warning), from
    an ingest's JSON: a local report's and the server's have the same shape."""
    for source in out.get("missing", []):
        console.print(f"removed {source}: the file is gone", highlight=False, markup=False)
    for item in out.get("skipped", []):
        err_console.print(f"skipped {item['source']}: {item['reason']}", highlight=False,
                          markup=False)
    for item in out.get("warnings", []):
        err_console.print(f"warning {item['source']}: {item['message']}", highlight=False,
                          markup=False)


@kb_app.command("list")
def list_(collection: Annotated[str | None, typer.Argument(
              help="A collection: list its documents instead.")] = None,
          server: ServerOpt = None, api_key_env: KeyEnvOpt = "AGENT_SEARCH_API_KEY",
          limit: Annotated[int | None, typer.Option(
              "--limit", help="One page of this many documents (at most 1000), then the "
                              "cursor of the next; all pages without it.")] = None,
          cursor: Annotated[str | None, typer.Option(
              "--cursor", help="Where the page starts: the cursor the previous page "
                               "printed.")] = None,
          config_dir: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """List collections with their size and embedding model; those of eval retrieval
    (which searches never read) apart. With COLLECTION: its documents (source, chunks,
    who may read them, document id), page by page; with --server, those the API key may
    read."""
    from agent_search.cli._kb_list import list_documents
    from agent_search.kb import StoreError

    if collection is None and (limit is not None or cursor):
        fail("--limit and --cursor list the documents of one collection: give COLLECTION")
    if collection is None and server is not None:
        _collections_remote(server, api_key_env, json_out)
        return
    config = _config(config_dir) if server is None else None
    if collection is not None:
        try:
            list_documents(config, collection, server=server, api_key_env=api_key_env,
                           limit=limit, cursor=cursor, json_out=json_out)
        except StoreError as exc:  # the local store's, after the pages already printed
            _store_failed(exc)
        return
    assert config is not None
    _collections_local(config, json_out)


def _collections_local(config: SearchConfig, json_out: bool) -> None:
    """``kb list``: the collections of the data home."""
    from agent_search.kb import StoreError, list_collections

    try:
        rows = anyio.run(lambda: list_collections(config))
    except StoreError as exc:
        _store_failed(exc)
    if json_out:
        print_json(rows)
    else:
        _print_listing(rows, config.home)


def _collections_remote(server: str, api_key_env: str, json_out: bool) -> None:
    """``kb list --server URL``: the collections the API key can read there."""
    from agent_search.cli._kb_remote import RemoteError, collections_remote

    try:
        rows = collections_remote(server, api_key_env)
    except RemoteError as exc:
        fail(str(exc), 1)
    if json_out:
        print_json(rows)
        return
    err_console.print(f"server: {server}", highlight=False, markup=False, soft_wrap=True)
    if not rows:
        console.print("no collections")
    _print_collections(rows)


def _print_listing(rows: list[dict[str, Any]], home: Path) -> None:
    """Which data home was read (outside a project it is the per-user one, and another
    may hold the collections meant), the collections searches read, then those of eval
    retrieval apart."""
    own = [r for r in rows if not r.get("evaluation")]
    evals = [r for r in rows if r.get("evaluation")]
    err_console.print(f"data home: {home} ({_home_origin()})", highlight=False,
                      markup=False, soft_wrap=True)
    if not own:
        console.print("no collections")
    _print_collections(own)
    if evals:
        console.print(f"\nevaluation collections ({len(evals)}; not searched; "
                      "'agent-search kb prune-evals' removes them):", highlight=False,
                      markup=False)
        _print_collections(evals)


def _home_origin() -> str:
    """Why the data home is the one it is (:mod:`agent_search._locations`)."""
    from agent_search._locations import ENV_HOME, project_root

    if os.environ.get(ENV_HOME):
        return f"${ENV_HOME}"
    root = project_root()
    return f"the project at {root}" if root is not None else \
        f"no project here; set ${ENV_HOME} to read another"


def _print_collections(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        console.print(f"{row['name']}\t{plural(row['points'], 'chunk')}\t"
                      f"{row.get('embedding_model', '?')}", highlight=False, markup=False)


@kb_app.command("rm")
def rm(
    document: Annotated[str, typer.Argument(
        help="The document: its file's path (it may be gone), its source as 'kb list "
             "COLLECTION' shows it, or its document id.")],
    collection: Annotated[str, typer.Option("--collection", "-c", help="Its collection.")],
    user: Annotated[str | None, typer.Option(
        "--user", help="Only the documents this user owns.")] = None,
    team: Annotated[str | None, typer.Option(
        "--team", help="Only the documents of this team.")] = None,
    server: ServerOpt = None,
    api_key_env: KeyEnvOpt = "AGENT_SEARCH_API_KEY",
    config_dir: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Remove one document (all its chunks, and its entity-graph links) from a collection."""
    if server is not None:
        if user or team:
            fail("--server: the API key decides whose documents are removed; leave out "
                 "--user/--team")
        removed = _remove_remote(server, collection, document, api_key_env, config_dir)
    else:
        removed = _remove_local(_config(config_dir), collection, document, user, team)
    _print_removed(collection, removed, json_out)


def _remove_remote(server: str, collection: str, document: str, api_key_env: str,
                   config_dir: Path | None) -> list[dict[str, Any]]:
    """``kb rm --server``: what the server removed."""
    from agent_search.cli._kb_remote import RemoteError, client_root, remove_remote

    try:
        return remove_remote(server, collection, document, api_key_env,
                             client_root(config_dir))
    except RemoteError as exc:
        fail(str(exc), 1)


def _remove_local(config: SearchConfig, collection: str, document: str, user: str | None,
                  team: str | None) -> list[dict[str, Any]]:
    """``kb rm``: what was removed of the data home's collection (only documents of
    ``user`` / ``team`` when given); an error naming the document when nothing was."""
    from agent_search.kb import Access, StoreError, remove_document

    try:
        access = Access.of(user, team) if user or team else None
    except ValueError as exc:
        fail(f"--user/--team: {exc}")
    try:
        removed = anyio.run(lambda: remove_document(config, collection, document,
                                                    access=access))
    except ValueError as exc:
        fail(str(exc))
    except StoreError as exc:
        _store_failed(exc)
    if not removed:
        fail(f"no document {document!r} in collection {collection!r} "
             f"('agent-search kb list {collection}' lists them)")
    return removed


def _print_removed(collection: str, removed: list[dict[str, Any]], json_out: bool) -> None:
    if json_out:
        print_json({"collection": collection, "removed": removed})
        return
    for doc in removed:
        console.print(f"removed {doc['source']} ({plural(doc['chunks'], 'chunk')}, "
                      f"{doc['document_id']})", highlight=False, markup=False)


def _ingest_remote(server: str, paths: list[Path], collection: str, api_key_env: str,
                   json_out: bool, *, mirror: bool, root: Path) -> None:
    """``kb ingest --server``: the files sent, then each folder mirrored (unless
    ``mirror`` is false); printed as a local ingest prints its report."""
    from agent_search.cli._kb_remote import RemoteError, documents_of, mirror_remote

    try:
        outgoing = documents_of(paths, root)
        out = _send(server, collection, outgoing.docs, api_key_env)
        gone = mirror_remote(server, collection, outgoing.folders, api_key_env) \
            if mirror and outgoing.folders else []
    except ValueError as exc:
        fail(str(exc))
    except RemoteError as exc:
        fail(str(exc), 1)
    out["removed"] = int(out.get("removed", 0)) + sum(int(d["chunks"]) for d in gone)
    out["missing"] = [str(d["source"]) for d in gone]
    out["skipped"] = [{"source": s.source, "reason": s.reason} for s in outgoing.skipped] \
        + list(out.get("skipped", []))
    if json_out:
        print_json(out)
    else:
        _print_remote_report(out, collection, server)
    if not out.get("documents") and out["skipped"]:
        raise typer.Exit(1)


def _send(server: str, collection: str, docs: list[Any], api_key_env: str) -> dict[str, Any]:
    """The server's report of ingesting ``docs``, sent with progress shown (an empty
    report when there is nothing to send)."""
    from agent_search.cli._kb_remote import send_documents

    with work_progress("sending") as on_progress:
        if not docs:
            return {"collection": collection, "documents": 0, "skipped": [], "missing": []}
        return send_documents(server, collection, docs, api_key_env, on_progress)


def _print_remote_report(out: dict[str, Any], collection: str, server: str) -> None:
    """A server ingest's report, as a local ingest prints its own."""
    console.print(f"{collection} at {server}: {plural(out.get('documents', 0), 'document')}, "
                  f"{plural(out.get('chunks', 0), 'chunk')} from "
                  f"{plural(out.get('files', 0), 'file')}: "
                  f"chunks added {out.get('added', 0)}, "
                  f"updated {out.get('updated', 0)}, "
                  f"unchanged {out.get('unchanged', 0)}, removed {out['removed']}",
                  highlight=False, markup=False)
    _print_file_notes(out)


@kb_app.command("drop")
def drop(name: Annotated[str, typer.Argument(metavar="COLLECTION",
                                             help="Collection to delete.")],
         config_dir: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """Delete a collection and its entity graph."""
    from agent_search.kb import StoreError, drop_collection

    config = _config(config_dir)
    try:
        dropped = anyio.run(lambda: drop_collection(config, name))
    except ValueError as exc:
        fail(str(exc))
    except StoreError as exc:
        _store_failed(exc)
    if not dropped:
        fail(f"collection {name!r} not found")
    if json_out:
        print_json({"dropped": name})
    else:
        console.print(f"dropped {name}", highlight=False)


@kb_app.command("prune-evals")
def prune_evals(config_dir: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """Delete the collections eval retrieval cached (eval-...)."""
    from agent_search.kb import StoreError, prune_eval_collections

    config = _config(config_dir)
    try:
        dropped = anyio.run(lambda: prune_eval_collections(config))
    except StoreError as exc:
        fail(str(exc), 1)
    if json_out:
        print_json({"dropped": dropped})
    else:
        console.print(f"dropped {plural(len(dropped), 'evaluation collection')}"
                      + (f": {', '.join(dropped)}" if dropped else ""), highlight=False)


@kb_app.command("migrate")
def migrate(config_dir: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """Move a knowledge base made by an earlier version (Qdrant local mode, in
    $AGENT_SEARCH_HOME/qdrant) to the embedded Qdrant Edge store: vectors are copied, not
    re-embedded; the old folder is kept as qdrant.migrated-<time>."""
    from agent_search.kb import StoreError
    from agent_search.kb import migrate as run_migration

    config = _config(config_dir)
    try:
        done = anyio.run(lambda: anyio.to_thread.run_sync(run_migration, config.home))
    except StoreError as exc:
        fail(str(exc), 1)
    if json_out:
        print_json({"collections": done.collections,
                    "backup": str(done.backup) if done.backup else None})
    elif done.backup is None:
        console.print("nothing to migrate", highlight=False)
    else:
        points = sum(done.collections.values())
        console.print(f"migrated {plural(len(done.collections), 'collection')}, "
                      f"{plural(points, 'chunk')}; "
                      f"the old store is kept at {done.backup}", highlight=False, markup=False)


@kb_app.command("repair")
def repair(name: Annotated[str, typer.Argument(
        metavar="COLLECTION", help="Collection whose statistics to rebuild.")],
           config_dir: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """Rebuild a collection's statistics (what hybrid search and the floors read) from
    every point: ingest keeps them up to date, so this is a repair."""
    from agent_search.kb import StoreError, repair_collection

    config = _config(config_dir)
    try:
        done = anyio.run(lambda: repair_collection(config, name))
    except ValueError as exc:
        fail(str(exc))
    except StoreError as exc:  # a collection that does not exist too (exit 2)
        _store_failed(exc)
    if json_out:
        print_json(done)
    else:
        console.print(f"{name}: statistics rebuilt from {done['points']} chunks "
                      f"({done['terms']} terms) in {done['seconds']:.2f} s",
                      highlight=False, markup=False)
        if done.get("rechunk"):
            console.print(f"{name}: {done['rechunk']}", highlight=False, markup=False)

