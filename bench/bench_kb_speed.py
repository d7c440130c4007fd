"""Query and ingest speed of the knowledge base beside fastembed's own embedding speed for
the same model, measured in the same run (issue 24, item 5).

The machine is shared and noisy, so every figure is printed with fastembed's measured in
the same round, and the ratios are what carries from run to run. Each round, in turn:

* **query**: SciFact's test claims one at a time — fastembed's embedding of the claim
  (``TextEmbedding`` on the shipped model file, single-threaded), the kb's query
  embedding alone, and a whole kb search through the handler (hybrid, top 10, the query
  embedding included) on the SciFact eval collection (built once, cached in the data home);
* **ingest**: the first ``--docs`` SciFact abstracts (title + text) embedded by fastembed
  (one vector each, truncated at 256 tokens; one single-threaded session per CPU, batches
  of 8 texts of similar length, as the kb embeds), embedded by the kb's
  embedder alone (the same texts), and ingested by ``kb ingest``'s code into a fresh
  collection (256-token chunks with their titles, so ~1.7 chunks per abstract; sparse
  vectors, store writes), in a child process so its model load and memory are its own.

A second fastembed row runs the kb's own int8 model folder, to tell the model's part of
the speed-up from the runtime's (batching, pooling, sessions).

Run: ``.venv/bin/python bench/bench_kb_speed.py [--docs 600] [--rounds 2]`` (or ``make
bench-kb-speed``). Data home: ``$AGENT_SEARCH_HOME`` or ``bench/results/kb_home``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402

from agent_search import Context, Request, SearchConfig  # noqa: E402

SCIFACT = ROOT.parent / "shared" / "data" / "beir-scifact"
HOME = Path(os.environ.get("AGENT_SEARCH_HOME") or ROOT / "bench" / "results" / "kb_home")
INGEST_HOME = HOME.with_name(HOME.name + "-speed")
"""The ingest child's data home (its models folder links the main one's): an embedded store
is open in one process at a time, and the parent keeps the eval collection open."""
EVAL_KB: dict[str, Any] = {"chunk_tokens": 512}
_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def texts_of(path: Path, n: int, *, with_title: bool) -> list[str]:
    out = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            title = row.get("title") or ""
            out.append(f"{title}\n{row['text']}" if with_title and title else row["text"])
            if len(out) >= n:
                break
    return out


def p50_ms(call: Callable[[str], Any], queries: Sequence[str]) -> float:
    call(queries[0])
    times = []
    for q in queries:
        started = time.perf_counter()
        call(q)
        times.append(time.perf_counter() - started)
    return 1000 * statistics.median(times)


def per_second(call: Callable[[list[str]], Any], texts: list[str]) -> float:
    call(texts[:8])
    started = time.perf_counter()
    call(texts)
    return len(texts) / (time.perf_counter() - started)


class Fastembed:
    """fastembed's ``TextEmbedding`` on a model folder, run the way the kb runs its model:
    single-threaded sessions, a query on one, documents in length-sorted batches of 8 over
    one session per CPU (fastembed out of the box spins a thread per core in every call,
    which on a shared machine measures the other jobs more than the model)."""

    def __init__(self, model_dir: Path) -> None:
        from bench_embed import _FastembedRunner

        self.runner = _FastembedRunner(model_dir)

    def query(self, text: str) -> Any:
        return self.runner.query(text)

    def embed(self, texts: list[str]) -> Any:
        return self.runner.embed(texts)


def _ingest_child(docs: int) -> None:
    """Ingest the first ``docs`` abstracts into a fresh collection; print the report."""
    from agent_search.kb._store import get_store
    from agent_search.kb.ingest import ingest_paths
    from agent_search.kb.settings import KBSettings

    models = INGEST_HOME / "models"
    if not models.exists():
        INGEST_HOME.mkdir(parents=True, exist_ok=True)
        models.symlink_to((HOME / "models").resolve(), target_is_directory=True)
    corpus = INGEST_HOME / "eval" / f"scifact-first-{docs}" / "corpus.jsonl"
    corpus.parent.mkdir(parents=True, exist_ok=True)
    if not corpus.is_file():
        with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as fh:
            corpus.write_text("".join(next(fh) for _ in range(docs)), encoding="utf-8")
    config = SearchConfig(home=INGEST_HOME, kb={"max_file_mb": 100})
    name = "speed-scifact"
    store = get_store(KBSettings.from_config(config), INGEST_HOME)
    if store.exists(name):
        store.drop(name)
    report = anyio.run(lambda: ingest_paths(config, [corpus], name, graph=False))
    print(json.dumps(report.to_json()))


def _ingest(docs: int) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, "--ingest-child", str(docs)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip()[-2000:])
    row: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return row


async def _round(docs: list[str], queries: list[str], refs: dict[str, Fastembed],
                 embedder: Any, collection: str) -> dict[str, float]:
    from agent_search.kb.handler import KBHandler

    config = SearchConfig(home=HOME, kb=EVAL_KB)
    handler = KBHandler(config, evaluation=True)
    ctx = Context(config=config)

    times = []
    for q in [queries[0], *queries]:
        started = time.perf_counter()
        result = await handler.search(ctx, Request(type="kb", query=q,
                                                   collections=[collection], limit=10))
        times.append(time.perf_counter() - started)
        assert result.error is None, result.error
    row: dict[str, float] = {"kb search": 1000 * statistics.median(times[1:])}
    for label, ref in refs.items():
        row[f"{label} query"] = p50_ms(ref.query, queries)
    row["kb query embedding"] = p50_ms(embedder.embed_query, queries)
    for label, ref in refs.items():
        row[f"{label} docs"] = per_second(ref.embed, docs)
    row["kb embedding docs"] = per_second(embedder.embed, docs)
    report = await anyio.to_thread.run_sync(_ingest, len(docs))
    row["kb ingest docs"] = report["docs_per_s"]
    row["kb ingest chunks"] = report["chunks"] / report["seconds"]
    return row


def speed_table(rows: list[dict[str, float]], docs: int, queries: int) -> list[str]:
    """Medians over the rounds, each beside fastembed's (shipped file) from its round."""
    def med(key: str) -> float:
        return statistics.median(r[key] for r in rows)

    def ratio(key: str, ref: str, *, higher: bool) -> str:
        values = [r[key] / r[ref] if higher else r[ref] / r[key] for r in rows]
        return f"{statistics.median(values):.2f}×"

    ref_q, ref_d = "fastembed, shipped file query", "fastembed, shipped file docs"
    lines = [f"### Speed beside fastembed (median of {len(rows)} rounds; {queries} SciFact "
             f"test claims, the first {docs} abstracts)", "",
             "| what | p50 ms per query | × fastembed's speed | docs/s | × fastembed's speed |",
             "|---|---:|---:|---:|---:|"]
    for label in ("fastembed, shipped file", "fastembed, the kb's int8 folder"):
        if f"{label} query" in rows[0]:
            lines.append(f"| {label} (embedding only) | {med(label + ' query'):.2f} | "
                         f"{ratio(label + ' query', ref_q, higher=False)} | "
                         f"{med(label + ' docs'):.1f} | "
                         f"{ratio(label + ' docs', ref_d, higher=True)} |")
    lines += [
        f"| kb embedder (embedding only) | {med('kb query embedding'):.2f} | "
        f"{ratio('kb query embedding', ref_q, higher=False)} | {med('kb embedding docs'):.1f} "
        f"| {ratio('kb embedding docs', ref_d, higher=True)} |",
        f"| kb search, hybrid top 10, query embedding included / kb ingest, 256-token "
        f"chunks ({med('kb ingest chunks'):.1f} chunks/s) | {med('kb search'):.2f} | "
        f"{ratio('kb search', ref_q, higher=False)} | {med('kb ingest docs'):.1f} | "
        f"{ratio('kb ingest docs', ref_d, higher=True)} |",
        "", f"load average at the end: {os.getloadavg()[0]:.1f} (2 cores shared)"]
    return lines


