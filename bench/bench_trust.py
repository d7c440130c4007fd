"""Benchmark of trust: does the agent cite what is relevant, and nothing when nothing is?

Run: ``.venv/bin/python -m bench.bench_trust [--distractors 1500]``

One assistant searches a knowledge base (a SciFact collection: the gold abstracts of the
claims asked plus ``--distractors`` other abstracts) and the Chinook database (reflected),
in parallel, with the offline responder (no LLM). It is asked 60 questions through
``Assistant.stream`` (the pipeline of ``agent-search ask --json``):

- 20 SciFact claims of the test split (gold: their qrels);
- 20 Chinook questions of ours (gold: record ids computed here in SQL);
- 20 questions about neither (sports, cooking, travel, things the store does not sell).

From the references of the ``done`` event (what the answer cites) and, separately, from
what was injected into the prompt (the search record), it reports: hit rate (a gold record
is among them, in-scope questions), wrong-source share (db references for a claim, kb
references for a store question, over all references of in-scope questions) and
abstention (share of out-of-scope questions with no reference at all) — with the
relevance floors on (the defaults) and off (``min_score: 0``), side by side. It also
reports the database search's record F1 on the 20 Chinook questions (limit 50).

Goals (issue 12): hit rate ≥ 0.85, wrong-source share ≤ 0.10, abstention ≥ 0.80.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
SCIFACT = DATA / "beir-scifact"
CHINOOK = DATA / "chinook" / "Chinook_Sqlite.sqlite"
CLAIMS = 20

# (question, model, SQL giving the gold primary keys) — checked against Chinook here
CHINOOK_QUESTIONS: list[tuple[str, str, str]] = [
    ("Which albums are by Aerosmith?", "Album",
     "select AlbumId from Album where ArtistId = "
     "(select ArtistId from Artist where Name = 'Aerosmith')"),
    ("albums by Led Zeppelin", "Album",
     "select AlbumId from Album where ArtistId = "
     "(select ArtistId from Artist where Name = 'Led Zeppelin')"),
    ("Which customers live in Brazil?", "Customer",
     "select CustomerId from Customer where Country = 'Brazil'"),
    ("customers from Paris", "Customer", "select CustomerId from Customer where City = 'Paris'"),
    ("Which employees are sales support agents?", "Employee",
     "select EmployeeId from Employee where Title = 'Sales Support Agent'"),
    ("employees in Calgary", "Employee", "select EmployeeId from Employee where City = 'Calgary'"),
    ("invoices billed to Canada with a total over 10 dollars", "Invoice",
     "select InvoiceId from Invoice where BillingCountry = 'Canada' and Total > 10"),
    ("invoices over 20 dollars", "Invoice", "select InvoiceId from Invoice where Total > 20"),
    ("the artist Iron Maiden", "Artist", "select ArtistId from Artist where Name = 'Iron Maiden'"),
    ("artists called Santana", "Artist",
     "select ArtistId from Artist where Name like '%Santana%'"),
    ("the playlist called Grunge", "Playlist",
     "select PlaylistId from Playlist where Name = 'Grunge'"),
    ("the Bossa Nova genre", "Genre", "select GenreId from Genre where Name = 'Bossa Nova'"),
    ("tracks longer than 80 minutes", "Track",
     "select TrackId from Track where Milliseconds > 4800000"),
    ("tracks composed by Jimi Hendrix", "Track",
     "select TrackId from Track where Composer like '%Hendrix%'"),
    ("albums with greatest hits in the title", "Album",
     "select AlbumId from Album where Title like '%greatest hits%'"),
    ("the media type AAC audio file", "MediaType",
     "select MediaTypeId from MediaType where Name = 'AAC audio file'"),
    ("customers who work at Apple", "Customer",
     "select CustomerId from Customer where Company like '%Apple%'"),
    ("invoices from Budapest", "Invoice",
     "select InvoiceId from Invoice where BillingCity = 'Budapest'"),
    ("tracks on the album Big Ones", "Track",
     "select TrackId from Track where AlbumId = (select AlbumId from Album where Title = "
     "'Big Ones')"),
    ("tracks in the Opera genre", "Track",
     "select TrackId from Track where GenreId = (select GenreId from Genre where Name = "
     "'Opera')"),
]

OUT_OF_SCOPE = [
    "Who won the football world cup in 2014?",
    "How many players are on a basketball team?",
    "What is the offside rule in soccer?",
    "Which tennis player has the most grand slam titles?",
    "How long should I boil an egg for a soft yolk?",
    "What is a good recipe for banana bread?",
    "How do I make a sourdough starter?",
    "Which spices go into a garam masala?",
    "What are the best beaches to visit in Portugal?",
    "Do I need a visa to travel from Canada to Japan?",
    "What is the cheapest way to get from the airport to central Rome?",
    "When is the best season to hike in Patagonia?",
    "Where can I buy running shoes on sale?",
    "Which lawn mower is best for a small garden?",
    "How much does a new refrigerator cost?",
    "Do you sell winter tyres for my car?",
    "What is a good budget laptop for students?",
    "Can I order a sofa with free delivery?",
    "How do I repair a leaking kitchen tap?",
    "What time does the hardware store open on Sunday?",
]

STORE_MODELS = ["Album", "Artist", "Track", "Genre", "MediaType", "Playlist", "Customer",
                "Employee", "Invoice"]


@dataclass
class Question:
    kind: str  # "claim", "store" or "none"
    text: str
    gold: set[tuple[str, str]]  # (collection or model, document or record id)


@dataclass
class Answer:
    question: Question
    cited: list[dict[str, Any]]
    injected: list[dict[str, Any]]


def _read_jsonl(path: Path) -> Iterable[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def scifact_questions() -> tuple[list[Question], set[str]]:
    qrels: dict[str, set[str]] = {}
    with (SCIFACT / "qrels" / "test.tsv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if int(row["score"]) > 0:
                qrels.setdefault(row["query-id"], set()).add(row["corpus-id"])
    queries = {q["_id"]: q["text"] for q in _read_jsonl(SCIFACT / "queries.jsonl")}
    chosen = sorted(qrels, key=int)[:CLAIMS]
    questions = [Question("claim", queries[q], {("scifact", d) for d in qrels[q]})
                 for q in chosen]
    return questions, {d for q in chosen for d in qrels[q]}


def chinook_questions(db: Path) -> list[Question]:
    out = []
    with sqlite3.connect(db) as conn:
        for text, model, sql in CHINOOK_QUESTIONS:
            ids = {str(r[0]) for r in conn.execute(sql)}
            assert ids, f"no gold rows for {text!r}"
            out.append(Question("store", text, {(model, i) for i in ids}))
    return out


def write_corpus(path: Path, gold: set[str], distractors: int) -> int:
    kept = 0
    with path.open("w", encoding="utf-8") as out:
        for row in _read_jsonl(SCIFACT / "corpus.jsonl"):
            if row["_id"] in gold or distractors > 0:
                if row["_id"] not in gold:
                    distractors -= 1
                out.write(json.dumps(row) + "\n")
                kept += 1
    return kept


def write_assistants(root: Path, db: Path, score_scale: str | None = None,
                     foreign_veto: bool = True) -> tuple[Path, dict[bool, Path]]:
    """The config folder, and the assistant with the default floors (True) and with the
    floors switched off in its package (False). ``score_scale``: ``kb.score_scale``;
    ``foreign_veto``: ``kb.foreign_veto``."""
    config = root / "config"
    config.mkdir()
    search: dict[str, Any] = {"db": {"url": f"sqlite:///{db}"}}
    kb: dict[str, Any] = {} if foreign_veto else {"foreign_veto": False}
    if score_scale is not None:
        kb["score_scale"] = score_scale
    if kb:
        search["kb"] = kb
    (config / "search.yao").write_text(json.dumps(search))
    assistants = {}
    for floors in (True, False):
        floor = {} if floors else {"min_score": 0}
        assistant = root / "assistants" / ("trust" if floors else "trust-no-floors")
        assistant.mkdir(parents=True)
        (assistant / "package.yao").write_text(json.dumps({
            "name": "trust bench",
            "connector": "offline",
            "prompts": [{"role": "system", "content": "Answer only from the references."}],
            "search": {"web": False, "kb": {**floor}, "db": {"max_results": 10, **floor},
                       "rerank": {"top_n": 8}},
            "kb": {"collections": ["scifact"]},
            "db": {"models": STORE_MODELS},
        }))
        assistants[floors] = assistant
    return config, assistants


def _key(ref: dict[str, Any]) -> tuple[str, str] | None:
    if ref.get("model"):
        return str(ref["model"]).rsplit(".", 1)[-1], str(ref.get("record_id"))
    if ref.get("collection"):
        return str(ref["collection"]), str(ref.get("document_id"))
    return None


async def ask_all(assistant_dir: Path, config_dir: Path, questions: list[Question]
                  ) -> list[Answer]:
    from agent_search.agent import Assistant, Options
    from agent_search.events import Done

    assistant = Assistant.load(assistant_dir, config_dir=config_dir)
    answers = []
    try:
        for q in questions:
            cited: list[dict[str, Any]] = []
            request_id = None
            async for event in assistant.stream([{"role": "user", "content": q.text}],
                                                Options(connector="offline")):
                request_id = event.request_id
                if isinstance(event, Done):
                    cited = list(event.references)
            record = await assistant.record(request_id) if request_id else None
            injected = list(record.references) if record is not None else []
            answers.append(Answer(q, cited, injected))
    finally:
        await assistant.aclose()
    return answers


def scores(answers: list[Answer], which: str) -> dict[str, float]:
    in_scope = [a for a in answers if a.question.kind != "none"]
    hits = wrong = total = 0
    for a in in_scope:
        refs = getattr(a, which)
        keys = {_key(r) for r in refs}
        hits += bool(keys & a.question.gold)
        for r in refs:
            total += 1
            wrong += (a.question.kind == "claim" and bool(r.get("model"))) or (
                a.question.kind == "store" and bool(r.get("collection")))
    out_of_scope = [a for a in answers if a.question.kind == "none"]
    return {
        "hit rate": hits / len(in_scope),
        "wrong-source share": wrong / total if total else 0.0,
        "abstention": sum(not getattr(a, which) for a in out_of_scope) / len(out_of_scope),
    }


async def db_f1(config_dir: Path, questions: list[Question]) -> float:
    from agent_search import Request, Searcher

    searcher = Searcher.from_config(config_dir)
    f1s = []
    try:
        for q in questions:
            result = await searcher.search(Request(type="db", query=q.text, limit=50,
                                                   models=STORE_MODELS, min_score=0))
            got = {(str(i.model).rsplit(".", 1)[-1], str(i.record_id)) for i in result.items}
            tp = len(got & q.gold)
            precision = tp / len(got) if got else 0.0
            recall = tp / len(q.gold)
            f1s.append(2 * precision * recall / (precision + recall) if tp else 0.0)
    finally:
        await searcher.aclose()
    return sum(f1s) / len(f1s)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--distractors", type=int, default=1500)
    parser.add_argument("--work", type=Path, default=None, help=(
        "a folder to keep the data home in and reuse next time (ingest is idempotent: "
        "a second run only checks the corpus); default: a temporary folder"))
    parser.add_argument("--score-scale", choices=("background", "reference"), default=None,
                        help="kb.score_scale (default: the kb's default)")
    parser.add_argument("--no-foreign-veto", action="store_true",
                        help="kb.foreign_veto false (as before issue 34)")
    args = parser.parse_args()
    if not SCIFACT.is_dir() or not CHINOOK.is_file():
        print(f"bench_trust: needs {SCIFACT} and {CHINOOK}", file=sys.stderr)
        return 2

    root = args.work or Path(tempfile.mkdtemp(prefix="bench-trust-"))
    root.mkdir(parents=True, exist_ok=True)
    os.environ["AGENT_SEARCH_HOME"] = str(root / "home")
    for stale in ("config", "assistants"):
        shutil.rmtree(root / stale, ignore_errors=True)
    try:
        db = root / "chinook.sqlite"
        shutil.copy(CHINOOK, db)
        claims, gold_docs = scifact_questions()
        store = chinook_questions(db)
        none = [Question("none", text, set()) for text in OUT_OF_SCOPE]
        questions = claims + store + none
        config_dir, assistants = write_assistants(root, db, args.score_scale,
                                                   not args.no_foreign_veto)

        from agent_search.kb.ingest import ingest_paths
        from agent_search.loader import load_config

        corpus = root / "corpus.jsonl"
        docs = write_corpus(corpus, gold_docs, args.distractors)
        started = time.perf_counter()
        anyio.run(ingest_paths, load_config(config_dir), [corpus], "scifact")
        ingest_s = time.perf_counter() - started

        rows = {}
        for floors in (True, False):
            answers = anyio.run(ask_all, assistants[floors], config_dir, questions)
            rows[floors] = {w: scores(answers, w) for w in ("cited", "injected")}
        f1 = anyio.run(db_f1, config_dir, store)
    finally:
        if args.work is None:
            shutil.rmtree(root, ignore_errors=True)

    print(f"SciFact collection: {docs} abstracts ({len(gold_docs)} gold), ingested in "
          f"{ingest_s:.0f} s; {len(questions)} questions "
          f"({len(claims)} claims, {len(store)} store, {len(none)} out of scope)\n")
    goals = {"hit rate": "≥ 0.85", "wrong-source share": "≤ 0.10", "abstention": "≥ 0.80"}
    print("| measure | cited, floors on | cited, floors off | injected, floors on "
          "| injected, floors off | goal |")
    print("|---|---:|---:|---:|---:|---:|")
    for m, goal in goals.items():
        cells = [rows[f][w][m] for w in ("cited", "injected") for f in (True, False)]
        print(f"| {m} | " + " | ".join(f"{c:.2f}" for c in cells) + f" | {goal} |")
    print(f"\nChinook NL → records, mean F1 on the 20 store questions (limit 50): {f1:.3f} "
          "(goal ≥ 0.90)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
