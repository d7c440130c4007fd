"""Query and ingest speed of the knowledge base beside fastembed's own embedding speed for
the same model, measured in the same run (issue 24, item 5).

The machine is shared and noisy, so every figure is measured beside fastembed's in the
same round, interleaved, and printed as a ratio to it: wall time and process CPU time (the
figure the other jobs move least). Each round:

* **query**: SciFact's test claims one at a time; for each claim in turn fastembed's
  embedding of it (``TextEmbedding`` on the shipped model file, single-threaded), the
  kb's query embedding alone, and a whole kb search through the handler (hybrid, top 10,
  the query embedding included) on the SciFact eval collection (built once, cached in the
  data home). The wall ratio is the median over claims of the paired ratio;
* **documents**: the first ``--docs`` SciFact abstracts (title + text), in blocks of
  :data:`DOC_BLOCK`, each block embedded by fastembed (one vector each, truncated at 256
  tokens; one single-threaded session per CPU, batches of 8 texts of similar length, as
  the kb embeds) and by the kb's embedder alone; then ingested by ``kb ingest``'s code into
  a fresh collection (256-token chunks with their titles, so ~1.7 chunks per abstract;
  BM25 vectors, store writes) in a child process, so its model load and memory are its own.

A second fastembed row runs the kb's own int8 model folder, to tell the model's part of
the speed-up from the runtime's (batching, pooling, sessions).

Run: ``.venv/bin/python -m bench.bench_kb_speed [--docs 600] [--rounds 2]`` (or ``make
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

import anyio  # noqa: E402

from agent_search import Context, Request, SearchConfig  # noqa: E402
from bench._fastembed_ref import FastembedRunner, texts_of  # noqa: E402

SCIFACT = ROOT.parent / "shared" / "data" / "beir-scifact"
HOME = Path(os.environ.get("AGENT_SEARCH_HOME") or ROOT / "bench" / "results" / "kb_home")
INGEST_HOME = HOME.with_name(HOME.name + "-speed")
"""The ingest child's data home (its models folder links the main one's): an embedded store
is open in one process at a time, and the parent keeps the eval collection open."""
EVAL_KB: dict[str, Any] = {"chunk_tokens": 512}
REFERENCE = "fastembed, shipped file"
KB_EMBED, KB_SEARCH, KB_INGEST = "kb embedder", "kb search", "kb ingest"
DOC_BLOCK = 40  # documents per interleaved block
_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


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
    cpu = time.process_time()
    report = anyio.run(lambda: ingest_paths(config, [corpus], name, graph=False))
    print(json.dumps({**report.to_json(), "cpu_seconds": time.process_time() - cpu}))


def _pages_child(pages: Path) -> None:
    """Ingest the Markdown pages under ``pages`` (a copy made for the run) into a fresh
    collection; print the report with the process's CPU time."""
    from agent_search.kb._store import get_store
    from agent_search.kb.ingest import ingest_paths
    from agent_search.kb.settings import KBSettings

    config = SearchConfig(home=INGEST_HOME, kb={"max_file_mb": 100})
    name = "speed-pages"
    store = get_store(KBSettings.from_config(config), INGEST_HOME)
    if store.exists(name):
        store.drop(name)
    cpu = time.process_time()
    report = anyio.run(lambda: ingest_paths(config, [pages], name, graph=False))
    print(json.dumps({**report.to_json(), "cpu_seconds": time.process_time() - cpu}))


def copy_pages(source: Path) -> Path:
    """The Markdown pages under ``source`` copied (with their folders) into the ingest
    child's data home for this run: nothing of them is kept in the project."""
    import shutil

    target = INGEST_HOME / "pages"
    if target.exists():
        shutil.rmtree(target)
    for page in sorted(source.rglob("*.md")):
        dest = target / page.relative_to(source)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(page, dest)
    return target


