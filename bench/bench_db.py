"""Database search latency: natural language → QueryDSL (builtin generator) + SQL.

Run: ``.venv/bin/python -m bench.bench_db [--rounds 30] [--rows 1000000]``

1. **Chinook** (``../shared/data/chinook``, copied to a temp dir; all 11 tables offered to
   the generator): p50/p95 over ``--rounds`` passes of 8 natural-language queries.
   Goal: p50 of NL→DSL + query ≤ 10 ms.
2. **Synthetic orders table** of ``--rows`` rows (default 1,000,000), single-column
   indexes on the filtered/sorted columns, generated in a temp dir (never committed).
   Goal: p50 ≤ 20 ms.

Per dataset it reports: NL→DSL alone (the builtin generator on the handler's schemas);
the full ``handler.search`` (NL→DSL + SQL + items); and, as the baseline measured in the
same run, ``handler.search`` with the same DSL given explicitly (no generation), so the
ratio full ÷ baseline is what generation adds. Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

from agent_search.config import SearchConfig  # noqa: E402
from agent_search.context import Context  # noqa: E402
from agent_search.db import DBHandler, create_handler  # noqa: E402
from agent_search.query.dsl import generate_dsl  # noqa: E402
from agent_search.query.nl import BuiltinDSLGenerator  # noqa: E402
from agent_search.types import Request  # noqa: E402

CHINOOK = ROOT.parent / "shared" / "data" / "chinook" / "Chinook_Sqlite.sqlite"
CHINOOK_MODELS = ["Album", "Artist", "Customer", "Employee", "Genre", "Invoice",
                  "InvoiceLine", "MediaType", "Playlist", "PlaylistTrack", "Track"]
CHINOOK_QUERIES = [
    "tracks in the Jazz genre",
    "albums by AC/DC",
    "invoices of customers in Brazil",
    "the 5 most expensive tracks",
    "tracks longer than 5 minutes",
    "customers in NY state",
    "latest invoices",
    "albums by metalica",
]
SYNTH_QUERIES = [
    "paid orders from Brazil",
    "orders over $990",
    "the 10 largest orders",
    "latest orders in Germany",
    "cancelled orders of garden products",
    "orders between 100 and 120 dollars",
    "shipped orders in 2024",
    "orders by Alan Turing",
]
COUNTRIES = ["Argentina", "Australia", "Austria", "Belgium", "Brazil", "Canada", "Chile",
             "China", "Colombia", "Czechia", "Denmark", "Egypt", "Finland", "France",
             "Germany", "Greece", "Hungary", "India", "Indonesia", "Ireland", "Israel",
             "Italy", "Japan", "Kenya", "Korea", "Malaysia", "Mexico", "Morocco",
             "Netherlands", "New Zealand", "Nigeria", "Norway", "Pakistan", "Peru",
             "Philippines", "Poland", "Portugal", "Romania", "Saudi Arabia", "Singapore",
             "South Africa", "Spain", "Sweden", "Switzerland", "Thailand", "Turkey",
             "Ukraine", "United Kingdom", "USA", "Vietnam"]
STATUSES = ["pending", "paid", "shipped", "delivered", "cancelled"]
CATEGORIES = ["audio", "books", "computers", "garden", "games", "home", "kitchen", "music",
              "office", "outdoor", "pets", "phones", "sports", "tools", "toys", "travel",
              "video", "wearables", "beauty", "baby"]
FIRST = ["Ada", "Alan", "Grace", "Edsger", "Barbara", "Donald", "Margaret", "Ken", "Dennis",
         "Frances", "John", "Radia", "Tim", "Linus", "Guido", "Bjarne", "Anita", "Hedy"]
LAST = ["Lovelace", "Turing", "Hopper", "Dijkstra", "Liskov", "Knuth", "Hamilton",
        "Thompson", "Ritchie", "Allen", "McCarthy", "Perlman", "Berners-Lee", "Torvalds",
        "van Rossum", "Stroustrup", "Borg", "Lamarr"]


def make_synthetic(path: Path, rows: int) -> None:
    """An ``orders`` table of ``rows`` rows with indexes on what queries filter and sort."""
    rng = random.Random(42)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=OFF")
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("""CREATE TABLE orders (
        id INTEGER PRIMARY KEY, customer VARCHAR(60) NOT NULL, country VARCHAR(40) NOT NULL,
        category VARCHAR(20) NOT NULL, status VARCHAR(12) NOT NULL,
        amount NUMERIC(10, 2) NOT NULL, quantity INTEGER NOT NULL,
        created_at DATETIME NOT NULL)""")
    base = 1_640_995_200  # 2022-01-01

    def gen() -> Any:
        for i in range(1, rows + 1):
            yield (i, f"{rng.choice(FIRST)} {rng.choice(LAST)}", rng.choice(COUNTRIES),
                   rng.choice(CATEGORIES), rng.choice(STATUSES),
                   round(rng.uniform(1, 1000), 2), rng.randint(1, 9),
                   time.strftime("%Y-%m-%d %H:%M:%S",
                                 time.gmtime(base + rng.randrange(3 * 365 * 86400))))

    conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?, ?)", gen())
    for col in ("customer", "country", "category", "status", "amount", "created_at"):
        conn.execute(f"CREATE INDEX ix_orders_{col} ON orders ({col})")
    conn.execute("ANALYZE")
    conn.commit()
    conn.close()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(handler: DBHandler, models: list[str], queries: list[str],
                  rounds: int) -> dict[str, list[float]]:
    ctx = Context(config=handler.config)
    times: dict[str, list[float]] = {"nl": [], "full": [], "explicit": []}
    times.update({f"q:{q}": [] for q in queries})
    explicit: dict[str, dict[str, Any]] = {}
    for q in queries:  # warm-up: reflection, value index, caches; record the DSL
        r = await handler.search(ctx, Request(type="db", query=q, models=models, limit=10))
        if r.error or r.dsl is None:
            raise SystemExit(f"{q!r}: {r.error}")
        explicit[q] = {"queries": [{k: v for k, v in d.items() if k != "permission"}
                                   for d in r.dsl["queries"]]}
    entries = [handler.catalog.find(m) for m in models]
    schemas = [await handler.catalog.schema_with_values(e, queryable=True)
               for e in entries if e is not None]
    gen = BuiltinDSLGenerator()
    for _ in range(rounds):
        for q in queries:
            t0 = time.perf_counter()
            await generate_dsl(gen, q, schemas)
            times["nl"].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            await handler.search(ctx, Request(type="db", query=q, models=models, limit=10))
            times["full"].append((time.perf_counter() - t0) * 1000)
            times[f"q:{q}"].append(times["full"][-1])
            t0 = time.perf_counter()
            await handler.search(ctx, Request(type="db", query=q, models=models, limit=10,
                                              options={"dsl": explicit[q]}))
            times["explicit"].append((time.perf_counter() - t0) * 1000)
    return times


async def run_dataset(name: str, url: str, models: list[str], queries: list[str],
                      rounds: int, goal: float, home: Path,
                      per_query: list[str]) -> list[str]:
    handler = create_handler(SearchConfig(home=home, db={"url": url}))
    try:
        started = time.perf_counter()
        await handler.catalog.load()
        for m in models:
            entry = handler.catalog.find(m)
            if entry is not None:
                await handler.catalog.values(entry)
        warm = (time.perf_counter() - started) * 1000
        times = await measure(handler, models, queries, rounds)
    finally:
        await handler.aclose()
    for q in queries:
        t = times[f"q:{q}"]
        per_query.append(f"| {name} | {q} | {statistics.median(t):.2f} | {pct(t, 0.95):.2f} |")
    full_p50 = statistics.median(times["full"])
    base_p50 = statistics.median(times["explicit"])
    verdict = "✅" if full_p50 <= goal else "❌"
    return [
        f"| {name} | NL→DSL only (builtin) | {statistics.median(times['nl']):.2f} | "
        f"{pct(times['nl'], 0.95):.2f} | | |",
        f"| {name} | NL→DSL + query (`handler.search`) | {full_p50:.2f} | "
        f"{pct(times['full'], 0.95):.2f} | ≤ {goal:g} {verdict} | "
        f"{full_p50 / base_p50:.2f}× |",
        f"| {name} | baseline: explicit DSL + query | {base_p50:.2f} | "
        f"{pct(times['explicit'], 0.95):.2f} | | 1.00× |",
        f"| {name} | one-time: reflection + value index | {warm:.0f} | | | |",
    ]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-db-"))
    try:
        chinook = tmp / "chinook.sqlite"
        shutil.copyfile(CHINOOK, chinook)
        synth = tmp / "orders.sqlite"
        t0 = time.perf_counter()
        make_synthetic(synth, args.rows)
        build_s = time.perf_counter() - t0
        lines = [
            "| dataset | step | p50 ms | p95 ms | goal (p50) | × baseline |",
            "|---|---|---:|---:|---|---:|",
        ]
        per_query = ["| dataset | query | p50 ms | p95 ms |", "|---|---|---:|---:|"]
        lines += await run_dataset("Chinook (11 tables)", f"sqlite:///{chinook}",
                                   CHINOOK_MODELS, CHINOOK_QUERIES, args.rounds, 10.0,
                                   tmp / "h1", per_query)
        lines += await run_dataset(f"orders ({args.rows:,} rows)", f"sqlite:///{synth}",
                                   ["orders"], SYNTH_QUERIES, args.rounds, 20.0, tmp / "h2",
                                   per_query)
        print(f"SQLite (aiosqlite), {args.rounds} rounds × 8 queries per dataset, limit 10; "
              f"synthetic table built in {build_s:.1f} s.\n")
        print("\n".join(lines))
        print("\nPer query (NL→DSL + query):\n")
        print("\n".join(per_query))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
