"""Core searcher overhead: fan-out, merging, citations, events and trace.

Three handlers each sleep 50 ms and return 10 items.
(a) one ``search_many`` of the three: median wall time over 30 calls ÷ 50 ms;
(b) 1,000 concurrent ``search_many`` calls (+ merge): CPU ms per call, wall ÷ 50 ms,
    peak RSS.
The baseline is a bare ``asyncio.gather`` of three coroutines with a hand-written
reciprocal-rank fusion over dicts, measured in the same run. LangChain's
``EnsembleRetriever`` (weighted reciprocal-rank fusion) over three retrievers doing the
same (sleep 50 ms, 10 ``Document``s each) is a column of its own when ``langchain-core``
and ``langchain-classic`` are installed (``pip install -e '.[bench]'``), "not installed"
otherwise. Each scenario runs in its own process so peak RSS is its own.

Run: ``.venv/bin/python -m bench.bench_core`` (or ``make bench``).

``--baseline REF [--runs N]``: agent-search's (b) CPU per call at this checkout against
the package at git ref ``REF`` (exported with ``git archive`` into a temporary folder),
alternated run by run N times in the same session (the machine is shared and noisy: a
ratio per pair, not two figures from different hours).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

SLEEP = 0.05
ITEMS = 10
CONCURRENT = 1000
SEQUENTIAL = 30


# -- baseline: bare gather + RRF over dicts ------------------------------------------


async def _bare_source(name: str) -> list[dict[str, Any]]:
    await asyncio.sleep(SLEEP)
    return [
        {
            "id": f"{name}-{i}",
            "url": f"http://{name}.example/{i}",
            "title": f"{name} {i}",
            "content": "text",
            "score": 1 - i / 20,
        }
        for i in range(ITEMS)
    ]


async def _bare_call() -> list[dict[str, Any]]:
    lists = await asyncio.gather(*(_bare_source(n) for n in ("web", "kb", "db")))
    fused: dict[str, float] = {}
    docs: dict[str, dict[str, Any]] = {}
    for ranked in lists:
        for rank, doc in enumerate(ranked):
            fused[doc["id"]] = fused.get(doc["id"], 0.0) + 1.0 / (60 + rank)
            docs[doc["id"]] = doc
    return [docs[k] for k in sorted(fused, key=fused.__getitem__, reverse=True)]


# -- agent-search --------------------------------------------------------------------


def _make_searcher() -> Any:
    from agent_search import Request, Result, ResultItem, Searcher

    class SleepyHandler:
        def __init__(self, type_: str) -> None:
            self.type = type_
            self.calls = 0

        def can_handle(self, ctx: Any, request: Any) -> bool:
            return True

        async def search(self, ctx: Any, request: Any) -> Result:
            await asyncio.sleep(SLEEP)
            self.calls += 1  # fresh URLs per call, so URL normalisation is never cached
            items = [
                ResultItem(
                    title=f"{self.type} {i}",
                    content="text",
                    url=f"http://{self.type}.example/{self.calls}/{i}",
                    score=1 - i / 20,
                )
                for i in range(ITEMS)
            ]
            return Result(type=self.type, query=request.query, items=items, total=ITEMS)

    searcher = Searcher()
    for t in ("web", "kb", "db"):
        searcher.registry.register(SleepyHandler(t))
    requests = [
        Request(type=t, query="benchmark query", source="hook") for t in ("web", "kb", "db")
    ]
    return searcher, requests


class _CountingSink:
    """Consumes events as a client would (counts them, keeps none), so the figures do not
    include holding 33,000 event objects alive until the end of the run."""

    def __init__(self) -> None:
        self.count = 0

    def emit(self, event: Any) -> None:
        self.count += 1


async def _ours_call(searcher: Any, requests: Any) -> Any:
    sink = _CountingSink()
    ctx = searcher.context(events=sink)
    results = await searcher.search_many(requests, ctx=ctx)
    merged = await searcher.merge(results, ctx=ctx)
    assert len(merged.items) == 10 and all(r.ok for r in results)
    assert sink.count == 3 + 30 + 3  # start, one per item, complete
    return merged


# -- LangChain: EnsembleRetriever over three retrievers -------------------------------


def _make_ensemble() -> Any:
    """LangChain's EnsembleRetriever over three retrievers that behave like the handlers
    above: sleep 50 ms, return 10 ``Document``s (title, fresh url and score in metadata).
    Documents are told apart by url (``id_key``), as agent-search's merge does."""
    from langchain_classic.retrievers import EnsembleRetriever
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    class SleepyRetriever(BaseRetriever):
        type: str
        calls: int = 0

        def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
            raise NotImplementedError  # only the async path is measured

        async def _aget_relevant_documents(
            self, query: str, *, run_manager: Any
        ) -> list[Document]:
            await asyncio.sleep(SLEEP)
            self.calls += 1
            return [
                Document(
                    page_content="text",
                    metadata={
                        "title": f"{self.type} {i}",
                        "url": f"http://{self.type}.example/{self.calls}/{i}",
                        "score": 1 - i / 20,
                    },
                )
                for i in range(ITEMS)
            ]

    retrievers = [SleepyRetriever(type=t) for t in ("web", "kb", "db")]
    return EnsembleRetriever(retrievers=retrievers, weights=[1 / 3] * 3, id_key="url")


