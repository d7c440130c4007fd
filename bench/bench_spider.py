"""Database search on schemas nobody tuned for: held-out databases and the public Spider dev.

Run: ``make bench-db-unseen`` (or its old name ``make bench-spider``) or
``.venv/bin/python -m bench.bench_spider [--parts locked,working,public] [--baseline REF]
[--db DB_ID] [--show N] [--no-meaning] [--llm-url URL --llm-model NAME]``

Three parts, side by side: ``public`` (the nine Spider dev databases of
``../shared/data/spider-dev-public``, or ``$BENCH_SPIDER_DATA``), and the two halves of
the held-out set built once by
``bench/build_db_unseen.py`` (Spider *train* databases and KaggleDBQA, 33 databases, at
``$BENCH_DB_UNSEEN``, default ``../dbdata`` beside the worktree; skipped with a line when
absent): ``working``, whose questions and failures one reads while writing rules, and
``locked``, whose aggregate figures only are printed (never ``--show``), and each print is
logged in ``locked-runs.log`` beside the data, the count said on screen: read it once per
working session. Below the table, the precision / answered curve of each part by relevance
floor (the item score a searcher's ``db.min_score`` cuts at), then by the floor on the
reading's calibrated confidence (:mod:`agent_search.query.nl._answer._calibration`, refitted by
``bench/fit_db_confidence.py`` on the working part): the questions are asked once with
that gate off, its value recorded per question, and each floor (the parser's own, per kind
of reading, in the table) scored from the same answers.

Every question of a part is asked of the
``db`` handler on a copy of its SQLite database, with no model hints (every table is
offered) and ``db.max_results`` 100; items under the relevance floor ``db.min_score``
(default 0.3) are dropped, as the searcher drops them before anyone sees them
(``BENCH_SPIDER_FLOOR=0`` keeps them; ``BENCH_SPIDER_SHOW_ALL=1`` makes ``--show`` list hits
too). The gold is Spider's SQL; a question is scored by its kind (issue 23):

- **record** questions (every one SELECT without GROUP BY / HAVING / set operations / nested
  SELECTs): the gold *records* are the distinct rows (primary key, else the whole row) of
  the table holding the first projected column (for ``count(*)``, the first FROM table)
  under the gold FROM / JOIN / WHERE, plus ORDER BY / LIMIT when the query has no
  aggregate; they are compared with the items returned for that table: F1 per question
  (recall over at most 100 gold records: no more can be shown), and precision over the
  questions answered (any item returned);
- **how many** questions (the gold projects one ``count(...)``, one row): ``Result.total``
  equals the gold count — for ``count(DISTINCT col)`` (values counted, not records: the
  total still counts records) the one answer row of the aggregate items holds it;
- **aggregate** questions (GROUP BY, or an aggregate in the projection, not a "how many"):
  the items with ``metadata.kind == "aggregate"`` hold the gold result rows: as many
  rows, each gold row's values among its answer row's values (numbers rounded to 2
  decimals; an answer row may also show the aggregate the gold only orders by), in order
  only when the gold orders them; when the gold projects no aggregate (GROUP BY / HAVING
  as a filter: "names of singers with more than one song") and no aggregate item is
  returned, the records returned stand for the answer rows, on the same terms;
- p50 / p95 ms per question, in process (after one warm-up pass per database);
- ``silent by …``: questions the gate answered with nothing, by the gate (the reading's
  shape, a second reading that gives other rows, the calibrated floor; :data:`SILENCED_BY`).

A question may be of two kinds ("how many singers are from France": a record question and
a "how many"). ``overall`` is the mean over every question of the score of its own kind
(how many, else aggregate, else record F1); questions of none of the three kinds (a nested
or set-operation SELECT of records) count 0 there.

**Leave-databases-out** (issue 35; all databases only): the nine databases are split into
three folds of about as many questions (:func:`split`: fixed by the data, every database
left out once). For each fold the relevance floor — the one number fitted to data here —
is chosen on the other two folds (precision of answered ≥ 0.90 first, then ``overall``)
and the fold's own questions are scored with it. The table prints, beside the whole-set
column (default floor), ``left out`` (every question once, as a database nobody fitted
on) and ``develop parts`` (each question once per fold it develops in), and one line per
fold. A change that lifts ``develop`` and not ``left out`` fits these databases, not the
language: judge every change by the left-out figure.

``--baseline REF`` runs the same measure on the ``agent_search`` package of git ``REF``
(exported to a temp dir, run in a subprocess) so that both columns come from one run.

``--llm-url URL --llm-model NAME [--llm-key-env VAR]`` adds a column: the same questions
with an OpenAI-compatible endpoint as the ``uses.query`` DSL generator (an assistant run
by the delegation machinery, its DSL validated and retried as for a user; no fallback to
the builtin parser), same measures; a failing endpoint is one line per question kind
(see ``bench/_spider_llm.py``). Without the option nothing of it is imported.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BENCH_SPIDER_DATA",
                           str(ROOT.parent / "shared" / "data" / "spider-dev-public")))
"""The public Spider dev databases (``BENCH_SPIDER_DATA`` when the checkout has no
``../shared`` beside it)."""
UNSEEN = Path(os.environ.get("BENCH_DB_UNSEEN", str(ROOT.parent / "dbdata")))
"""The held-out databases (``bench/build_db_unseen.py``): a working part and a locked
part (``split.json``); absent, those parts are skipped with a line saying so."""
PARTS = ("locked", "working", "public")
CURVE = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
"""The relevance floors of the precision / answered curve."""
GATES = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9)
"""The calibrated-confidence floors of the second curve (the relevance floor at its
default)."""
MAX_RESULTS = 100
FLOOR = os.environ.get("BENCH_SPIDER_FLOOR", "1") != "0"
SHOW_ALL = os.environ.get("BENCH_SPIDER_SHOW_ALL") == "1"
DUMP: Path | None = None
"""``--dump FILE``: every question's answer (DSL, items, total, error, warnings) appended
to FILE as one JSON line, to check that a refactor changes no answer."""
_AGG = re.compile(r"\b(count|avg|min|max|sum)\s*\(", re.I)
_CLAUSE = re.compile(r"\b(WHERE|GROUP BY|HAVING|ORDER BY|LIMIT)\b", re.I)


@dataclass
class Gold:
    kind: str  # its own kind: count | aggregate | record | other
    table: str | None = None
    keys: list[str] = field(default_factory=list)  # pk columns (empty: whole row)
    records: set[tuple[Any, ...]] = field(default_factory=set)
    count: int | None = None
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    ordered: bool = False
    distinct: bool = False
    records_answer: bool = False  # grouped gold that projects no aggregate: records may answer


def _norm(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int | float):
        return round(float(v), 2)
    if isinstance(v, str):
        s = v.strip()
        try:
            return round(float(s), 2)
        except ValueError:
            return s.lower()
    return v


def _split_top(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def classify(sql: str, result: list[list[Any]], n_rows: int,
             conn: sqlite3.Connection) -> Gold:
    s = " ".join(sql.strip().rstrip(";").split())
    up = s.upper()
    nested = up.count("SELECT") > 1 or bool(re.search(r"\b(UNION|INTERSECT|EXCEPT)\b", up))
    grouped = "GROUP BY" in up or "HAVING" in up
    m = re.match(r"SELECT\s+(DISTINCT\s+)?(.*?)\s+FROM\s+(.*)$", s, re.I)
    proj = _split_top(m.group(2)) if m else []
    has_agg = any(_AGG.match(p) for p in proj)
    gold = Gold("other")
    if not nested and not grouped and m is not None:
        gold = _records(m.group(3), proj[0], conn)
    if len(proj) == 1 and re.match(r"count\s*\(", proj[0], re.I) and n_rows == 1 \
            and not grouped:
        gold.kind, gold.count = "count", int(result[0][0])
        gold.distinct = bool(re.match(r"count\s*\(\s*distinct\b", proj[0], re.I))
    elif grouped or has_agg:
        gold.kind = "aggregate"
        gold.rows = [tuple(_norm(v) for v in r) for r in result]
        gold.ordered = "ORDER BY" in up
        gold.records_answer = not has_agg
    return gold


def _records(rest: str, first: str, conn: sqlite3.Connection) -> Gold:
    cut = _CLAUSE.search(rest)
    from_clause = rest[:cut.start()].strip() if cut else rest.strip()
    tail = rest[cut.start():] if cut else ""
    aliases: dict[str, str] = {}
    order: list[str] = []
    for tm in re.finditer(r"(?:^|\bJOIN\s+)(\w+)(?:\s+AS\s+(\w+))?", from_clause, re.I):
        aliases[(tm.group(2) or tm.group(1)).lower()] = tm.group(1)
        order.append(tm.group(2) or tm.group(1))
    inner = re.sub(r"^(count|avg|min|max|sum)\s*\(\s*(DISTINCT\s+)?|\)$", "", first,
                   flags=re.I).strip()
    if "." in inner:
        alias = inner.split(".", 1)[0]
    elif inner == "*":
        alias = order[0]
    else:
        alias = next((a for a in order if inner.lower() in
                      {r[1].lower() for r in conn.execute(
                          f"PRAGMA table_info('{aliases[a.lower()]}')")}), order[0])
    table = aliases[alias.lower()]
    cols = [r[1] for r in conn.execute(f"PRAGMA table_info('{table}')")]
    keys = [r[1] for r in sorted(conn.execute(f"PRAGMA table_info('{table}')"),
                                 key=lambda r: r[5]) if r[5] > 0]
    shown = keys or cols
    if _AGG.search(first):  # an aggregate over records: no order / limit
        tail = re.split(r"\bORDER BY\b|\bLIMIT\b", tail, flags=re.I)[0]
    select = ", ".join(f"{alias}.\"{c}\"" for c in shown)
    rows = conn.execute(f"SELECT DISTINCT {select} FROM {from_clause} {tail}").fetchall()
    return Gold("record", table=table, keys=keys,
                records={tuple(_norm(v) for v in r) for r in rows})


# -- scoring ----------------------------------------------------------------------------


def score(gold: Gold, result: dict[str, Any]) -> dict[str, Any]:
    items = result["items"]
    records = [i for i in items if (i.get("metadata") or {}).get("kind") != "aggregate"]
    aggs = [i for i in items if (i.get("metadata") or {}).get("kind") == "aggregate"]
    out: dict[str, Any] = {"answered": bool(items)}
    if gold.kind == "count":
        out["right"] = result["total"] == gold.count
        if gold.distinct:  # distinct values are counted, not records: an answer row
            out["right"] = [list((i.get("data") or {}).values()) for i in aggs] == [
                [gold.count]]
        out["score"] = float(out["right"])
    elif gold.kind == "aggregate":
        answer = aggs if aggs or not gold.records_answer else records
        got = [Counter(_norm(v) for v in (i.get("data") or {}).values()) for i in answer]
        want = [Counter(r) for r in gold.rows]
        right = len(got) == len(want) and _rows_match(got, want, gold.ordered)
        out["right"] = bool(want) and right
        out["score"] = float(out["right"])
        out["agg_answered"] = bool(answer)
    if gold.table is not None:
        mine = [i for i in records if (i.get("model") or "").lower() == gold.table.lower()]
        got: set[tuple[Any, ...]] = set()
        for i in mine:
            if gold.keys:
                rid = i.get("record_id")
                got.add(tuple(_norm(v) for v in (rid if isinstance(rid, list) else [rid])))
            else:
                got.add(tuple(_norm(v) for v in (i.get("data") or {}).values()))
        hit = len(got & gold.records)
        precision = hit / len(records) if records else 0.0
        recall = hit / min(len(gold.records), MAX_RESULTS) if gold.records else float(
            not records)
        out["precision"] = precision if records else None
        out["f1"] = 0.0 if hit == 0 else 2 * precision * recall / (precision + recall)
        if not gold.records and not records:
            out["f1"] = 1.0
        if gold.kind == "record":
            out["score"] = out["f1"]
    if gold.kind == "other":
        out["score"] = 0.0
    return out


def _rows_match(got: list[Counter[Any]], want: list[Counter[Any]], ordered: bool) -> bool:
    """Each gold row's values are among one answer row's values (an answer may show more:
    the count behind "the most common hometown"), row for row when the gold is ordered,
    else by a greedy one-to-one pairing."""
    def holds(g: Counter[Any], w: Counter[Any]) -> bool:
        return all(g[k] >= n for k, n in w.items())
    if ordered:
        return all(holds(g, w) for g, w in zip(got, want, strict=True))
    free = list(got)
    for w in want:
        match = next((g for g in free if holds(g, w)), None)
        if match is None:
            return False
        free.remove(match)
    return True


# -- running ----------------------------------------------------------------------------


def _bench_module(name: str) -> Any:
    """``bench/<name>.py``, a module of this package."""
    return importlib.import_module(f"bench.{name}")


def _llm_module() -> Any:
    """``bench/_spider_llm.py``, imported only when the LLM column is asked for."""
    return _bench_module("_spider_llm")


def load(part: str) -> list[dict[str, Any]] | None:
    """The questions of one part, each with the folder of its database (``dir``); None
    when the part's data is absent."""
    if part == "public":
        if not (DATA / "questions.json").exists():
            return None
        return [{**q, "dir": DATA} for q in json.loads((DATA / "questions.json").read_text())]
    if not (UNSEEN / "split.json").exists():
        return None
    mine = set(json.loads((UNSEEN / "split.json").read_text())[part])
    return [{**q, "dir": UNSEEN} for q in json.loads((UNSEEN / "questions.json").read_text())
            if q["db_id"] in mine]


