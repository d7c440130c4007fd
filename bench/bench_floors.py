"""Floors and fusion at any collection size, in English and Chinese (issues 24 and 26).

Run: ``.venv/bin/python -m bench.bench_floors`` (or ``make bench-floors``). Prints one
table, each row measured with the earlier scale (``kb.score_scale: reference``, fitted on
SciFact) and with the background-evidence scale (the default), in the same run:

1. **Small collections** built here through the real ingest and the real searcher with its
   default floor (``kb.min_score`` 0.02): 5, 20 and 100 documents sampled from SciFact
   (test claims: the held-out side; the floors were chosen on non-test claims), ArguAna
   and zh-rgb (the odd half of their queries: the floors were chosen on the even half),
   each document the evidence of one sampled query (100-document ones: 30 queries and 70
   other documents), plus mixed Chinese/English collections (5 + 5). Each query is asked
   of its collection (hit@3: a relevant document among the top 3 *kept*), and so are
   off-topic questions in the collection's language(s) (abstention: nothing kept).
   ArguAna's query documents are left out of the collections (as BEIR drops self-hits).
2. **Whole corpora** through ``eval retrieval`` (cached eval collections in the data home):
   SciFact test hybrid nDCG@10, ArguAna and zh-rgb hybrid / dense / sparse nDCG@10
   (ArguAna with ``ignore_self``).
3. **Trust** (``bench/bench_trust.py``: SciFact + Chinook, 60 questions): hit rate,
   wrong-source share, abstention of what the answer cites, floors on.
4. **Real docs** (``bench/bench_realdocs.py``, when ``$AGENT_SEARCH_REALDOCS`` names its
   folder): its table, ``kb.foreign_veto`` off and on, printed under this one.

Data home: ``$AGENT_SEARCH_HOME`` or ``bench/results/kb_home`` (shared with bench_kb.py:
its eval collections are reused; ArguAna's lives in ``<home>-arguana``).
``--skip-corpora`` / ``--skip-trust`` / ``--skip-realdocs`` leave parts out.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

import anyio  # noqa: E402

from agent_search import Request, SearchConfig, Searcher  # noqa: E402
from agent_search.kb import close_stores, create_handler, ingest_paths  # noqa: E402
from agent_search.kb.evaluation import evaluate  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
HOME = Path(os.environ.get("AGENT_SEARCH_HOME") or ROOT / "bench" / "results" / "kb_home")
ARGUANA_HOME = HOME.with_name(HOME.name + "-arguana")
"""ArguAna's eval collection has a data home of its own, so that it can be built while
another ingest holds the main one (one process per embedded store)."""
_SUBSET = os.environ.get("BENCH_FLOORS_ARGUANA", "300,1000")
ARGUANA_SUBSET = None if _SUBSET == "all" else tuple(int(x) for x in _SUBSET.split(","))
"""ArguAna's queries and documents, ``eval retrieval --max-queries --max-docs`` (the first
300 queries, a corpus of their relevant documents and others up to 1,000): its 8,674
documents take hours to embed on a loaded 2-core machine. ``BENCH_FLOORS_ARGUANA=all``
for the whole corpus, ``Q,D`` for another subset."""
SCALES = ("reference", "background")
SIZES = ((5, 6), (20, 2), (100, 1))  # (documents, collections)

OFF_EN = [
    "Who won the football world cup in 2014?", "How many players are on a basketball team?",
    "How long should I boil an egg for a soft yolk?", "What is a good recipe for banana bread?",
    "Do I need a visa to travel from Canada to Japan?", "Where can I buy running shoes on sale?",
    "Which lawn mower is best for a small garden?", "How do I repair a leaking kitchen tap?",
    "What time does the hardware store open on Sunday?", "How do I change a flat tyre?",
    "what is the capital of australia", "best way to clean a cast iron pan",
    "how to train a puppy to sit", "which guitar strings are best for beginners",
    "when does daylight saving time start", "how to fold a fitted sheet",
]
OFF_ZH = [
    "二零一四年世界杯冠军是谁？", "篮球队上场有几名队员？", "煮溏心蛋要煮几分钟？",
    "香蕉面包怎么做？",
    "从加拿大去日本需要签证吗？", "哪里能买到打折的跑鞋？", "小花园用什么割草机好？",
    "厨房水龙头漏水怎么修？", "五金店周日几点开门？", "汽车爆胎了怎么换备胎？",
    "澳大利亚的首都是哪里？", "铸铁锅怎么清洗？", "怎么训练小狗坐下？", "初学者用什么吉他弦好？",
    "夏令时什么时候开始？", "床笠怎么叠？",
]


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _qrels(path: Path) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        q, d, s = line.split("\t")
        if int(s) > 0:
            out.setdefault(q, set()).add(d)
    return out


@dataclass
class Small:
    """One small collection: its documents (BEIR rows) and questions (id, text, gold)."""

    source: str
    size: int
    docs: list[dict[str, Any]]
    questions: list[tuple[str, str, set[str]]] = field(default_factory=list)


def _held_out(name: str) -> tuple[dict[str, dict[str, Any]], dict[str, str], dict[str, set[str]]]:
    corpus = {r["_id"]: r for r in _jsonl(DATA / name / "corpus.jsonl")}
    queries = {r["_id"]: r["text"] for r in _jsonl(DATA / name / "queries.jsonl")}
    rel = _qrels(DATA / name / "qrels" / "test.tsv")
    if name != "beir-scifact":  # the odd half (the even half chose the floors)
        rel = {q: rel[q] for i, q in enumerate(sorted(rel)) if i % 2 == 1}
    rel = {q: {d for d in r if d in corpus and d != q} for q, r in rel.items()}
    return corpus, queries, {q: r for q, r in rel.items() if r}


def small_collections(name: str, seed: int = 2) -> list[Small]:
    corpus, queries, rel = _held_out(name)
    rng = random.Random(f"{name}-{seed}")
    qids = sorted(rel)
    rng.shuffle(qids)
    others = sorted(corpus)
    out: list[Small] = []
    pos = 0
    for size, count in SIZES:
        for _ in range(count):
            chosen = qids[pos:pos + min(size, 30)]
            pos += len(chosen)
            docs: list[str] = []
            for q in chosen:
                d = sorted(rel[q])[0]
                if d not in docs:
                    docs.append(d)
            while len(docs) < size:
                d = rng.choice(others)
                if d not in docs and d not in chosen:
                    docs.append(d)
            out.append(Small(name, size, [corpus[d] for d in docs],
                             [(q, queries[q], rel[q] & set(docs)) for q in chosen]))
    return out


def mixed(zh: list[Small], en: list[Small]) -> list[Small]:
    return [Small("mixed zh+en", 10, a.docs + b.docs, a.questions + b.questions)
            for a, b in zip([c for c in zh if c.size == 5][:3], [c for c in en if c.size == 5][:3],
                            strict=False)]


def _off_topic(source: str) -> list[str]:
    if source == "zh-rgb":
        return OFF_ZH
    if source.startswith("mixed"):
        return OFF_EN[:8] + OFF_ZH[:8]
    return OFF_EN


async def run_small(work: Path, collections: list[Small]) -> dict[tuple[str, int, str], list[int]]:
    """Per (source, size, scale): [questions, hits@3, off-topic questions, abstentions]."""
    tally: dict[tuple[str, int, str], list[int]] = {}
    base = SearchConfig(home=work)
    for n, col in enumerate(collections):
        name = f"small-{n}"
        corpus = work / f"{name}.jsonl"
        corpus.write_text("".join(json.dumps(d) + "\n" for d in col.docs), encoding="utf-8")
        await ingest_paths(base, [corpus], name)
        for scale in SCALES:
            config = base.merged({"kb": {"score_scale": scale}})
            searcher = Searcher(config, handlers=[create_handler(config)])
            row = tally.setdefault((col.source, col.size, scale), [0, 0, 0, 0])
            try:
                await tally_collection(searcher, col, name, row)
            finally:
                await searcher.aclose()
    return tally


async def tally_collection(searcher: Searcher, col: Small, name: str, row: list[int]) -> None:
    """Add one small collection's figures to ``row``: [questions, hits in the top 3
    (self-hits left out), off-topic questions, off-topic questions that got nothing]."""
    for qid, text, gold in col.questions:
        result = await searcher.search(Request(type="kb", query=text, limit=4,
                                               collections=[name]))
        kept = [i.document_id for i in result.items if i.document_id != qid][:3]
        row[0] += 1
        row[1] += bool(set(kept) & gold)
    for text in _off_topic(col.source):
        result = await searcher.search(Request(type="kb", query=text, limit=3,
                                               collections=[name]))
        row[2] += 1
        row[3] += not result.items


async def run_corpora() -> list[tuple[str, str, dict[str, float]]]:
    """(corpus, mode, {scale: nDCG@10}) through ``eval retrieval``."""
    arguana = "ArguAna" if ARGUANA_SUBSET is None else \
        f"ArguAna ({ARGUANA_SUBSET[0]} queries, {ARGUANA_SUBSET[1]:,} docs)"
    runs = [("SciFact test", DATA / "beir-scifact", "hybrid", False)]
    for label, folder in ((arguana, DATA / "beir-arguana"), ("zh-rgb", DATA / "zh-rgb")):
        runs += [(label, folder, mode, label == arguana)
                 for mode in ("hybrid", "dense", "sparse")]
    out = []
    for label, folder, mode, self_hits in runs:
        row: dict[str, float] = {}
        for scale in SCALES if mode == "hybrid" else SCALES[1:]:
            home = ARGUANA_HOME if self_hits else HOME
            config = SearchConfig(home=home, kb={"score_scale": scale})
            queries, docs = ARGUANA_SUBSET if self_hits and ARGUANA_SUBSET else (None, None)
            report = await evaluate(config, folder, mode=mode, ignore_self=self_hits,
                                    max_queries=queries, max_docs=docs)
            row[scale] = report.ndcg_at_10
        out.append((label, mode, row))
        print(f"  {label} {mode}: " + ", ".join(f"{k} {v:.4f}" for k, v in row.items()),
              file=sys.stderr, flush=True)
    return out


def run_trust(work: Path) -> dict[str, dict[str, float]]:
    """bench_trust.py's "cited, floors on" column per scale (one data home, reused)."""
    out = {}
    for scale in SCALES:
        proc = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_trust.py"),
                               "--work", str(work / "trust"), "--score-scale", scale],
                              capture_output=True, text=True, cwd=ROOT, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"bench_trust.py: {proc.stderr.strip()[-1500:]}")
        row = {}
        for line in proc.stdout.splitlines():
            m = re.match(r"\| (hit rate|wrong-source share|abstention) \| ([0-9.]+) \|", line)
            if m:
                row[m.group(1)] = float(m.group(2))
        out[scale] = row
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-corpora", action="store_true")
    parser.add_argument("--skip-trust", action="store_true")
    parser.add_argument("--skip-realdocs", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-floors-"))
    if (HOME / "models").is_dir():  # the model folder assembled once, shared
        (work / "models").symlink_to(HOME / "models", target_is_directory=True)
    en_sci = small_collections("beir-scifact")
    en_arg = small_collections("beir-arguana")
    zh = small_collections("zh-rgb")
    tally = anyio.run(run_small, work, en_sci + en_arg + zh + mixed(zh, en_sci))
    close_stores()
    corpora = [] if args.skip_corpora else anyio.run(run_corpora)
    trust = {} if args.skip_trust else run_trust(work)

    print("| measure | collection | reference scale (before) | background evidence (now) "
          "| goal |")
    print("|---|---|---:|---:|---:|")
    for source, size in sorted({(s, n) for s, n, _ in tally}):
        ref, new = tally[(source, size, "reference")], tally[(source, size, "background")]
        goal_hit, goal_abs = ("≥ 0.90", "≥ 0.90") if size <= 10 else ("", "")
        print(f"| hit@3 ({ref[0]} questions) | {source}, {size} docs | {ref[1] / ref[0]:.2f} "
              f"| {new[1] / new[0]:.2f} | {goal_hit} |")
        print(f"| off-topic abstention ({ref[2]}) | {source}, {size} docs | "
              f"{ref[3] / ref[2]:.2f} | {new[3] / new[2]:.2f} | {goal_abs} |")
    goals = {("SciFact test", "hybrid"): "≥ 0.74", ("zh-rgb", "hybrid"): "≥ both branches"}
    for label, mode, row in corpora:
        before = f"{row['reference']:.4f}" if "reference" in row else "(same)"
        goal = goals.get((label, mode), "≥ both branches" if mode == "hybrid" else "")
        print(f"| nDCG@10 {mode} | {label} | {before} | {row['background']:.4f} | {goal} |")
    trust_goals = {"hit rate": "≥ 0.85", "wrong-source share": "≤ 0.10",
                   "abstention": "≥ 0.80"}
    for measure, goal in trust_goals.items():
        if trust:
            print(f"| trust: {measure} (cited, floors on) | SciFact 1,520 + Chinook | "
                  f"{trust['reference'].get(measure, float('nan')):.2f} | "
                  f"{trust['background'].get(measure, float('nan')):.2f} | {goal} |")
    if not args.skip_realdocs:
        run_realdocs()
    return 0


def run_realdocs() -> None:
    """bench_realdocs.py's table (it skips, with its reason, without a docs folder)."""
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_realdocs.py")],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    print()
    print(proc.stdout.strip() or f"bench_realdocs.py: {proc.stderr.strip()[-500:]}")


if __name__ == "__main__":
    sys.exit(main())