def page_chunks(pages: Path, embedder: Any) -> list[str]:
    """What ``kb ingest`` embeds for the pages: each chunk's title, heading path and
    text (:func:`~agent_search.kb.ingest.embed_text`), chunked by the kb's own code."""
    from agent_search.kb._ingest import Document, iter_chunks, load_file
    from agent_search.kb.ingest import _token_counter, embed_text

    count = _token_counter(embedder)
    texts = []
    for page in sorted(pages.rglob("*.md")):
        for doc in load_file(page):
            if isinstance(doc, Document):
                texts += [embed_text(doc.title, c) for c in iter_chunks(doc, count)]
    return texts


def _ingest(docs: int | Path) -> dict[str, Any]:
    flag = "--pages-child" if isinstance(docs, Path) else "--ingest-child"
    out = subprocess.run([sys.executable, "-m", "bench.bench_kb_speed", flag, str(docs)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip()[-2000:])
    row: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return row


async def _round(docs: list[str], queries: list[str], refs: dict[str, FastembedRunner],
                 embedder: Any, collection: str) -> dict[str, Any]:
    """One round: the query measurements interleaved query by query and the document ones
    block by block (so each sees the same load as fastembed's beside it), then the ingest.
    Each as wall time and process CPU time (all threads)."""
    from agent_search.kb.handler import KBHandler

    config = SearchConfig(home=HOME, kb=EVAL_KB)
    handler = KBHandler(config, evaluation=True)
    ctx = Context(config=config)

    async def search(q: str) -> None:
        result = await handler.search(ctx, Request(type="kb", query=q,
                                                   collections=[collection], limit=10))
        assert result.error is None, result.error

    calls: dict[str, Callable[[str], Any]] = {f"{label}": ref.query for label, ref in refs.items()}
    calls[KB_EMBED] = embedder.embed_query
    await search(queries[0])
    for call in calls.values():
        call(queries[0])
    wall: dict[str, list[float]] = {k: [] for k in [*calls, KB_SEARCH]}
    cpu: dict[str, float] = dict.fromkeys(wall, 0.0)
    for q in queries:
        for key, call in calls.items():
            w, c = time.perf_counter(), time.process_time()
            call(q)
            wall[key].append(time.perf_counter() - w)
            cpu[key] += time.process_time() - c
        w, c = time.perf_counter(), time.process_time()
        await search(q)
        wall[KB_SEARCH].append(time.perf_counter() - w)
        cpu[KB_SEARCH] += time.process_time() - c
    row: dict[str, Any] = {"query_wall": wall,
                           "query_cpu": {k: 1000 * v / len(queries) for k, v in cpu.items()}}
    embeds: dict[str, Callable[[list[str]], Any]] = {
        label: ref.embed for label, ref in refs.items()}
    embeds[KB_EMBED] = embedder.embed
    for call in embeds.values():
        call(docs[:8])
    dwall, dcpu = dict.fromkeys(embeds, 0.0), dict.fromkeys(embeds, 0.0)
    for start in range(0, len(docs), DOC_BLOCK):
        block = docs[start:start + DOC_BLOCK]
        for key, call in embeds.items():
            w, c = time.perf_counter(), time.process_time()
            call(block)
            dwall[key] += time.perf_counter() - w
            dcpu[key] += time.process_time() - c
    report = await anyio.to_thread.run_sync(_ingest, len(docs))
    dwall[KB_INGEST] = report["seconds"]
    dcpu[KB_INGEST] = report["cpu_seconds"]
    row["docs_per_s"] = {k: len(docs) / v for k, v in dwall.items()}
    row["doc_cpu_ms"] = {k: 1000 * v / len(docs) for k, v in dcpu.items()}
    row["chunks"] = report["chunks"]
    return row


def _pages_round(pages: Path, chunks: list[str], ref: FastembedRunner,
                 embedder: Any) -> dict[str, Any]:
    """Chunks/s on long Markdown pages: fastembed (shipped file) and the kb's embedder
    on the very chunk texts ``kb ingest`` embeds, then the ingest itself (a child)."""
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for key, call in ((REFERENCE, ref.embed), (KB_EMBED, embedder.embed)):
        call(chunks[:8])
        w, c = time.perf_counter(), time.process_time()
        call(chunks)
        wall[key], cpu[key] = time.perf_counter() - w, time.process_time() - c
    report = _ingest(pages)
    wall[KB_INGEST], cpu[KB_INGEST] = report["seconds"], report["cpu_seconds"]
    return {"chunks_per_s": {k: len(chunks) / v for k, v in wall.items()},
            "chunk_cpu_ms": {k: 1000 * v / len(chunks) for k, v in cpu.items()},
            "chunks": len(chunks), "ingested": report["chunks"],
            "embed_seconds": report["embed_seconds"], "ingest_seconds": report["seconds"]}


def pages_table(rows: list[dict[str, Any]], pages: int, source: str) -> list[str]:
    """The long-pages figures beside fastembed's on the same chunks (medians)."""
    ref = REFERENCE

    def line(key: str, label: str) -> str:
        rate = statistics.median([r["chunks_per_s"][key] for r in rows])
        cpu = statistics.median([r["chunk_cpu_ms"][key] for r in rows])
        wall_x = statistics.median([r["chunks_per_s"][key] / r["chunks_per_s"][ref]
                                    for r in rows])
        cpu_x = statistics.median([r["chunk_cpu_ms"][ref] / r["chunk_cpu_ms"][key]
                                   for r in rows])
        return f"| {label} | {rate:.1f} | {cpu:.1f} | {wall_x:.2f}× | {cpu_x:.2f}× |"

    chunks = rows[0]["chunks"]
    embed_share = statistics.median([r["embed_seconds"] / r["ingest_seconds"] for r in rows])
    return [
        f"### Long Markdown pages (median of {len(rows)} round(s); {pages} pages of "
        f"{source}, {chunks} chunks)", "",
        "| the same chunks | chunks/s | CPU ms/chunk | × fastembed's speed: wall | CPU |",
        "|---|---:|---:|---:|---:|",
        line(ref, f"{ref} (embedding only)"),
        line(KB_EMBED, f"{KB_EMBED} (embedding only)"),
        line(KB_INGEST, "kb ingest: read, chunk, embed, BM25, store writes"),
        "", f"kb ingest spent {embed_share:.0%} of its wall time embedding "
            f"(ingested {rows[0]['ingested']} chunks)"]


def speed_table(rows: list[dict[str, Any]], docs: int, queries: int) -> list[str]:
    """Each figure beside fastembed's on the shipped file, as a speed ratio (> 1: faster),
    medians over the rounds. Query wall ratio: the median over queries of the paired
    ratio (each query timed right after fastembed's); CPU ratios: CPU time per query or
    document, which the other jobs of a shared machine move least."""
    ref = REFERENCE

    def med(values: list[float]) -> float:
        return statistics.median(values)

    def q_row(key: str, label: str) -> str:
        p50 = med([1000 * med(r["query_wall"][key]) for r in rows])
        cpu = med([r["query_cpu"][key] for r in rows])
        paired = med([med([a / b for a, b in zip(r["query_wall"][ref], r["query_wall"][key],
                                                 strict=True)]) for r in rows])
        cpu_x = med([r["query_cpu"][ref] / r["query_cpu"][key] for r in rows])
        return f"| {label} | {p50:.2f} | {cpu:.2f} | {paired:.2f}× | {cpu_x:.2f}× |"

    def d_row(key: str, label: str) -> str:
        rate = med([r["docs_per_s"][key] for r in rows])
        cpu = med([r["doc_cpu_ms"][key] for r in rows])
        wall_x = med([r["docs_per_s"][key] / r["docs_per_s"][ref] for r in rows])
        cpu_x = med([r["doc_cpu_ms"][ref] / r["doc_cpu_ms"][key] for r in rows])
        return f"| {label} | {rate:.1f} | {cpu:.1f} | {wall_x:.2f}× | {cpu_x:.2f}× |"

    chunks = med([r["chunks"] for r in rows])
    return [
        f"### Speed beside fastembed (median of {len(rows)} round(s); {queries} SciFact test "
        f"claims, the first {docs} abstracts)", "",
        "| one query at a time | p50 ms | CPU ms | × fastembed's speed: wall (paired) | CPU |",
        "|---|---:|---:|---:|---:|",
        *(q_row(k, f"{k} (embedding only)") for k in rows[0]["query_cpu"] if k != KB_SEARCH),
        q_row(KB_SEARCH, "kb search: hybrid top 10, query embedding included"), "",
        "| documents | docs/s | CPU ms/doc | × fastembed's speed: wall | CPU |",
        "|---|---:|---:|---:|---:|",
        *(d_row(k, f"{k} (embedding only, ≤ 256 tokens)") for k in rows[0]["docs_per_s"]
          if k != KB_INGEST),
        d_row(KB_INGEST, f"kb ingest: 256-token chunks ({chunks / docs:.2f} per abstract), "
                         "BM25, store writes"),
        "", f"load average at the end: {os.getloadavg()[0]:.1f} (2 cores shared)"]


async def run_pages(source: Path, rounds: int) -> list[str]:
    """The long-pages figures alone (``--pages-only``): no SciFact needed."""
    from agent_search.embedding import get_embedder, prepare_model_dir
    from agent_search.kb.settings import KBSettings

    pages = copy_pages(source)
    embedder = get_embedder(KBSettings.from_config(SearchConfig(home=HOME)), HOME)
    ref = FastembedRunner(prepare_model_dir(HOME, 256, "weights"))
    chunks = page_chunks(pages, embedder)
    rows = [_pages_round(pages, chunks, ref, embedder) for _ in range(rounds)]
    return pages_table(rows, len(list(pages.rglob("*.md"))), str(source))


async def run(docs: int, rounds: int, queries_n: int, source: Path) -> list[str]:
    from agent_search.embedding import embedder_for_collection, prepare_model_dir
    from agent_search.kb._store import get_store
    from agent_search.kb.evaluation import ensure_ingested, load_dataset
    from agent_search.kb.settings import KBSettings

    config = SearchConfig(home=HOME, kb=EVAL_KB)
    collection, _ = await ensure_ingested(config, SCIFACT / "corpus.jsonl")
    settings = KBSettings.from_config(config)
    meta = get_store(settings, HOME).info(collection).meta
    embedder = embedder_for_collection(meta, settings, HOME)
    refs = {REFERENCE: FastembedRunner(prepare_model_dir(HOME, 256, "weights")),
            "fastembed, the kb's int8 folder": FastembedRunner(prepare_model_dir(HOME, 256))}
    dataset = load_dataset(SCIFACT, "test")
    queries = [dataset.queries[q] for q in sorted(dataset.queries)][:queries_n]
    texts = texts_of(SCIFACT / "corpus.jsonl", docs, with_title=True)
    pages = copy_pages(source)
    chunks = page_chunks(pages, embedder)
    rows, page_rows = [], []
    for _ in range(rounds):
        rows.append(await _round(texts, queries, refs, embedder, collection))
        page_rows.append(_pages_round(pages, chunks, refs[REFERENCE], embedder))
    from agent_search.kb import close_stores

    close_stores()
    return [*speed_table(rows, docs, len(queries)), "",
            *pages_table(page_rows, len(list(pages.rglob("*.md"))), str(source))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--pages", type=Path, default=ROOT / "docs", help=(
        "a folder of Markdown pages for the long-pages figures (default: this project's "
        "docs/); copied to the data home for the run"))
    parser.add_argument("--pages-only", action="store_true",
                        help="only the long-pages figures (no SciFact)")
    args = parser.parse_args()
    lines = anyio.run(run_pages, args.pages, args.rounds) if args.pages_only else \
        anyio.run(run, args.docs, args.rounds, args.queries, args.pages)
    for line in lines:
        print(line, flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--ingest-child":
        _ingest_child(int(sys.argv[2]))
    elif len(sys.argv) == 3 and sys.argv[1] == "--pages-child":
        _pages_child(Path(sys.argv[2]))
    else:
        main()