def note_locked() -> str:
    """Append this run to the locked part's log and say how often it was printed before:
    its figures are read once per working session, and the log keeps that honest."""
    log = UNSEEN / "locked-runs.log"
    before = log.read_text().splitlines() if log.exists() else []
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    with log.open("a") as f:
        f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {head}\n")
    last = f", last {before[-1]}" if before else ""
    return f"locked part printed {len(before)} time(s) before{last}"


async def run(db_filter: str | None, show: int, llm: Any = None,
              meaning: bool = True, part: str = "public") -> dict[str, Any]:
    """Ask every question of ``part`` (of ``db_filter``) and score it. ``llm`` (a
    :class:`_spider_llm.LLMSpec`): through that endpoint as the ``uses.query`` generator
    instead of the builtin parser; ``meaning``: ``db.match_by_meaning`` (on by default)."""
    questions = load(part) or []
    if db_filter:
        questions = [q for q in questions if q["db_id"] == db_filter]
    if llm is None:
        out = await _run(questions, 0 if part == "locked" else show, None, meaning=meaning,
                         folds=part == "public")
        return out
    module = _llm_module()
    breaker = module.Breaker(await module.probe(llm))
    async with module.generator(llm) as made:
        return await _run(questions, show, made, breaker)


async def _run(questions: list[dict[str, Any]], show: int, llm: Any,
               breaker: Any = None, *, meaning: bool = False,
               folds: bool = True) -> dict[str, Any]:
    from agent_search.config import SearchConfig

    asked, times = await ask(questions, show, llm, breaker, meaning=meaning)
    floor = SearchConfig().min_score_for("db") if FLOOR else 0.0  # as the searcher
    scored = [rescore(e, floor) for e in asked]
    out = summarise(scored, times, show)
    out["curve"] = [curve_point(f, [rescore(e, f) for e in asked]) for f in CURVE]
    out["calibrated curve"] = [curve_point(t, [rescore(e, floor, t) for e in asked])
                               for t in GATES]
    if llm is not None:
        out["errors"] = _llm_module().error_lines(scored)
    elif folds:
        out["leave_out"] = _bench_module("_spider_folds").leave_out(asked, times, rescore,
                                                                    summarise)
    return out


