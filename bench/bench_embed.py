"""Embedding speed of the offline models, against fastembed's own run of MiniLM in the
same process and the same minute (the machine is shared, so ratios are what carries).

Rows: fastembed ``TextEmbedding`` on the MiniLM folder (its own tokenizer call, its own
pooling), agent-search's MiniLM (the same ONNX file through onnxruntime + ``tokenizers``
directly, :class:`agent_search.kb._embedder.FastEmbedder`) and multilingual-e5-small
(:class:`agent_search.kb._e5.E5Embedder`). Columns: one short query at a time (p50 and the
minimum, and the CPU ms per query, which other processes on a shared machine move least),
and passages per second for SciFact abstracts and zh-rgb Chinese passages (single-threaded
sessions, one per CPU, batches of 8, as ``kb ingest`` runs them) with the CPU ms per
passage.

Run: ``.venv/bin/python bench/bench_embed.py [--passages 200] [--queries 200]``.
Data home: ``$AGENT_SEARCH_HOME`` or ``bench/results/kb_home`` (the models are built there
on first use).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_search.kb._embedder import FastEmbedder, prepare_model_dir  # noqa: E402
from agent_search.kb._local import default_workers  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
HOME = Path(os.environ.get("AGENT_SEARCH_HOME") or ROOT / "bench" / "results" / "kb_home")


def _texts(path: Path, n: int, *, with_title: bool) -> list[str]:
    out = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            title = row.get("title") or ""
            out.append(f"{title}\n{row['text']}" if with_title and title else row["text"])
            if len(out) >= n:
                break
    return out


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


class _FastembedRunner:
    """fastembed's own path: one ``TextEmbedding`` per CPU, batches split the same way."""

    def __init__(self, model_dir: Path) -> None:
        from fastembed import TextEmbedding

        self.model = TextEmbedding("sentence-transformers/all-MiniLM-L6-v2",
                                   specific_model_path=str(model_dir), threads=1)
        self.workers = default_workers()
        self.pool = [self.model] + [
            TextEmbedding("sentence-transformers/all-MiniLM-L6-v2",
                          specific_model_path=str(model_dir), threads=1)
            for _ in range(self.workers - 1)]

    def query(self, text: str) -> Any:
        return next(iter(self.model.embed([text])))

    def embed(self, texts: list[str]) -> Any:
        from concurrent.futures import ThreadPoolExecutor

        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        batches = [order[s:s + 8] for s in range(0, len(order), 8)]
        shares = [batches[w::self.workers] for w in range(self.workers)]

        def run(w: int) -> None:
            for idx in shares[w]:
                list(self.pool[w].embed([texts[i] for i in idx], batch_size=8))

        with ThreadPoolExecutor(self.workers) as pool:
            list(pool.map(run, range(self.workers)))
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=200)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--no-e5", action="store_true", help="skip multilingual-e5-small")
    args = parser.parse_args()
    en_docs = _texts(DATA / "beir-scifact" / "corpus.jsonl", args.passages, with_title=True)
    zh_docs = _texts(DATA / "zh-rgb" / "corpus.jsonl", args.passages, with_title=False)
    en_q = _texts(DATA / "beir-scifact" / "queries.jsonl", args.queries, with_title=False)
    zh_q = _texts(DATA / "zh-rgb" / "queries.jsonl", args.queries, with_title=False)

    minilm_dir = prepare_model_dir(HOME, 256)
    rows: list[tuple[str, Any, Any]] = [
        ("fastembed MiniLM (reference)", None, _FastembedRunner(minilm_dir)),
        ("agent-search MiniLM", FastEmbedder(minilm_dir, int8="dynamic"), None),
    ]
    if not args.no_e5:
        from agent_search.kb._e5 import E5Embedder, prepare_e5_dir

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
    print(f"\nload average during the run: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
