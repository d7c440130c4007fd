"""Build the held-out database set of ``bench/bench_spider.py`` (databases nobody tuned for).

Run once, from read-only git snapshots of three public repositories (never committed here):

    .venv/bin/python -m bench.build_db_unseen OUT \\
        --spider-dbs  /path/to/hyukkyukang+text2SQL/repo   (Spider and KaggleDBQA SQLite files)
        --spider-train /path/to/tjhalanigrid+Text2Sql/repo  (Spider's train questions)
        --kaggle      /path/to/Chia-Hsuan-Lee+KaggleDBQA/repo

``OUT`` gets ``db/<db_id>.sqlite``, ``questions.json`` (the layout of
``spider-dev-public``: ``{id, db_id, source, question, query, result, n_rows}``),
``split.json`` (``{"working": [...], "locked": [...]}``) and ``SOURCE.txt``.

Which databases, and which part each falls in, is decided by the data alone, before any
question is read: Spider *train* databases (Spider's split is by database, so none of them
is a dev database, public or hidden) with at least 20 questions, minus the ones this
project already tunes on (Chinook and its copy), taken in the order of the SHA-1 of their
names; KaggleDBQA's databases whose SQLite file the snapshot holds. The working / locked
split is the parity of a second hash, once. A question whose gold SQL fails or runs more
than two seconds on its database is left out; at most ``--per-db`` questions a database,
in the file's order (Spider writes paraphrases next to each other).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

SEEN = {"chinook_1", "store_1"}  # Chinook: the project's own sample and its tests
MIN_QUESTIONS = 20


def _git(repo: Path, path: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{path}"], check=True,
                          capture_output=True).stdout


def _head(repo: Path) -> str:
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


def _hash(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def _gold(conn: sqlite3.Connection, sql: str) -> tuple[list[list[Any]], int] | None:
    """The first 50 rows of the gold and how many it returns; None when it fails or runs
    more than two seconds."""
    deadline = time.monotonic() + 2.0
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    try:
        rows = conn.execute(sql).fetchall()
    except sqlite3.Error:
        return None
    finally:
        conn.set_progress_handler(None, 0)
    return [list(r) for r in rows[:50]], len(rows)


def build(out: Path, dbs: Path, train: Path, kaggle: Path, n_spider: int,
          per_db: int) -> dict[str, Any]:
    (out / "db").mkdir(parents=True, exist_ok=True)
    spider_q = json.loads(_git(train, "data/train_spider.json"))
    dev = {q["db_id"] for q in json.loads(_git(dbs, "datasets/spider/dev.json"))}
    by_db: dict[str, list[dict[str, Any]]] = {}
    for q in spider_q:
        by_db.setdefault(q["db_id"], []).append({**q, "source": "spider-train"})
    listing = subprocess.run(["git", "-C", str(dbs), "ls-tree", "-r", "-l", "HEAD",
                              "datasets"], check=True, capture_output=True,
                             text=True).stdout
    present = {line.split("\t")[1] for line in listing.splitlines()
               if line.endswith(".sqlite") and line.split()[3] != "BAD"}
    candidates = sorted((d for d, qs in by_db.items()
                         if len(qs) >= MIN_QUESTIONS and d not in dev and d not in SEEN
                         and f"datasets/spider/database/{d}/{d}.sqlite" in present),
                        key=_hash)[:n_spider]
    chosen = {d: f"datasets/spider/database/{d}/{d}.sqlite" for d in candidates}
    for path in sorted(present):
        if path.startswith("datasets/kaggle-dbqa/databases/"):
            d = path.split("/")[-2]
            chosen[d] = path
            by_db[d] = [{**q, "source": "kaggledbqa"}
                        for q in json.loads(_git(kaggle, f"examples/{d}.json"))]
    questions: list[dict[str, Any]] = []
    for d, path in sorted(chosen.items()):
        target = out / "db" / f"{d}.sqlite"
        target.write_bytes(_git(dbs, path))
        conn = sqlite3.connect(target)
        conn.text_factory = lambda b: b.decode(errors="replace")
        kept = 0
        for i, q in enumerate(by_db[d]):
            if kept >= per_db:
                break
            gold = _gold(conn, q["query"])
            if gold is None:
                continue
            questions.append({"id": f"{q['source']}_{d}_{i:04d}", "db_id": d,
                              "source": q["source"], "question": q["question"],
                              "query": q["query"], "result": gold[0], "n_rows": gold[1]})
            kept += 1
        conn.close()
    locked = sorted(d for d in chosen if int(_hash("locked:" + d), 16) % 2)
    split = {"working": sorted(set(chosen) - set(locked)), "locked": locked}
    (out / "questions.json").write_text(json.dumps(questions, indent=0, default=str))
    (out / "split.json").write_text(json.dumps(split, indent=1))
    (out / "SOURCE.txt").write_text(_source(dbs, train, kaggle, split, len(questions)))
    return split


def _source(dbs: Path, train: Path, kaggle: Path, split: dict[str, list[str]],
            n: int) -> str:
    return f"""Databases nobody tuned for: {len(split['working']) + len(split['locked'])} \
databases, {n} questions (built by bench/build_db_unseen.py).
Spider 1.0 *train* databases and questions (Yu et al., EMNLP 2018). Licence CC BY-SA 4.0.
  SQLite files: github.com/hyukkyukang/text2SQL {_head(dbs)} datasets/spider/database/
  questions:    github.com/tjhalanigrid/Text2Sql {_head(train)} data/train_spider.json
                (question, query, db_id of Spider's train_spider.json)
KaggleDBQA (Lee et al., ACL 2021), Microsoft, CC BY-SA 4.0; its databases' own licences
  (DATASETS.md): GeoNuclearData ODbL 1.0, GreaterManchesterCrime OGL v3.0,
  StudentMathScore open access (US Census Bureau).
  SQLite files: github.com/hyukkyukang/text2SQL datasets/kaggle-dbqa/databases/
  questions:    github.com/Chia-Hsuan-Lee/KaggleDBQA {_head(kaggle)} examples/<db>.json
result = first 50 rows of the gold query on db/<db_id>.sqlite (Python's sqlite3), n_rows all.
split.json: working (read while writing rules) / locked (aggregate figures only).
Never commit this folder.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--spider-dbs", type=Path, required=True)
    parser.add_argument("--spider-train", type=Path, required=True)
    parser.add_argument("--kaggle", type=Path, required=True)
    parser.add_argument("--spider", type=int, default=30, help="Spider train databases")
    parser.add_argument("--per-db", type=int, default=40, help="questions per database")
    args = parser.parse_args()
    split = build(args.out, args.spider_dbs, args.spider_train, args.kaggle, args.spider,
                  args.per_db)
    print(f"working {len(split['working'])}, locked {len(split['locked'])} databases")


if __name__ == "__main__":
    main()