class Calibrated:
    """Records the builtin reading's calibrated confidence of each question (by its text,
    the last asked) with the gate off, so that every floor of the curve is scored on one
    run; the product's own floor is applied when scoring (:func:`rescore`). On a package
    without the calibration (``--baseline`` of an older ref) nothing is recorded and
    nothing is gated."""

    def __init__(self) -> None:
        self.last: dict[str, float] = {}
        self.floor: dict[str, float] = {}
        self.features: dict[str, dict[str, float]] = {}
        self.module: Any = None
        self.saved: tuple[Any, dict[str, float]] | None = None

    def __enter__(self) -> Calibrated:
        try:
            from agent_search.query.nl._answer import _calibration as module
        except ImportError:
            return self
        original = module.assess

        def assess(query: str, *args: Any) -> Any:
            found = original(query, *args)
            self.last[query] = found.probability
            self.floor[query] = saved[module.kind_of(found.features)]
            self.features[query] = dict(found.features)
            return found

        saved = dict(module.THRESHOLDS)
        self.module, self.saved = module, (original, module.THRESHOLDS)
        module.assess = assess
        module.THRESHOLDS = dict.fromkeys(module.THRESHOLDS, 0.0)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.module is not None and self.saved is not None:
            self.module.assess, self.module.THRESHOLDS = self.saved