async def _langchain_call(ensemble: Any) -> Any:
    docs = await ensemble.ainvoke("benchmark query")
    assert len(docs) == 3 * ITEMS
    return docs[:ITEMS]


# -- scenarios (each in its own process) ---------------------------------------------


async def _items_call(handlers: Any, ctx: Any, requests: Any) -> Any:
    """The floor of any design whose handlers return pydantic items: the same three
    handlers, gathered bare, their items fused by the hand-written RRF."""
    pairs = zip(handlers, requests, strict=True)
    results = await asyncio.gather(*(h.search(ctx, r) for h, r in pairs))
    fused: dict[str, float] = {}
    items: dict[str, Any] = {}
    for result in results:
        for rank, item in enumerate(result.items):
            fused[item.url] = fused.get(item.url, 0.0) + 1.0 / (60 + rank)
            items[item.url] = item
    return [items[k] for k in sorted(fused, key=fused.__getitem__, reverse=True)]


async def _scenario(name: str) -> dict[str, float]:
    if name.startswith("ours"):
        searcher, requests = _make_searcher()

        async def call() -> Any:
            return await _ours_call(searcher, requests)
    elif name.startswith("items"):
        searcher, requests = _make_searcher()
        handlers = [searcher.registry.handlers(r.type)[0] for r in requests]
        ctx = searcher.context()

        async def call() -> Any:
            return await _items_call(handlers, ctx, requests)
    elif name.startswith("langchain"):
        try:
            ensemble = _make_ensemble()
        except ImportError:
            return {"not_installed": 1.0}

        async def call() -> Any:
            return await _langchain_call(ensemble)
    else:
        call = _bare_call
    await call()  # warm up imports and caches
    if name.endswith("sequential"):
        walls = []
        for _ in range(SEQUENTIAL):
            t0 = time.perf_counter()
            await call()
            walls.append(time.perf_counter() - t0)
        return {"ratio": statistics.median(walls) / SLEEP}
    cpu0, wall0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(call() for _ in range(CONCURRENT)))
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return {
        "cpu_ms_per_call": cpu * 1000 / CONCURRENT,
        "wall_ratio": wall / SLEEP,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


ROOT = Path(__file__).resolve().parents[1]


def _run_child(name: str, tree: Path | None = None) -> dict[str, float]:
    """One scenario in a process of its own, importing ``agent_search`` from ``tree``
    (default: this checkout)."""
    env = {**os.environ, "PYTHONPATH": str(tree or ROOT)}
    out = subprocess.run(
        [sys.executable, __file__, "--scenario", name],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def _export(ref: str, into: Path) -> Path:
    """The ``agent_search`` package at git ``ref``, written under ``into``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", ref,
                              "agent_search"], capture_output=True, check=True).stdout
    tar_path = into / "tree.tar"
    tar_path.write_bytes(archive)
    with tarfile.open(tar_path) as tar:
        tar.extractall(into, filter="data")
    return into


def compare(ref: str, runs: int) -> None:
    """(b) CPU per call, this checkout vs ``ref``, alternated ``runs`` times."""
    with tempfile.TemporaryDirectory() as tmp:
        base = _export(ref, Path(tmp))
        pairs = []
        for n in range(runs):
            order = [("base", base), ("head", None)]
            if n % 2:
                order.reverse()  # neither always runs first
            got = {k: _run_child("ours-concurrent", tree)["cpu_ms_per_call"]
                   for k, tree in order}
            pairs.append((got["base"], got["head"]))
            print(f"run {n + 1}: {ref} {got['base']:.3f} ms, this checkout "
                  f"{got['head']:.3f} ms, ratio {got['head'] / got['base']:.3f}", flush=True)
    ratios = [h / b for b, h in pairs]
    print(f"\n(b) CPU ms per call over {runs} runs: {ref} median "
          f"{statistics.median(b for b, _ in pairs):.3f}, this checkout median "
          f"{statistics.median(h for _, h in pairs):.3f}; per-run ratio median "
          f"{statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})")


_KINDS = ("bare", "items", "langchain", "ours")
_HEADER = (
    "| measure | bare gather + RRF | pydantic items, bare gather "
    "| LangChain EnsembleRetriever | agent-search | goal |"
)


def _cells(rows: dict[str, dict[str, float]], mode: str, key: str, fmt: str) -> str:
    """One table row's figures, a column per kind; "not installed" where LangChain is
    missing."""
    cells = []
    for kind in _KINDS:
        row = rows[f"{kind}-{mode}"]
        cells.append("not installed" if "not_installed" in row else format(row[key], fmt))
    return " | ".join(cells)


def main() -> None:
    rows = {
        f"{kind}-{mode}": _run_child(f"{kind}-{mode}")
        for kind in _KINDS
        for mode in ("sequential", "concurrent")
    }
    print("### Core searcher (3 handlers × 50 ms × 10 items)\n")
    print(_HEADER)
    print("|---|---:|---:|---:|---:|---:|")
    print(
        "| (a) one search_many: median wall ÷ 50 ms (30 calls) "
        f"| {_cells(rows, 'sequential', 'ratio', '.3f')} | ≤ 1.04 |"
    )
    print(
        "| (b) 1,000 concurrent calls: CPU ms per call "
        f"| {_cells(rows, 'concurrent', 'cpu_ms_per_call', '.3f')} | ≤ LangChain |"
    )
    print(
        "| (b) 1,000 concurrent calls: total wall ÷ 50 ms "
        f"| {_cells(rows, 'concurrent', 'wall_ratio', '.2f')} | |"
    )
    print(
        f"| (b) peak RSS, MB | {_cells(rows, 'concurrent', 'peak_rss_mb', '.0f')} | ≤ 150 |"
    )
    print(
        "\nagent-search calls include merging (dedupe, weights, score rerank), citation ids, "
        "events (emitted to a sink that counts them) and the trace tree. The second column "
        "runs the same three handlers (each builds its 10 pydantic ResultItems) under a bare "
        "asyncio.gather with the hand-written fusion: the floor of any design whose "
        "handlers return pydantic models. LangChain's EnsembleRetriever runs three "
        "retrievers that do the same (10 Documents each) and fuses them by weighted RRF, "
        "deduplicating by url."
    )


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--scenario":
        print(json.dumps(asyncio.run(_scenario(sys.argv[2]))))
    elif len(sys.argv) > 1:
        import argparse

        parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
        parser.add_argument("--baseline", required=True, metavar="REF",
                            help="git ref whose agent_search package is the baseline")
        parser.add_argument("--runs", type=int, default=5, help="alternated pairs of runs")
        args = parser.parse_args()
        compare(args.baseline, max(1, args.runs))
    else:
        main()
