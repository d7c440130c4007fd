"""Follow-up questions read in context: chat threads on databases and docs nobody tuned for.

Run: ``make bench-conversations`` or
``.venv/bin/python -m bench.bench_conversations [--split working|locked|all] [--show]``

The threads are ``bench/conversation_threads.json`` (written as users speak, labelled
before any run, split once into ``working`` and ``locked``): follow-ups on five Spider dev
databases (``../shared/data/spider-dev-public/db``, copied to a temporary folder), on
this project's own ``docs/*.md`` (ingested into a knowledge base in
``bench/results/conversations_home``), and topic switches. The last turn of each thread
is searched as the agent runtime reads it (:func:`agent_search.agent.read_conversation`:
the db search gets the last turn and the earlier user turns in ``options.history``, the
kb search the reading's text), beside:

* ``before``: the old rule (a follow-up under four words prefixed with the previous
  question, a longer one searched alone);
* ``whole``: the follow-up rewritten by hand as a whole question, searched alone (the
  ceiling).

Scores: db follow-ups: record F1 of the items of the asked table against the gold SQL's
primary keys (recall over at most 100 gold records: no more is shown); docs follow-ups:
a labelled page among the first 3 hits; topic switches: the last turn scores as well as
when asked alone (db F1, docs top-3). ``--split working`` (the default while writing
rules) prints the working part; ``all`` prints both parts (read the locked one's
aggregate once). Needs ``../shared``; prints a one-line skip without it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent

from agent_search import Request, Searcher  # noqa: E402
from agent_search._builtins import register_builtin_handlers  # noqa: E402
from agent_search.agent import read_conversation  # noqa: E402
from agent_search.config import SearchConfig  # noqa: E402
from agent_search.kb import close_stores, create_handler, ingest_paths  # noqa: E402

THREADS = ROOT / "bench" / "conversation_threads.json"
SPIDER = ROOT.parent / "shared" / "data" / "spider-dev-public" / "db"
DOCS = ROOT / "docs"
COLLECTION = "project_docs"
MAX_SHOWN = 100
Search = tuple[str, list[str]]  # (query, earlier turns for the db)


def before(turns: list[str]) -> Search:
    """The rule this replaces: under four words, glued to the previous question."""
    last = turns[-1]
    if len(last.split()) < 4 and len(turns) > 1:
        return f"{turns[-2]} {last}", []
    return last, []


def in_context(turns: list[str], kind: str) -> Search:
    reading = read_conversation([{"role": "user", "content": t} for t in turns])
    if kind == "db":
        return reading.last, reading.earlier
    return reading.query, []


def db_f1(items: list[Any], model: str, gold: set[str]) -> float:
    got = {str(i.record_id) for i in items if (i.model or "").lower() == model.lower()}
    if not gold:
        return 1.0 if not items else 0.0
    hits = len(got & gold)
    if hits == 0:
        return 0.0
    precision = hits / len(items)
    recall = hits / min(len(gold), MAX_SHOWN)
    return 2 * precision * recall / (precision + recall)


class Bench:
    def __init__(self, work: Path) -> None:
        self.work = work
        self.dbs: dict[str, Searcher] = {}
        self.kb: Searcher | None = None

    async def db(self, name: str) -> Searcher:
        if name not in self.dbs:
            path = self.work / f"{name}.sqlite"
            shutil.copy(SPIDER / f"{name}.sqlite", path)
            config = SearchConfig(home=self.work / name,
                                  db={"url": f"sqlite:///{path}", "max_results": MAX_SHOWN},
                                  options={"timeout": 120, "deadline": 120})
            searcher = Searcher(config)
            register_builtin_handlers(searcher.registry, config)
            self.dbs[name] = searcher
        return self.dbs[name]

    async def docs(self, home: Path) -> Searcher:
        if self.kb is None:
            config = SearchConfig(home=home, kb={"source_root": str(DOCS)},
                                  options={"timeout": 300, "deadline": 300})
            files = sorted(DOCS.glob("*.md"))
            await ingest_paths(config, files, COLLECTION)
            self.kb = Searcher(config, handlers=[create_handler(config)])
        return self.kb

    async def score_db(self, thread: dict[str, Any], search: Search) -> float:
        searcher = await self.db(thread["db"])
        query, earlier = search
        options = {"history": earlier} if earlier else {}
        result = await searcher.search(Request(type="db", query=query, options=options))
        conn = sqlite3.connect(SPIDER / f"{thread['db']}.sqlite")
        try:
            gold = {str(r[0]) for r in conn.execute(thread["gold_sql"])}
        finally:
            conn.close()
        return db_f1(result.items, thread["model"], gold)

    async def score_docs(self, thread: dict[str, Any], search: Search, home: Path) -> float:
        searcher = await self.docs(home)
        result = await searcher.search(Request(type="kb", query=search[0], limit=5,
                                               collections=[COLLECTION], min_score=0.0))
        pages = [Path(str(i.metadata.get("source") or "")).name for i in result.items][:3]
        return 1.0 if set(pages) & set(thread["pages"]) else 0.0

    async def aclose(self) -> None:
        for s in [*self.dbs.values(), *([self.kb] if self.kb else [])]:
            await s.aclose()


READINGS: dict[str, Callable[[dict[str, Any]], Search]] = {
    "before": lambda t: before(t["turns"]),
    "builtin": lambda t: in_context(t["turns"], _last_kind(t)),
    "whole": lambda t: (t.get("whole") or t["turns"][-1], []),
    "alone": lambda t: (t["turns"][-1], []),
}


def _last_kind(thread: dict[str, Any]) -> str:
    return str(thread.get("last") or thread["kind"])


async def run(threads: list[dict[str, Any]], home: Path, show: bool) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        bench = Bench(Path(tmp))
        try:
            for t in threads:
                scores: dict[str, float] = {}
                for name, read in READINGS.items():
                    search = read(t)
                    if _last_kind(t) == "db":
                        scores[name] = await bench.score_db(t, search)
                    else:
                        scores[name] = await bench.score_docs(t, search, home)
                rows.append({"id": t["id"], "split": t["split"], "kind": t["kind"], **scores})
                if show:
                    print(f"{t['id']:6} {t['split']:8} " + " ".join(
                        f"{k}={v:.2f}" for k, v in scores.items()), file=sys.stderr)
        finally:
            await bench.aclose()
    return {"rows": rows}


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def table(rows: list[dict[str, Any]], splits: list[str]) -> str:
    out = ["| measure | split | n | before | builtin | whole (by hand) | goal |",
           "|---|---|---:|---:|---:|---:|---:|"]
    for split in splits:
        part = [r for r in rows if split == "all" or r["split"] == split]
        for kind, label, goal in (("db", "db follow-ups: record F1", "≥ 0.70"),
                                  ("docs", "docs follow-ups: top-3", "≥ 0.80")):
            sel = [r for r in part if r["kind"] == kind]
            out.append(f"| {label} | {split} | {len(sel)} | "
                       + " | ".join(f"{_mean([r[c] for r in sel]):.2f}"
                                    for c in ("before", "builtin", "whole")) + f" | {goal} |")
        sw = [r for r in part if r["kind"] == "switch"]
        held = {c: sum(1 for r in sw if r[c] >= r["alone"] - 1e-9) for c in ("before", "builtin")}
        out.append(f"| topic switches: as good as alone | {split} | {len(sw)} | "
                   f"{held['before']}/{len(sw)} | {held['builtin']}/{len(sw)} | | all |")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("working", "locked", "all"), default="working")
    parser.add_argument("--show", action="store_true", help="one line per thread (stderr)")
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "results" /
                        "conversations_home", help="data home of the docs collection")
    args = parser.parse_args()
    if not SPIDER.is_dir():
        print(f"bench_conversations: skipped, {SPIDER} is missing (../shared)")
        return 0
    every = json.loads(THREADS.read_text(encoding="utf-8"))["threads"]
    threads = [t for t in every if args.split in ("all", t["split"])]
    args.work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    try:
        result = anyio.run(run, threads, args.work, args.show)
    finally:
        close_stores()
    splits = ["working", "locked", "all"] if args.split == "all" else [args.split]
    print(table(result["rows"], splits))
    print(f"\n{len(threads)} threads, {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