def product_thresholds() -> str:
    """The calibrated-confidence floors of the package measured, by kind of reading."""
    try:
        from agent_search.query.nl._answer import _calibration as module
    except ImportError:
        return "none"
    return ", ".join(f"{k} {v:.2f}" for k, v in module.THRESHOLDS.items())


async def ask(questions: list[dict[str, Any]], show: int, llm: Any,
              breaker: Any = None, *, meaning: bool = False
              ) -> tuple[list[dict[str, Any]], list[float]]:
    """Every question asked of the db handler: one entry each (gold, items, total, the
    calibrated confidence and features of its reading), and the times in ms."""
    from agent_search.config import SearchConfig
    from agent_search.context import Context
    from agent_search.db import create_handler
    from agent_search.types import Request, Result

    tmp = Path(tempfile.mkdtemp(prefix="bench-spider-"))
    asked: list[dict[str, Any]] = []
    times: list[float] = []
    try:
        with Calibrated() as calibrated:
            for db_id in sorted({q["db_id"] for q in questions}):
                path = tmp / f"{db_id}.sqlite"
                home = next(q["dir"] for q in questions if q["db_id"] == db_id)
                shutil.copyfile(home / "db" / f"{db_id}.sqlite", path)
                conn = sqlite3.connect(path)
                conn.text_factory = lambda b: b.decode(errors="replace")
                db = {"url": f"sqlite:///{path}", "max_results": MAX_RESULTS,
                      **({} if meaning else {"match_by_meaning": False})}
                if llm is None:
                    # one home: the embedding model is copied once for every database
                    config = SearchConfig(home=tmp, db=db)
                    handler = create_handler(config)
                else:  # the LLM alone: a failed generation is the question's error
                    config = SearchConfig(home=tmp / db_id, db=db, uses={"query": llm.name},
                                          query={"strict": True})
                    handler = create_handler(config, generators={llm.name: llm})
                ctx = Context(config=config)
                mine = [q for q in questions if q["db_id"] == db_id]
                try:
                    if llm is None:
                        for q in mine:  # warm-up: reflection, value index, caches
                            await handler.search(ctx, Request(type="db", query=q["question"]))
                    elif not breaker.open:  # reflection and value index, no LLM asked
                        await handler.search(ctx, Request(type="db", query="warm-up",
                                                          options={"generate": False}))
                    for q in mine:
                        gold = classify(q["query"], q["result"], q["n_rows"], conn)
                        calibrated.last.pop(q["question"], None)
                        t0 = time.perf_counter()
                        if breaker is not None and breaker.open:
                            r = Result(type="db", query=q["question"],
                                       error=breaker.skipped())
                        else:
                            r = await handler.search(ctx, Request(type="db",
                                                                  query=q["question"]))
                            times.append((time.perf_counter() - t0) * 1000)
                            if breaker is not None:
                                breaker.record(r.error)
                        entry = {"gold": gold, "db": db_id, "question": q["question"],
                                 "items": [i.model_dump() for i in r.items],
                                 "total": r.total, "error": r.error,
                                 "warnings": r.warnings[-3:],
                                 "strict_errors": breaker is not None,
                                 "calibrated": calibrated.last.get(q["question"]),
                                 "gate": calibrated.floor.get(q["question"], 0.0),
                                 "features": calibrated.features.get(q["question"])}
                        if show:  # what was asked and what was run, for reading the misses
                            entry.update(sql=q["query"], dsl=_brief(r.dsl))
                        if DUMP is not None:
                            _dump({**entry, "dsl": r.dsl})
                        asked.append(entry)
                finally:
                    await handler.aclose()
                    conn.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return asked, times


