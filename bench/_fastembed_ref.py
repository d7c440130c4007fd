"""The reference the kb's embedding benchmarks are measured beside: fastembed on the same
model folder, and the SciFact texts both read (shared by ``bench_embed`` and
``bench_kb_speed``, which used to import each other)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_search.embedding import default_workers


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


class FastembedRunner:
    """fastembed's ``TextEmbedding`` on a model folder, run the way the kb runs its model:
    single-threaded sessions, a query on one, documents in length-sorted batches of 8 over
    one session per CPU (fastembed out of the box spins a thread per core in every call,
    which on a shared machine measures the other jobs more than the model)."""

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
