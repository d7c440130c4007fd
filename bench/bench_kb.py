"""Knowledge-base benchmark: embedding throughput and memory, full SciFact ingest, and
retrieval quality and latency per mode on BEIR SciFact.

1. Embedding on SciFact abstracts (title + text), each configuration in its own process
   so its peak RSS is its own: the baseline (fastembed as configured out of the box on
   the shipped model file: inputs in file order, batches of 16, 256-token cap, one
   session with a thread per core) against the kb embedder (inputs sorted by length and
   batched with their neighbours, batches of 8, one single-threaded session per core),
   on the shipped file (``kb.int8: weights``, float32 arithmetic) and on the int8
   arithmetic model (``kb.int8: dynamic``, the default).
2. Ingest of the whole corpus (5,183 abstracts) into the eval cache — docs/s and peak RSS
   of that ingest (recorded with the cached collection, so a second run reports them
   without ingesting again).
3. Retrieval per mode on a held-out ``dev`` split and on the ``test`` split (300 queries):
   nDCG@10, recall@100, MRR@10, query latency p50/p95 (query embedding included, one
   query at a time through the kb handler). The shared copy of SciFact has no train qrels,
   but ``queries.jsonl`` carries each claim's evidence documents in its metadata (for the
   test claims these equal the qrels whenever the claim has evidence); the ``dev`` split
   is the 505 claims outside the test split that have evidence, judged by it. Settings
   are chosen on dev; test is only reported.

BEIR records are passages already, so the corpus is ingested in chunks of up to 512
tokens (``chunk_tokens=512``: 5,538 chunks for 5,183 records): BM25 sees the whole
abstract, the dense vector its first 256 tokens, as in the BEIR protocol. A document's
score is its best chunk's.

Run: ``.venv/bin/python bench/bench_kb.py`` (or ``make bench``). Data home:
``$AGENT_SEARCH_HOME`` or ``bench/results/kb_home``. ``BENCH_KB_EMBED_DOCS`` (default
160) sets the sample size of part 1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402

from agent_search import SearchConfig  # noqa: E402
from agent_search.kb.evaluation import ensure_ingested, evaluate  # noqa: E402
from agent_search.kb.settings import KBSettings  # noqa: E402
from agent_search.kb.store import get_store  # noqa: E402

SCIFACT = ROOT.parent / "shared" / "data" / "beir-scifact"
HOME = Path(os.environ.get("AGENT_SEARCH_HOME") or ROOT / "bench" / "results" / "kb_home")
EMBED_DOCS = int(os.environ.get("BENCH_KB_EMBED_DOCS", "160"))
EVAL_KB: dict[str, Any] = {"chunk_tokens": 512}

EQUAL = {"dense_weight": 1.0, "sparse_weight": 1.0}
RUNS: list[tuple[str, str, dict[str, Any]]] = [
    ("sparse (BM25, stemmed, stop words)", "sparse", {}),
    ("dense (MiniLM, int8 arithmetic, 256 tokens)", "dense", {}),
    ("hybrid: plain RRF k=60", "hybrid", {"fusion": "rrf", "rrf_k": 60, **EQUAL}),
    ("hybrid: DBSF over the top 100 (Qdrant's)", "hybrid", {"fusion": "dbsf", **EQUAL}),
    ("hybrid: z-score over the collection, 1:1", "hybrid", {"fusion": "zscore", **EQUAL}),
    ("hybrid: z-score, 0.75:0.25 (default)", "hybrid", {}),
    ("hybrid: default + dense PRF (3 docs)", "hybrid", {"prf_docs": 3}),
]


def dev_split() -> Path:
    """A BEIR folder (in the data home) whose ``qrels/dev.tsv`` judges the non-test claims
    by their evidence documents; corpus and queries are links to the shared files."""
    folder = HOME / "eval" / "scifact-dev"
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    for name in ("corpus.jsonl", "queries.jsonl"):
        link = folder / name
        if not link.exists():
            link.symlink_to(SCIFACT / name)
    test_ids = {line.split("\t")[0] for line in
                (SCIFACT / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]}
    rows = ["query-id\tcorpus-id\tscore"]
    for line in (SCIFACT / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        query = json.loads(line)
        if query["_id"] in test_ids:
            continue
        rows.extend(f"{query['_id']}\t{doc}\t1" for doc in (query.get("metadata") or {}))
    (folder / "qrels" / "dev.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


def _embed_worker(kind: str) -> None:
    """Child process: embed the sample one way, print docs/s and peak RSS as JSON."""
    import resource

    from agent_search.kb.embedder import FastEmbedder, prepare_model_dir

    lines = (SCIFACT / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:EMBED_DOCS]
    texts = [f"{r['title']}\n{r['text']}" for r in map(json.loads, lines)]
    model_dir = prepare_model_dir(HOME, 256, "weights" if kind != "dynamic" else "dynamic")
    if kind == "baseline":
        from fastembed import TextEmbedding

        model = TextEmbedding("sentence-transformers/all-MiniLM-L6-v2",
                              specific_model_path=str(model_dir))
        list(model.embed(texts[:16], batch_size=16))
        started = time.perf_counter()
        list(model.embed(texts, batch_size=16))
    else:
        embedder = FastEmbedder(model_dir, batch_size=8, max_tokens=256, int8=kind)
        embedder.embed(texts[:16])
        started = time.perf_counter()
        embedder.embed(texts)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"docs_per_s": len(texts) / seconds, "peak_rss_mb": peak}))


def _embedding_table() -> list[str]:
    rows = {}
    for kind in ("baseline", "weights", "dynamic"):
        out = subprocess.run([sys.executable, __file__, "--embed-worker", kind],
                             capture_output=True, text=True, check=True)
        rows[kind] = json.loads(out.stdout.strip().splitlines()[-1])
    base = rows["baseline"]["docs_per_s"]
    lines = [f"### Embedding {EMBED_DOCS} SciFact abstracts (2 cores)", "",
             "| embedder | docs/s | × baseline | peak RSS MB |", "|---|---:|---:|---:|"]
    labels = {"baseline": "fastembed default order, batch 16, cap 256, shipped file",
              "weights": "kb: length-sorted, batch 8, a session per core, shipped file",
              "dynamic": "kb: the same on the int8-arithmetic model (default)"}
    for kind, row in rows.items():
        lines.append(f"| {labels[kind]} | {row['docs_per_s']:.1f} | "
                     f"{row['docs_per_s'] / base:.2f} | {row['peak_rss_mb']:.0f} |")
    return lines


async def _main() -> None:
    print(f"kb benchmark — data home {HOME}\n", flush=True)
    for line in await anyio.to_thread.run_sync(_embedding_table):
        print(line, flush=True)
    config = SearchConfig(home=HOME, kb=EVAL_KB)
    started = time.perf_counter()
    name, report = await ensure_ingested(config, SCIFACT / "corpus.jsonl")
    store = get_store(KBSettings.from_config(config), HOME)
    recorded = store.info(name).meta.get("ingest_report") or {}
    print("\n### Full corpus ingest (5,183 abstracts)\n")
    how = "this run" if report is not None else "recorded when the cache was built"
    print(f"collection `{name}`: {recorded.get('documents', '?')} docs, "
          f"{recorded.get('chunks', '?')} chunks in {recorded.get('seconds', '?')} s = "
          f"**{recorded.get('docs_per_s', '?')} docs/s**, peak RSS "
          f"**{recorded.get('peak_rss_mb', '?')} MB** ({how}; "
          f"{time.perf_counter() - started:.0f} s now)\n", flush=True)

    print("### Retrieval on BEIR SciFact\n")
    print("| split | run | nDCG@10 | recall@100 | MRR@10 | p50 ms | p95 ms |")
    print("|---|---|---:|---:|---:|---:|---:|", flush=True)
    dev = dev_split()
    for split, folder in (("dev", dev), ("test", SCIFACT)):
        for label, mode, overrides in RUNS:
            run_config = SearchConfig(home=HOME, kb={**EVAL_KB, **overrides})
            r = await evaluate(run_config, folder, split=split, mode=mode)
            print(f"| {split} | {label} | {r.ndcg_at_10:.4f} | {r.recall_at_100:.4f} | "
                  f"{r.mrr_at_10:.4f} | {r.p50_ms:.1f} | {r.p95_ms:.1f} |", flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--embed-worker":
        _embed_worker(sys.argv[2])
    else:
        anyio.run(_main)