def _dump(entry: dict[str, Any]) -> None:
    """One question's answer appended to ``DUMP`` as a JSON line (gold left out)."""
    assert DUMP is not None
    entry = {k: v for k, v in entry.items() if k != "gold"}
    with DUMP.open("a", encoding="utf-8") as f:
        f.write(json.dumps(entry, ensure_ascii=False, sort_keys=True, default=str) + "\n")


def rescore(entry: dict[str, Any], floor: float, gate: float | None = None
            ) -> dict[str, Any]:
    """One asked question scored with the items at or over ``floor`` (what a searcher with
    that relevance floor shows), nothing at all when the calibrated confidence of its
    reading is under ``gate`` (default: the parser's own floor for its kind of reading)."""
    gold: Gold = entry["gold"]
    items = [i for i in entry["items"] if i["score"] >= floor]
    total = entry["total"]
    gate = entry.get("gate", 0.0) if gate is None else gate
    silenced = None if entry["items"] else silenced_by(entry["warnings"])
    if entry.get("calibrated") is not None and entry["calibrated"] < gate:
        silenced = "the calibrated floor" if items or total else silenced
        items, total = [], 0
    s = score(gold, {"items": items, "total": total})
    s["silenced"] = silenced
    if entry["strict_errors"] and entry["error"]:  # no DSL: wrong, whatever the gold
        s.update({k: v for k, v in (("right", False), ("f1", 0.0)) if k in s}, score=0.0)
    s.update(kind=gold.kind, db=entry["db"], question=entry["question"],
             top=max((i["score"] for i in entry["items"]), default=0.0),
             error=entry["error"], warnings=entry["warnings"])
    if "sql" in entry:
        s.update(sql=entry["sql"], dsl=entry["dsl"], n=len(items))
    return s


