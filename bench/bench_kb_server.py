"""The Qdrant-server path against the embedded store (issue 33 item 1): the same documents
must rank alike and pass the same floors on both, now that the server keeps the
collection statistics too (``_stats.<name>``, see ``agent_search/kb/_store/_stats_keeper.py``).
qdrant-client's local mode stands in for the server (``kb.url: file://…``).

1. SciFact test hybrid nDCG@10 (and recall@100), ``evaluate`` as ``eval retrieval``
   runs it: the corpus is embedded once into the embedded store's eval collection, its
   points (vectors and payloads, no re-embedding) are copied to the server through the
   store API — the statistics maintained write by write on the way, as any ingest does —
   and the same queries are asked of both. Goal: within 0.005.
2. The small-collection floors of ``bench/bench_floors.py`` (the same samples: SciFact,
   ArguAna, zh-rgb, mixed zh + en; the default floor), ingested by the real ingest into
   each store. Goal at 5 documents: hit@3 ≥ 0.90 and off-topic abstention ≥ 0.90 on both.

Run: ``.venv/bin/python -m bench.bench_kb_server`` (or ``make bench-kb-server``);
``--skip-corpus`` / ``--skip-floors`` leave a part out, ``--sizes 5`` the floors' sizes.
Data home: ``bench/results/kb_server_home`` (the SciFact collection is reused).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

import anyio  # noqa: E402

from agent_search import SearchConfig, Searcher  # noqa: E402
from agent_search.kb import close_stores, create_handler, ingest_paths  # noqa: E402
from agent_search.kb._store import (  # noqa: E402
    BASE_INDEXES,
    PointData,
    get_store,
)
from agent_search.kb.evaluation import collection_for, evaluate, passage_config  # noqa: E402
from agent_search.kb.settings import KBSettings  # noqa: E402
from bench.bench_floors import mixed, small_collections, tally_collection  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
HOME = ROOT / "bench" / "results" / "kb_server_home"


def _kb(store: str, home: Path) -> dict[str, Any]:
    return {"url": f"file://{(home / 'server').resolve()}"} if store == "server" else {}


def copy_to_server(home: Path, name: str) -> None:
    """The embedded store's collection ``name``, point for point, into the server."""
    edge = get_store(KBSettings(), home)
    server = get_store(KBSettings(url=_kb("server", home)["url"]), home)
    info = edge.info(name)
    if server.exists(name) and server.count(name) == info.points:
        return
    server.drop(name)
    server.create(name, int(info.meta["dimensions"]), info.meta, BASE_INDEXES)
    offset: str | None = None
    while True:
        records, offset = edge.scroll(name, None, limit=512, offset=offset, payload=True,
                                      vectors=True)
        server.upsert(name, [PointData(r.id, r.dense or [], r.sparse, r.payload)  # type: ignore[arg-type]
                             for r in records])
        if offset is None:
            break
    server.settle(name)


async def corpus(home: Path) -> dict[str, dict[str, float]]:
    folder = DATA / "beir-scifact"
    out = {}
    for store in ("edge", "server"):
        config = SearchConfig(home=home, kb=_kb(store, home))
        if store == "server":
            name = collection_for(folder / "corpus.jsonl", KBSettings.from_config(
                passage_config(SearchConfig(home=home))))
            await anyio.to_thread.run_sync(copy_to_server, home, name)
        report = await evaluate(config, folder, split="test", mode="hybrid")
        out[store] = {"ndcg_at_10": report.ndcg_at_10, "recall_at_100": report.recall_at_100,
                      "points": float(get_store(KBSettings.from_config(config), home)
                                      .count(report.collection))}
        print(f"  SciFact test, {store}: nDCG@10 {report.ndcg_at_10:.4f}", file=sys.stderr,
              flush=True)
    return out


async def floors(work: Path, store: str, sizes: set[int]) -> dict[tuple[str, int], list[int]]:
    """Per (source, size): [questions, hits@3, off-topic questions, abstentions]."""
    en_sci = small_collections("beir-scifact")
    zh = small_collections("zh-rgb")
    cols = [c for c in en_sci + small_collections("beir-arguana") + zh + mixed(zh, en_sci)
            if c.size in sizes]
    config = SearchConfig(home=work, kb=_kb(store, work))
    tally: dict[tuple[str, int], list[int]] = {}
    for n, col in enumerate(cols):
        name = f"small-{n}"
        path = work / f"{name}.jsonl"
        path.write_text("".join(json.dumps(d) + "\n" for d in col.docs), encoding="utf-8")
        await ingest_paths(config, [path], name)
        searcher = Searcher(config, handlers=[create_handler(config)])
        row = tally.setdefault((col.source, col.size), [0, 0, 0, 0])
        try:
            await tally_collection(searcher, col, name, row)
        finally:
            await searcher.aclose()
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skip-corpus", action="store_true")
    parser.add_argument("--skip-floors", action="store_true")
    parser.add_argument("--sizes", default="5,20,100")
    args = parser.parse_args()
    if not (DATA / "beir-scifact").is_dir():
        sys.exit(f"needs the benchmark data at {DATA}")
    HOME.mkdir(parents=True, exist_ok=True)
    whole = {} if args.skip_corpus else anyio.run(corpus, HOME)
    close_stores()
    sizes = {int(s) for s in args.sizes.split(",")}
    tallies = {}
    for store in ("edge", "server"):
        work = Path(tempfile.mkdtemp(prefix=f"bench-kb-server-{store}-"))
        if (HOME / "models").is_dir():
            (work / "models").symlink_to(HOME / "models", target_is_directory=True)
        tallies[store] = {} if args.skip_floors else anyio.run(floors, work, store, sizes)
        close_stores()
        shutil.rmtree(work, ignore_errors=True)
    print("\n| measure | collection | embedded (Qdrant Edge) | server (qdrant-client local "
          "mode) | goal |")
    print("|---|---|---:|---:|---|")
    if whole:
        e, s = whole["edge"], whole["server"]
        gap = abs(e["ndcg_at_10"] - s["ndcg_at_10"])
        print(f"| nDCG@10 hybrid (recall@100) | SciFact test, {int(e['points']):,} passages "
              f"| {e['ndcg_at_10']:.4f} ({e['recall_at_100']:.4f}) | {s['ndcg_at_10']:.4f} "
              f"({s['recall_at_100']:.4f}) | within 0.005: "
              f"{'yes' if gap <= 0.005 else 'NO'} (gap {gap:.4f}) |")
    for key in sorted(tallies["edge"]):
        e, s = tallies["edge"][key], tallies["server"][key]
        goal = "≥ 0.90" if key[1] <= 10 else ""
        print(f"| hit@3 ({e[0]} questions) | {key[0]}, {key[1]} docs | {e[1] / e[0]:.2f} | "
              f"{s[1] / s[0]:.2f} | {goal} |")
        print(f"| off-topic abstention ({e[2]}) | {key[0]}, {key[1]} docs | "
              f"{e[3] / e[2]:.2f} | {s[3] / s[2]:.2f} | {goal} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