async def run(docs: int, rounds: int, queries_n: int) -> list[str]:
    from agent_search.kb._embedder import embedder_for_collection, prepare_model_dir
    from agent_search.kb._store import get_store
    from agent_search.kb.evaluation import ensure_ingested, load_dataset
    from agent_search.kb.settings import KBSettings

    config = SearchConfig(home=HOME, kb=EVAL_KB)
    collection, _ = await ensure_ingested(config, SCIFACT / "corpus.jsonl")
    settings = KBSettings.from_config(config)
    meta = get_store(settings, HOME).info(collection).meta
    embedder = embedder_for_collection(meta, settings, HOME)
    refs = {"fastembed, shipped file": Fastembed(prepare_model_dir(HOME, 256, "weights")),
            "fastembed, the kb's int8 folder": Fastembed(prepare_model_dir(HOME, 256))}
    dataset = load_dataset(SCIFACT, "test")
    queries = [dataset.queries[q] for q in sorted(dataset.queries)][:queries_n]
    texts = texts_of(SCIFACT / "corpus.jsonl", docs, with_title=True)
    rows = []
    for _ in range(rounds):
        rows.append(await _round(texts, queries, refs, embedder, collection))
    from agent_search.kb._store import close_stores

    close_stores()
    return speed_table(rows, docs, len(queries))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    for line in anyio.run(run, args.docs, args.rounds, args.queries):
        print(line, flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--ingest-child":
        _ingest_child(int(sys.argv[2]))
    else:
        main()