SILENCED_BY: tuple[tuple[str, str], ...] = (
    ("shape", "asks for a number per group"), ("shape", "nothing is counted"),
    ("shape", "asks for the highest or lowest"),
    ("a second reading", "read in two fields that select other rows"),
    ("a second reading", "relations of"),
    ("the calibrated floor", "calibrated confidence"),
)
"""Why a question answered nothing, by the words of its last warnings: the gate's shape
checks (``query/nl/_answer/_consistency.py``), a second reading that gives other rows
(``db/_readings.py``, ``query/nl/_readings.py``) or the calibrated floor. Counted per
part (aggregate figures: the locked part's too)."""


def silenced_by(warnings: list[str]) -> str | None:
    """The gate that silenced an answer, from its warnings (None: another reason)."""
    for cause, words in SILENCED_BY:
        if any(words in w for w in warnings):
            return cause
    return None


def curve_point(floor: float, scored: list[dict[str, Any]]) -> str:
    """Precision and share answered of the record questions, with "how many" and
    aggregates right, at one relevance floor: one cell of the curve."""
    m = summarise(scored, [], 0)
    share = m["record answered"] / m["record questions"] if m["record questions"] else 0.0
    return (f"{m['precision of answered']:.3f} / {share:.2f} / {m['how many right']:.2f}"
            f" / {m['aggregate right']:.2f}")


def _brief(dsl: dict[str, Any] | None) -> list[dict[str, Any]]:
    keys = ("model", "wheres", "orders", "group_by", "aggregates", "having", "limit")
    return [{k: q[k] for k in keys if q.get(k)} for q in (dsl or {}).get("queries", [])]


