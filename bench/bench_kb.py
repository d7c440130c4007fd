"""Knowledge-base benchmark on the embedded store (Qdrant Edge): ingest throughput and the
store's share of it, retrieval quality and latency on BEIR SciFact, filtered and tenant
latency, and the memory of a process serving a 100k-chunk collection.

1. Ingest of the whole corpus (5,183 abstracts), each in its own process so its peak RSS
   is its own: as passages (the eval's chunks of up to 512 tokens, cached as the eval
   collection) and with the 256-token chunks of ``kb ingest``. Reported: docs/s, the
   seconds spent in the store (writes, reads of known chunks, the final flush, segment
   optimisation and statistics) and their share of the ingest, the seconds spent
   embedding (the ingest's ceiling: documents / embedding seconds), peak RSS.
2. Retrieval per mode on a held-out ``dev`` split (the 505 non-test claims with evidence,
   judged by it: ``queries.jsonl`` carries each claim's evidence documents) and on the
   ``test`` split (300 queries): nDCG@10, recall@100, MRR@10 and p50/p95 through the kb
   handler, query embedding included. Settings are chosen on dev; test is only reported.
3. Latency on the test queries, one at a time: through the handler (embedding included)
   unfiltered, with one metadata filter (``wheres: type = jsonl``, a payload index made
   on first use) and with a caller identity (the tenant filter); and store-only (the
   query vectors computed beforehand).
4. A synthetic collection of 100,000 chunks (384-d unit vectors, 40-term BM25 vectors,
   tenants and a metadata field) built once, then served by a fresh process: its RSS
   after opening and after 300 queries, and store-only p50 unfiltered / filtered / tenant.

Run: ``.venv/bin/python -m bench.bench_kb`` (or ``make bench``). Data home:
``$AGENT_SEARCH_HOME`` or ``bench/results/kb_home``. ``BENCH_KB_SYNTH`` (default 100000)
sets the synthetic collection's size.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

import anyio  # noqa: E402

from agent_search import Context, Request, SearchConfig  # noqa: E402
from agent_search.kb._store import get_store  # noqa: E402
from agent_search.kb.evaluation import ensure_ingested, evaluate, load_dataset  # noqa: E402
from agent_search.kb.settings import KBSettings  # noqa: E402

SCIFACT = ROOT.parent / "shared" / "data" / "beir-scifact"
HOME = Path(os.environ.get("AGENT_SEARCH_HOME") or ROOT / "bench" / "results" / "kb_home")
SYNTH = int(os.environ.get("BENCH_KB_SYNTH", "100000"))
EVAL_KB: dict[str, Any] = {"chunk_tokens": 512}

RUNS: list[tuple[str, str, dict[str, Any]]] = [
    ("sparse (BM25, stemmed, stop words)", "sparse", {}),
    ("dense (MiniLM, int8 arithmetic, 256 tokens)", "dense", {}),
    ("hybrid: engine RRF k=60, 0.75:0.25", "hybrid", {"fusion": "rrf"}),
    ("hybrid: calibrated z-score 0.75:0.25 (default)", "hybrid", {}),
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


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child(*args: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "bench.bench_kb", *args], capture_output=True,
                         text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{args}: {out.stderr.strip()[-2000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


# -- 1. ingest --------------------------------------------------------------------------------

def _ingest_worker(kind: str) -> None:
    from agent_search.kb.ingest import ingest_paths

    config = SearchConfig(home=HOME, kb=EVAL_KB)
    corpus = SCIFACT / "corpus.jsonl"
    if kind == "passages":
        name, report = anyio.run(ensure_ingested, config, corpus)
        recorded = get_store(KBSettings.from_config(config), HOME).info(name).meta
        row = report.to_json() if report is not None else recorded.get("ingest_report", {})
        row["cached"] = report is None
    else:
        config = SearchConfig(home=HOME, kb={"max_file_mb": 100})
        name = "scifact-256"
        store = get_store(KBSettings.from_config(config), HOME)
        if store.exists(name):
            store.drop(name)
        report = anyio.run(lambda: ingest_paths(config, [corpus], name, graph=False))
        row = report.to_json()
        row["cached"] = False
    row.pop("skipped", None)
    row.pop("warnings", None)
    print(json.dumps(row))


def _ingest_table() -> list[str]:
    lines = ["### Ingest of the whole SciFact corpus (5,183 abstracts; each in its own "
             "process)", "", "| chunks | chunks made | seconds | docs/s | in the store s "
             "(share) | embedding alone s (docs/s: the ceiling) | peak RSS MB |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for kind, label in (("passages", "passages (≤ 512 tokens, the eval's)"),
                        ("chunks256", "256 tokens, 32 overlap (kb ingest)")):
        r = _child("--ingest-worker", kind)
        share = r.get("store_seconds", 0.0) / r["seconds"] if r.get("seconds") else 0.0
        cached = " (cached run)" if r.get("cached") else ""
        embed = r.get("embed_seconds", 0.0)
        ceiling = f"{embed:.1f} ({r['documents'] / embed:.1f})" if embed else "—"
        lines.append(f"| {label}{cached} | {r['chunks']} | {r['seconds']:.1f} | "
                     f"{r['docs_per_s']:.1f} | {r.get('store_seconds', 0.0):.1f} "
                     f"({share:.0%}) | {ceiling} | {r['peak_rss_mb']:.0f} |")
    return lines


# -- 3. latency ---------------------------------------------------------------------------------

def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


async def _latency(name: str) -> list[str]:
    from agent_search.embedding import embedder_for_collection
    from agent_search.kb import visibility
    from agent_search.kb._retrieval import QueryPlan, search
    from agent_search.kb._store import bm25_of
    from agent_search.kb.handler import KBHandler

    config = SearchConfig(home=HOME, kb=EVAL_KB)
    dataset = load_dataset(SCIFACT, "test")
    queries = [dataset.queries[q] for q in sorted(dataset.queries)]
    handler = KBHandler(config, evaluation=True)
    runs: list[tuple[str, dict[str, Any], tuple[str | None, str | None]]] = [
        ("unfiltered", {}, (None, None)),
        ("one metadata filter (wheres type = jsonl)",
         {"wheres": [{"field": "type", "op": "=", "value": "jsonl"}]}, (None, None)),
        ("tenant filter (user + team)", {}, ("alice", "red")),
    ]
    lines = ["### Query latency, SciFact test (300 queries, top 10, one at a time)", "",
             "| path | p50 ms | p95 ms |", "|---|---:|---:|"]
    for label, extra, (user, team) in runs:
        ctx = Context(config=config, user_id=user, team_id=team)
        await handler.search(ctx, Request(type="kb", query=queries[0], collections=[name],
                                          **extra))  # the filter's index is made here
        times = []
        for q in queries:
            t0 = time.perf_counter()
            result = await handler.search(ctx, Request(type="kb", query=q, collections=[name],
                                                       limit=10, **extra))
            times.append((time.perf_counter() - t0) * 1000)
            assert result.error is None, result.error
        lines.append(f"| handler, query embedding included: {label} | {_pct(times, 0.5):.2f} "
                     f"| {_pct(times, 0.95):.2f} |")
    settings = KBSettings.from_config(config)
    store = get_store(settings, HOME)
    info = store.info(name)
    embedder = embedder_for_collection(info.meta, settings, HOME)
    bm25 = bm25_of(info.meta, settings)
    vectors = [(embedder.embed_query(q), bm25.query_vector(q)) for q in queries]
    lines += _embedding_lines(embedder, queries)
    plan = QueryPlan.of(settings, "hybrid", 10, bm25.k1)
    for label, flt in (("store only (vectors given): public", visibility(None, None)),
                       ("store only: tenant filter", visibility("alice", "red"))):
        times = []
        for dense, sparse in vectors:
            t0 = time.perf_counter()
            search(store, name, plan, dense, sparse, flt, info.points)
            times.append((time.perf_counter() - t0) * 1000)
        lines.append(f"| {label} | {_pct(times, 0.5):.2f} | {_pct(times, 0.95):.2f} |")
    return lines


def _embedding_lines(embedder: Any, queries: list[str]) -> list[str]:
    """The query embedding alone, ours and fastembed's own (single-threaded, on the model
    file the wheel ships), and both embedders' passages/s on 300 abstracts, measured here,
    beside the figures above (``bench/bench_kb_speed.py`` has the whole comparison)."""
    from agent_search.embedding import prepare_model_dir
    from bench._fastembed_ref import FastembedRunner, texts_of
    from bench.bench_kb_speed import p50_ms, per_second

    reference = FastembedRunner(prepare_model_dir(HOME, 256, "weights"))
    ours_p50 = p50_ms(embedder.embed_query, queries)
    ref_p50 = p50_ms(reference.query, queries)
    docs = texts_of(SCIFACT / "corpus.jsonl", 300, with_title=True)
    ours_rate = per_second(embedder.embed, docs)
    ref_rate = per_second(reference.embed, docs)
    return [f"| query embedding alone ({embedder.model_id}) / fastembed's on the shipped "
            f"file ({ref_p50 / ours_p50:.2f}× its speed) | {ours_p50:.2f} | {ref_p50:.2f} |",
            f"| embedding 300 abstracts, docs/s: ours / fastembed's on the shipped file "
            f"({ours_rate / ref_rate:.2f}× its speed) | {ours_rate:.1f} | {ref_rate:.1f} |"]


# -- 4. a synthetic 100k-chunk collection -------------------------------------------------------

def _synth_vectors(n: int, seed: int) -> Any:
    import numpy as np

    rng = np.random.default_rng(seed)
    dense = rng.standard_normal((n, 384)).astype(np.float32)
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)
    terms = rng.zipf(1.3, size=(n, 40)) % 50_000
    return dense, terms


def _synth_build() -> None:
    from agent_search.kb import Access
    from agent_search.kb._store import BASE_INDEXES, PointData, SparseVec

    store = get_store(KBSettings(), HOME)
    name = f"synth-{SYNTH}"
    if store.exists(name) and store.count(name) == SYNTH:
        print(json.dumps({"built": False}))
        return
    if store.exists(name):
        store.drop(name)
    started = time.perf_counter()
    store.create(name, 384, {"dimensions": 384, "embedding_model": "synthetic",
                             "bm25": {"k1": 1.2, "b": 0.75}, "point_ids": "u64"},
                 BASE_INDEXES)
    teams = ["red", "blue", "green", "amber"]
    for start in range(0, SYNTH, 2000):
        n = min(2000, SYNTH - start)
        dense, terms = _synth_vectors(n, start)
        points = []
        for i in range(n):
            t = sorted(set(terms[i].tolist()))
            k = start + i
            access = (Access.of() if k % 5 == 0 else
                      Access.of(f"user{k % 50}", teams[k % 4]))
            points.append(PointData(
                str(k), dense[i].tolist(),  # integer ids, as ingest gives new collections
                SparseVec(t, [1.0] * len(t)),
                {"content": f"chunk {k}", "meta": {"year": 2000 + k % 25}, **access.payload()}))
        store.upsert(name, points)
    store.settle(name)
    print(json.dumps({"built": True, "seconds": time.perf_counter() - started}))


def _synth_serve() -> None:
    import numpy as np

    from agent_search.kb import visibility
    from agent_search.kb._retrieval import QueryPlan, search
    from agent_search.kb._store import Group, Range, SparseVec, all_of

    base = _rss_mb()
    store = get_store(KBSettings(), HOME)
    name = f"synth-{SYNTH}"
    points = store.info(name).points
    store.stats(name)
    opened = _rss_mb()
    dense, terms = _synth_vectors(300, 10_000_000)
    plan = QueryPlan.of(KBSettings(), "hybrid", 10, 1.2)
    out: dict[str, Any] = {"points": points, "rss_before_open_mb": base,
                           "rss_open_mb": opened}
    year = Group(must=(Range("meta.year", gte=2010, lt=2015),))
    store.ensure_indexes(name, {"meta.year": "float"})
    for label, flt in (("public", visibility(None, None)),
                       ("filter", all_of(year, visibility(None, None))),
                       ("tenant", visibility("user7", "blue"))):
        times = []
        for i in range(len(dense)):
            t = sorted(set(terms[i][:6].tolist()))
            q = np.asarray(dense[i], dtype=np.float32)
            t0 = time.perf_counter()
            search(store, name, plan, q, SparseVec(t, [1.0] * len(t)), flt, points)
            times.append((time.perf_counter() - t0) * 1000)
        out[f"p50_{label}_ms"] = _pct(times, 0.5)
    out["rss_after_queries_mb"] = _rss_mb()
    out["peak_rss_mb"] = _peak_mb()
    print(json.dumps(out))


def _synth_table() -> list[str]:
    built = _child("--synth-build")
    r = _child("--synth-serve")
    how = (f"built in {built['seconds']:.0f} s" if built.get("built") else "built earlier")
    return [f"### A process serving a synthetic {r['points']:,}-chunk collection ({how})", "",
            "| RSS before opening | after opening (store + statistics) | after 900 hybrid "
            "queries | store-only p50 public / year filter / tenant |",
            "|---:|---:|---:|---:|",
            f"| {r['rss_before_open_mb']:.0f} MB | {r['rss_open_mb']:.0f} MB | "
            f"{r['rss_after_queries_mb']:.0f} MB | {r['p50_public_ms']:.2f} / "
            f"{r['p50_filter_ms']:.2f} / {r['p50_tenant_ms']:.2f} ms |"]


async def _main() -> None:
    print(f"kb benchmark — data home {HOME}\n", flush=True)
    for line in await anyio.to_thread.run_sync(_ingest_table):
        print(line, flush=True)
    config = SearchConfig(home=HOME, kb=EVAL_KB)
    name, _ = await ensure_ingested(config, SCIFACT / "corpus.jsonl")
    print("\n### Retrieval on BEIR SciFact\n")
    print("| split | run | nDCG@10 | recall@100 | MRR@10 | p50 ms | p95 ms |")
    print("|---|---|---:|---:|---:|---:|---:|", flush=True)
    dev = dev_split()
    for split, folder in (("dev", dev), ("test", SCIFACT)):
        for label, mode, overrides in RUNS:
            run_config = SearchConfig(home=HOME, kb={**EVAL_KB, **overrides})
            r = await evaluate(run_config, folder, split=split, mode=mode)
            print(f"| {split} | {label} | {r.ndcg_at_10:.4f} | {r.recall_at_100:.4f} | "
                  f"{r.mrr_at_10:.4f} | {r.p50_ms:.1f} | {r.p95_ms:.1f} |", flush=True)
    print()
    for line in await _latency(name):
        print(line, flush=True)
    from agent_search.kb import close_stores

    close_stores()  # the synthetic collection's processes open the store themselves
    print()
    for line in await anyio.to_thread.run_sync(_synth_table):
        print(line, flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--ingest-worker":
        _ingest_worker(sys.argv[2])
    elif sys.argv[1:] == ["--synth-build"]:
        _synth_build()
    elif sys.argv[1:] == ["--synth-serve"]:
        _synth_serve()
    else:
        anyio.run(_main)
