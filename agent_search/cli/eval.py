"""``agent-search eval retrieval DATASET_DIR`` — retrieval quality of the kb on a BEIR set."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import anyio
import typer

from agent_search.cli.app import app, console, fail, plural, print_json
from agent_search.cli.kb import work_progress
from agent_search.errors import ConfigError

if TYPE_CHECKING:
    from agent_search.config import SearchConfig

eval_app = typer.Typer(help="Evaluate search quality.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")


@eval_app.command("retrieval")
def retrieval(
    dataset_dir: Annotated[Path, typer.Argument(help="BEIR folder: corpus.jsonl, "
                                                     "queries.jsonl, qrels/<split>.tsv")],
    split: Annotated[str, typer.Option("--split", help="qrels file to score")] = "test",
    mode: Annotated[str, typer.Option("--mode", help="hybrid, dense or sparse")] = "hybrid",
    max_queries: Annotated[int | None, typer.Option("--max-queries", min=1,
                                                    help="Only the first N queries")] = None,
    max_docs: Annotated[int | None, typer.Option(
        "--max-docs", min=1, help="Corpus subset: relevant docs plus others up to N")] = None,
    chunk_tokens: Annotated[int | None, typer.Option(
        "--chunk-tokens",
        help="Chunk size for this corpus (default: kb.chunk_tokens if configured, else "
             "512: BEIR records are passages and stay whole)")] = None,
    ignore_self: Annotated[bool, typer.Option(
        "--ignore-self", help="Drop a hit whose document id is the query's id (ArguAna, "
                              "as BEIR does)")] = False,
    config_dir: Annotated[Path | None, typer.Option("--config",
                                                    help="Configuration folder.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    """Ingest the corpus (once; cached by content and settings) and score the queries."""
    from agent_search.embedding import EmbeddingError
    from agent_search.kb import StoreError
    from agent_search.kb.evaluation import DatasetError, evaluate
    from agent_search.kb.settings import MODES
    from agent_search.loader import load_config

    if mode not in MODES:
        fail(f"--mode {mode!r} is not one of {', '.join(MODES)}")
    if not dataset_dir.is_dir():
        fail(f"dataset folder not found: {dataset_dir}")
    try:
        config: SearchConfig = load_config(config_dir)
        if chunk_tokens is not None:
            config = config.merged({"kb": {"chunk_tokens": chunk_tokens}})
    except ConfigError as exc:
        fail(str(exc))
    try:
        with work_progress("ingesting corpus") as on_progress, \
                work_progress("querying", unit="items") as on_query:
            report = anyio.run(lambda: evaluate(config, dataset_dir, split=split, mode=mode,
                                                max_queries=max_queries, max_docs=max_docs,
                                                ignore_self=ignore_self,
                                                progress=on_progress, query_progress=on_query))
    except (DatasetError, ValueError) as exc:
        fail(str(exc))
    except (StoreError, EmbeddingError, RuntimeError) as exc:
        fail(str(exc), 1)
    if json_out:
        print_json(report.to_json())
        return
    data = report.to_json()
    if report.ingest is not None:
        ing = report.ingest
        console.print(f"ingested {plural(ing.documents, 'doc')} ({plural(ing.chunks, 'chunk')}) in "
                      f"{ing.seconds:.0f} s: {ing.docs_per_s:.1f} docs/s, peak RSS "
                      f"{ing.peak_rss_mb:.0f} MB", highlight=False)
    else:
        console.print(f"corpus already ingested ({report.collection}); queries only",
                      highlight=False)
    console.print(f"mode {mode}, split {split}, {plural(data['queries'], 'query', 'queries')}",
                  highlight=False)
    for key in ("ndcg@10", "recall@100", "mrr@10"):
        console.print(f"{key}\t{data[key]:.4f}", highlight=False)
    console.print(f"latency p50 {data['latency_ms']['p50']:.1f} ms, "
                  f"p95 {data['latency_ms']['p95']:.1f} ms", highlight=False)