def summarise(scored: list[dict[str, Any]], times: list[float], show: int) -> dict[str, Any]:
    def mean(xs: list[float]) -> float:
        return sum(xs) / len(xs) if xs else 0.0
    rec = [s for s in scored if "f1" in s]
    answered = [s for s in rec if s["precision"] is not None]
    cnt = [s for s in scored if s["kind"] == "count"]
    agg = [s for s in scored if s["kind"] == "aggregate"]
    ordered = sorted(times)
    out = {
        "questions": len(scored),
        "record questions": len(rec),
        "record F1": mean([s["f1"] for s in rec]),
        "record answered": len(answered),
        "precision of answered": mean([s["precision"] for s in answered]),
        "how many questions": len(cnt),
        "how many right": mean([float(s["right"]) for s in cnt]),
        "aggregate questions": len(agg),
        "aggregate right": mean([float(s["right"]) for s in agg]),
        "aggregates answered": sum(1 for s in agg if s.get("agg_answered")),
        "aggregate precision of answered": mean([float(s["right"]) for s in agg
                                                 if s.get("agg_answered")]),
        "other questions": sum(1 for s in scored if s["kind"] == "other"),
        **{f"silent by {cause}": sum(1 for s in scored if s.get("silenced") == cause)
           for cause in dict(SILENCED_BY)},
        "overall": mean([s["score"] for s in scored]),
        "p50 ms": statistics.median(times) if times else 0.0,
        "p95 ms": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] if times else 0.0,
    }
    if show:
        misses = [s for s in scored if s["kind"] != "other" and (s["score"] < 1.0 or SHOW_ALL)]
        out["misses"] = misses[:show]
    return out


