"""The cost of adding one note to a large collection (issue 33 item 2): the collection
statistics are kept up to date write by write, so the CPU an ingest of one note takes
should not grow with the collection.

Collections of 100, 5,183 (SciFact's abstracts: ``../shared/data/beir-scifact``) and
17,000 documents (SciFact's, then synthetic ones: sentences of two random abstracts
mixed) are written through the store API — their real BM25 vectors, random unit dense
vectors (what the dense moments cost does not depend on the values; embedding 17,000
documents would take ~10 minutes on 2 cores) — and settled as an ingest settles. Then a
real ``ingest_paths`` of one new Markdown note (embedded by the model) into each, in
rounds (one note per collection per round, so load drifts hit every size alike), and the
process CPU time (all threads) of each. Reported: the median per size, its excess over
the 100-document collection's (the goal: ≤ 0.3 s at 5,000 and flat from there), and, as
the baseline of the same run, the CPU of a full rebuild of the statistics from every
point (``kb repair``: what every ingest paid before).

Run: ``.venv/bin/python -m bench.bench_kb_stats`` (or ``make bench-kb-stats``);
``--store server`` measures the Qdrant-server path (qdrant-client's local mode as the
server, ``kb.url: file://…``); ``--sizes 100,5183`` and ``--rounds 3`` for a shorter run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

import anyio  # noqa: E402
import numpy as np  # noqa: E402

from agent_search import SearchConfig  # noqa: E402
from agent_search.embedding import get_embedder  # noqa: E402
from agent_search.kb import (  # noqa: E402
    Access,
    close_stores,
    ingest_paths,
)
from agent_search.kb._store import (  # noqa: E402
    BASE_INDEXES,
    ID_SCHEME,
    KBStore,
    PointData,
    bm25_of,
    collection_meta,
    get_store,
    point_id,
)
from agent_search.kb._store._stats_keeper import StatsKeeper  # noqa: E402
from agent_search.kb._store._stats_state import StatsState  # noqa: E402
from agent_search.kb.settings import KBSettings  # noqa: E402

SCIFACT = ROOT.parent / "shared" / "data" / "beir-scifact"
HOME = Path(os.environ.get("AGENT_SEARCH_HOME") or ROOT / "bench" / "results" /
            "kb_stats_home")
GOAL_EXTRA_S = 0.3


def corpus_texts(n: int, seed: int = 0) -> list[str]:
    """SciFact's abstracts (title and text), then synthetic documents: the sentences of
    two random abstracts, shuffled (their words keep SciFact's distribution)."""
    base = []
    with open(SCIFACT / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            base.append(f"{row.get('title', '')}\n\n{row.get('text', '')}")
    rng = np.random.default_rng(seed)
    out = base[:n]
    while len(out) < n:
        a, b = (base[i] for i in rng.integers(0, len(base), size=2))
        sentences = [s for s in (a + " " + b).replace("\n", " ").split(". ") if s]
        rng.shuffle(sentences)
        out.append(". ".join(sentences))
    return out


def build(store: KBStore, name: str, texts: list[str], settings: KBSettings,
          home: Path) -> float:
    """A collection of ``texts`` written through the store API (see the module
    docstring); returns the seconds it took."""
    t0 = time.perf_counter()
    embedder = get_embedder(settings, home)
    bm25 = bm25_of({}, settings)
    counts = [bm25.doc_counts(t) for t in texts]
    avgdl = float(np.mean([c.length for c in counts])) if counts else 1.0
    meta = collection_meta(settings, embedder, avgdl)
    store.create(name, embedder.dimensions, meta, BASE_INDEXES)
    rng = np.random.default_rng(len(texts))
    access = Access.of()
    for lo in range(0, len(texts), 1024):
        dense = rng.normal(size=(min(1024, len(texts) - lo), embedder.dimensions))
        dense /= np.linalg.norm(dense, axis=1, keepdims=True)
        points = []
        for i, vec in zip(range(lo, lo + len(dense)), dense, strict=True):
            source = f"bench/doc{i}.txt"
            points.append(PointData(
                point_id(name, source, source, 0, access, kind="u64"), vec.tolist(),
                bm25.vector_of(counts[i], avgdl),
                {"document_id": source, "source": source, "title": None,
                 "content": texts[i], "chunk_index": 0, "headings": [], "page": None,
                 "content_hash": "bench", "id_scheme": ID_SCHEME,
                 "meta": {"source": source, "type": "txt"}, **access.payload()}))
        store.upsert(name, points)
    store.settle(name)
    return time.perf_counter() - t0


class StatsClock:
    """Process CPU spent in the statistics code (the keeper's sessions, reads of the
    written points' vectors, the state's updates, the save), outermost calls only: the
    part of a note's cost that this issue is about, apart from the store's own."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._depth = 0

    def wrap(self, owner: type, name: str) -> None:
        inner = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            self._depth += 1
            t0 = time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                self._depth -= 1
                if not self._depth:
                    self.seconds += time.process_time() - t0

        setattr(owner, name, timed)


STATS_CLOCK = StatsClock()
for _owner, _name in ((StatsKeeper, "settle"), (StatsKeeper, "_session"),
                      (StatsKeeper, "_vectors"), (StatsState, "add"), (StatsState, "remove")):
    STATS_CLOCK.wrap(_owner, _name)


def one_note(config: SearchConfig, name: str, folder: Path, i: int,
             fresh: bool = True) -> tuple[float, float]:
    """CPU and wall seconds of a real ingest of one new note into ``name``."""
    note = folder / f"{name}-note-{i}.md"
    note.write_text(f"# Field note {i}\n\nThe hive {i} swarmed on day {i * 7 % 31}: "
                    f"a colony of honey bees left with the old queen, {i} frames of brood "
                    "stayed behind, and the beekeeper caught the swarm in a box.\n",
                    encoding="utf-8")
    c0, w0 = time.process_time(), time.perf_counter()
    report = anyio.run(lambda: ingest_paths(config, [note], name))
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    assert report.added == 1 or not fresh, report
    return cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,5183,17000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--store", choices=["edge", "server"], default="edge")
    parser.add_argument("--keep", action="store_true", help="reuse the built collections")
    args = parser.parse_args()
    if not (SCIFACT / "corpus.jsonl").is_file():
        sys.exit(f"needs BEIR SciFact at {SCIFACT}")
    sizes = [int(s) for s in args.sizes.split(",")]
    home = HOME / args.store
    if not args.keep and home.exists():
        shutil.rmtree(home)
    home.mkdir(parents=True, exist_ok=True)
    kb: dict[str, Any] = {}
    if args.store == "server":
        kb["url"] = f"file://{(home / 'server').resolve()}"
    config = SearchConfig.model_validate({"home": str(home), "kb": kb})
    settings = KBSettings.from_config(config)
    store = get_store(settings, home)
    built = {}
    for n in sizes:
        name = f"n{n}"
        if not store.exists(name):
            built[n] = build(store, name, corpus_texts(n), settings, home)
            print(f"built {name}: {n} documents in {built[n]:.1f} s", flush=True)
    notes = home / "notes"
    notes.mkdir(exist_ok=True)
    one_note(config, f"n{sizes[0]}", notes, 10_000, fresh=False)  # warm-up: the model, the analyser
    cpu: dict[int, list[float]] = {n: [] for n in sizes}
    wall: dict[int, list[float]] = {n: [] for n in sizes}
    in_stats: dict[int, list[float]] = {n: [] for n in sizes}
    first = 1 + max((int(p.stem.rsplit("-", 1)[1]) for p in notes.glob("*-note-*.md")
                     if p.stem.rsplit("-", 1)[1].isdigit() and int(p.stem.rsplit("-", 1)[1])
                     < 10_000), default=-1)  # new notes on a rerun (--keep)
    for r in range(first, first + args.rounds):
        for n in sizes:
            before = STATS_CLOCK.seconds
            c, w = one_note(config, f"n{n}", notes, r)
            cpu[n].append(c)
            wall[n].append(w)
            in_stats[n].append(STATS_CLOCK.seconds - before)
        print(f"round {r + 1 - first}/{args.rounds}: " + ", ".join(
            f"{n}: {cpu[n][-1]:.3f} s" for n in sizes), flush=True)
    rebuild = {}
    for n in sizes:
        c0 = time.process_time()
        store.repair(f"n{n}")
        rebuild[n] = time.process_time() - c0
    close_stores()
    base = statistics.median(cpu[sizes[0]])
    rows = [{"documents": n, "points": n + args.rounds + (n == sizes[0]),
             "note_cpu_s": round(statistics.median(cpu[n]), 3),
             "note_wall_s": round(statistics.median(wall[n]), 3),
             "extra_cpu_s": round(statistics.median(cpu[n]) - base, 3),
             "stats_cpu_s": round(statistics.median(in_stats[n]), 3),
             "full_rebuild_cpu_s": round(rebuild[n], 3)} for n in sizes]
    print(f"\nstore: {args.store}; one-note ingest, median of {args.rounds} rounds "
          "(process CPU, all threads)\n")
    print("| documents | one note: CPU s | wall s | extra CPU vs "
          f"{sizes[0]} docs | of which statistics CPU s | full rebuild CPU s (the old "
          "per-ingest cost) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(f"| {row['documents']:,} | {row['note_cpu_s']:.3f} | {row['note_wall_s']:.3f} "
              f"| {row['extra_cpu_s']:+.3f} | {row['stats_cpu_s']:.3f} "
              f"| {row['full_rebuild_cpu_s']:.3f} |")
    worst = max(r["extra_cpu_s"] for r in rows)
    print(f"\ngoal: extra ≤ {GOAL_EXTRA_S} s at every size: "
          f"{'met' if worst <= GOAL_EXTRA_S else 'NOT met'} (largest {worst:+.3f} s)")
    out = ROOT / "bench" / "results" / f"kb_stats_{args.store}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"store": args.store, "rounds": args.rounds, "rows": rows,
                               "cpu": {str(k): v for k, v in cpu.items()}}, indent=1))


if __name__ == "__main__":
    main()
