"""Research mode against single-shot search, on multi-part questions over local data.

The data: one kb collection holding the docs of three projects (this project's
``docs/*.md``, the Yao search-module design and Semantic Kernel's text-search ADR from
``../shared/spec``) and the Chinook database (``../shared/data/chinook``). The questions
(``bench/research_questions.json``) ask two or three things each, across documents,
across the database and documents, or across the database; each part's gold (documents
or database values) was labelled before any run. Odd ids are the working part (read while
building the planner), even ids the locked part.

For each question, with ``kb`` and ``db`` searched (limit 5 each):

- single-shot: the whole question once on each type (2 searches);
- research: :meth:`Searcher.research` (builtin planner, at most 3 rounds);
- with ``--llm-url URL --llm-model M``: research with the LLM planner, a third column.

Printed per split: the share of questions whose every part has a gold reference
(all-parts recall), the ratio research ÷ single-shot, searches and rounds per question.
The goal: research ≥ 0.80 and ≥ 1.5× single-shot at ≤ 3 rounds.

Run: ``.venv/bin/python -m bench.bench_research [--split working|locked|all]`` (or
``make bench-research``). The data home is ``bench/results/research_home`` (the kb is
ingested once and kept; an unchanged document is not embedded again).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

from agent_search import ResultItem, SearchConfig, Searcher  # noqa: E402
from agent_search.kb import ingest_paths  # noqa: E402

SHARED = Path(os.environ.get("AGENT_SEARCH_SHARED") or ROOT.parent / "shared")
"""The benchmark data (``AGENT_SEARCH_SHARED`` when the checkout is not beside it)."""
CHINOOK = SHARED / "data" / "chinook" / "Chinook_Sqlite.sqlite"
SPEC = SHARED / "spec"
HOME = ROOT / "bench" / "results" / "research_home"
QUESTIONS = ROOT / "bench" / "research_questions.json"
LIMIT = 5


def _prepare() -> Path:
    """The data home with the docs ingested and the database copied (once)."""
    corpus = HOME / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    for doc in sorted((ROOT / "docs").glob("*.md")):
        shutil.copyfile(doc, corpus / doc.name)
    for doc in sorted(SPEC.glob("*")):
        if doc.suffix in (".md", ".txt"):
            shutil.copyfile(doc, corpus / doc.name)
    db = HOME / "chinook.sqlite"
    if not db.is_file():
        shutil.copyfile(CHINOOK, db)
    return db


def _holds(item: ResultItem, gold: dict[str, Any]) -> bool:
    where = " ".join(str(x) for x in (item.document_id, item.metadata.get("source"),
                                      item.title) if x)
    if any(doc in where for doc in gold.get("docs", [])):
        return True
    text = (item.content + " " + json.dumps(item.data or {}, ensure_ascii=False)).casefold()
    return any(v.casefold() in text for v in gold.get("values", []))


def _all_parts(items: list[ResultItem], parts: list[dict[str, Any]]) -> bool:
    return all(any(_holds(i, gold) for i in items) for gold in parts)


async def _ask(searcher: Searcher, question: dict[str, Any],
               llm: dict[str, Any] | None) -> dict[str, Any]:
    text = question["text"]
    single = await searcher.search_many([
        {"type": "kb", "query": text, "limit": LIMIT},
        {"type": "db", "query": text, "limit": LIMIT}])
    single_items = [i for r in single for i in r.items]
    row: dict[str, Any] = {"id": question["id"],
                           "single": _all_parts(single_items, question["parts"]),
                           "single_searches": 2}
    settings: dict[str, Any] = {"max_rounds": 3}
    runs = {"research": settings}
    if llm:
        runs["llm"] = {**settings, "planner": "llm", **llm}
    for name, over in runs.items():
        report = await searcher.research(text, types=["kb", "db"], limit=LIMIT,
                                         settings=over)
        row[name] = _all_parts(report.items, question["parts"])
        row[f"{name}_searches"] = report.budget["searches"]["used"]
        row[f"{name}_rounds"] = report.budget["rounds"]["used"]
        row[f"{name}_stopped"] = report.stopped
        row[f"{name}_parts"] = [p.text for p in report.parts]
    return row


def _table(rows: list[dict[str, Any]], columns: list[str], title: str) -> None:
    n = len(rows)
    single = sum(r["single"] for r in rows) / n
    print(f"\n#### {title} ({n} questions)\n")
    print("| mode | all-parts recall | × single-shot | searches / question | "
          "rounds / question (max) |")
    print("|---|---:|---:|---:|---:|")
    print(f"| single-shot (kb + db, limit {LIMIT}) | {single:.3f} | 1.00 | 2.0 | 1 |")
    for name in columns:
        share = sum(r[name] for r in rows) / n
        ratio = f"{share / single:.2f}" if single else "∞"
        searches = statistics.mean(r[f"{name}_searches"] for r in rows)
        rounds = [r[f"{name}_rounds"] for r in rows]
        print(f"| {name} | {share:.3f} | {ratio} | {searches:.1f} | "
              f"{statistics.mean(rounds):.2f} ({max(rounds)}) |")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=["working", "locked", "all"], default="all")
    parser.add_argument("--llm-url")
    parser.add_argument("--llm-model")
    parser.add_argument("--json", type=Path, help="write every question's row here")
    args = parser.parse_args()
    if not CHINOOK.is_file() or not SPEC.is_dir():
        print(f"skipped: {SHARED} (the benchmark data) is not there")
        return
    db = _prepare()
    config = SearchConfig(home=HOME).merged({
        "kb": {"collections": ["projectdocs"]}, "db": {"url": f"sqlite:///{db}"}})
    await ingest_paths(config, [HOME / "corpus"], "projectdocs")
    searcher = Searcher.from_config(None, overrides=config.model_dump(mode="json"))
    llm = ({"llm_url": args.llm_url, "llm_model": args.llm_model}
           if args.llm_url and args.llm_model else None)
    questions = json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]
    wanted = {"working": [q for q in questions if q["id"] % 2 == 1],
              "locked": [q for q in questions if q["id"] % 2 == 0]}
    splits = list(wanted) if args.split == "all" else [args.split]
    columns = ["research"] + (["llm"] if llm else [])
    print("### Research mode vs single-shot (multi-part questions, kb: 3 projects' docs, "
          "db: Chinook)")
    everything = []
    async with searcher:
        for split in splits:
            rows = [await _ask(searcher, q, llm) for q in wanted[split]]
            everything += rows
            _table(rows, columns, f"{split} part")
    if args.json:
        args.json.write_text(json.dumps(everything, indent=1), encoding="utf-8")


if __name__ == "__main__":
    asyncio.run(main())