def baseline(ref: str, db_filter: str | None, part: str = "public") -> dict[str, Any]:
    """The same measure on the package of git ``ref``, in a subprocess."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-spider-base-"))
    try:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "agent_search"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
        # the ref's package first, then this checkout for the bench package itself
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp), str(ROOT)])}
        args = [sys.executable, "-m", "bench.bench_spider", "--json", "--parts", part] + (
            ["--db", db_filter] if db_filter else [])
        done = subprocess.run(args, env=env, check=True, capture_output=True, text=True,
                              cwd=tmp)
        return json.loads(done.stdout.splitlines()[-1])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


GOALS = {"record F1": "≥ 0.70", "precision of answered": "≥ 0.90", "how many right": "≥ 0.85",
         "aggregate right": "≥ 0.50", "p50 ms": "≤ 20"}


def table(columns: list[tuple[str, dict[str, Any]]]) -> str:
    """The measures (rows) of each column, the goals last."""
    head = "| measure | " + " | ".join(label for label, _ in columns) + " | goal |"
    lines = [head, "|---|" + "---:|" * len(columns) + "---|"]
    for key, value in columns[-1][1].items():
        if key in ("misses", "errors", "curve", "calibrated curve"):
            continue
        fmt = (lambda v: f"{v:.3f}") if isinstance(value, float) else str
        cells = [fmt(col[key]) if key in col else "" for _, col in columns]
        lines.append(f"| {key} | " + " | ".join(cells) + f" | {GOALS.get(key, '')} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", metavar="REF", help="git ref measured in the same run")
    parser.add_argument("--db", help="only this database")
    parser.add_argument("--parts", default=",".join(PARTS),
                        help="comma-separated parts among locked, working, public "
                             "(default all three; locked: aggregate figures only)")
    parser.add_argument("--show", type=int, default=0,
                        help="print up to N missed questions (never of the locked part)")
    parser.add_argument("--llm-url", metavar="URL",
                        help="base URL of an OpenAI-compatible API: adds its column")
    parser.add_argument("--llm-model", metavar="NAME", default="",
                        help="the model the --llm-url endpoint serves")
    parser.add_argument("--llm-key-env", metavar="VAR",
                        help="environment variable holding the API key (none: no key)")
    parser.add_argument("--llm-timeout", type=float, default=60.0, metavar="S",
                        help="seconds per generation (default 60)")
    parser.add_argument("--no-meaning", action="store_true",
                        help="add a column with db.match_by_meaning off")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--dump", metavar="FILE", type=Path,
                        help="append every question's answer (DSL, items, total) to FILE as "
                             "JSON lines, to compare two runs answer by answer")
    args = parser.parse_args()
    global DUMP
    DUMP = args.dump
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    if bad := [p for p in parts if p not in PARTS]:
        parser.error(f"--parts {','.join(bad)}: no such part; known: {', '.join(PARTS)}")
    if DUMP is not None and "locked" in parts:
        parser.error("--dump prints answers question by question: not with the locked part")
    llm = None
    if args.llm_url:  # options are checked before any data is read or any line printed
        llm = _llm_module().LLMSpec(args.llm_url, args.llm_model, args.llm_key_env,
                                    args.llm_timeout)
        if (problem := llm.problem()) is not None:
            parser.error(problem)
    loaded = {p: load(p) for p in parts}
    for p in [p for p in parts if loaded[p] is None]:
        print(f"{p} part skipped: no data at {DATA if p == 'public' else UNSEEN}")
    parts = [p for p in parts if loaded[p] is not None]
    known = sorted({q["db_id"] for p in parts for q in loaded[p] or []})
    if args.db and args.db not in known:
        parser.error(f"--db {args.db!r}: no such database; known: {', '.join(known)}")
    import anyio
    if args.json:
        now = anyio.run(run, args.db, args.show, None, True, parts[0])
        now.pop("leave_out", None)
        print(json.dumps(now))
        return
    columns: list[tuple[str, dict[str, Any]]] = []
    curves: list[tuple[str, list[str]]] = []
    gated: list[tuple[str, list[str]]] = []
    folds = None
    for part in parts:
        if args.db and not any(q["db_id"] == args.db for q in loaded[part] or []):
            continue
        if args.baseline:
            columns.append((f"{part}, baseline ({args.baseline})",
                            baseline(args.baseline, args.db, part)))
        now = anyio.run(run, args.db, args.show, None, True, part)
        folds = now.pop("leave_out", None) or folds
        n_db = len({q["db_id"] for q in loaded[part] or []
                    if not args.db or q["db_id"] == args.db})
        columns.append((f"builtin, {part} ({n_db} db)", now))
        curves.append((part, now.pop("curve")))
        gated.append((part, now.pop("calibrated curve")))
        if part == "locked":
            print(note_locked())
    if folds is not None and not args.db:
        columns += [(f"public left out ({len(folds['folds'])} folds)", folds["left out"])]
    by_meaning = anyio.run(run, args.db, args.show, None, False, parts[-1]) \
        if args.no_meaning else None
    if by_meaning is not None:
        by_meaning.pop("leave_out", None)
        by_meaning.pop("curve", None)
        by_meaning.pop("calibrated curve", None)
        columns.append((f"{parts[-1]}, names by spelling only", by_meaning))
    with_llm = anyio.run(run, args.db, args.show, llm, True, parts[-1]) \
        if llm is not None else None
    if with_llm is not None:
        with_llm.pop("curve", None)
        with_llm.pop("calibrated curve", None)
        columns.append((f"LLM ({llm.model}), {parts[-1]}", with_llm))
    print(f"Databases nobody tuned for: parts {', '.join(parts)}"
          + (f" (database {args.db})" if args.db else "")
          + f", db.max_results {MAX_RESULTS}"
          + (f"; LLM column: {llm.url}, uses.query" if llm is not None else "") + ".\n")
    print(table(columns))
    print("\nPrecision of answered / share of record questions answered / how many right /"
          " aggregates right, by relevance floor:\n")
    print("| floor | " + " | ".join(p for p, _ in curves) + " |")
    print("|---:|" + "---|" * len(curves))
    for i, floor in enumerate(CURVE):
        print(f"| {floor:.1f} | " + " | ".join(c[i] for _, c in curves) + " |")
    print(f"\nThe same, by one floor on the reading's calibrated confidence for every kind "
          f"of reading (the parser's: {product_thresholds()}; relevance floor at its "
          "default):\n")
    print("| floor | " + " | ".join(p for p, _ in gated) + " |")
    print("|---:|" + "---|" * len(gated))
    for i, gate in enumerate(GATES):
        print(f"| {gate:.2f} | " + " | ".join(c[i] for _, c in gated) + " |")
    if folds is not None and not args.db:
        print("\nLeave-databases-out (public): each fold's relevance floor fitted on the other "
              "folds (precision of answered >= 0.90 first), then its databases scored with it.")
        for line in folds["folds"]:
            print("- " + line)
    for line in (with_llm or {}).get("errors", []):
        print(line)
    shown = [c for label, c in columns if "locked" not in label]
    for miss in [m for c in shown for m in c.get("misses", [])]:
        print(json.dumps(miss, ensure_ascii=False, default=str))


if __name__ == "__main__":
    main()
