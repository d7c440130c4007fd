"""The knowledge base on real documentation: five public projects' Markdown docs in one
collection, with questions written and labelled by hand, a fifth of them in a user's own
words (symptoms, goals).

The docs are not part of this repository (their licences are their projects') and this
script fetches nothing: it reads them from a folder you give it (``--docs DIR`` or
``$AGENT_SEARCH_REALDOCS``) and skips with a one-line reason when there is none. Build
the folder once (the commits the questions were written against are in
``bench/realdocs_questions.json``, ``sources``)::

    mkdir -p realdocs && cd realdocs
    git clone -q https://github.com/valkey-io/valkey-doc && git -C valkey-doc checkout -q fe8f96a2
    git clone -q https://github.com/pola-rs/polars && git -C polars checkout -q 4db92c12
    git clone -q https://github.com/Homebrew/brew && git -C brew checkout -q aad366ff
    git clone -q https://github.com/caddyserver/website && git -C website checkout -q 1a6bbd7d
    git clone -q https://github.com/ollama/ollama && git -C ollama checkout -q fb307609
    mv valkey-doc/topics valkey && mv polars/docs/source/user-guide polars-docs \
      && mv brew/docs homebrew && mv website/src/docs/markdown caddy \
      && mv ollama/docs ollama-docs && rm -rf valkey-doc polars brew website ollama \
      && mv polars-docs polars && mv ollama-docs ollama
    find ollama -name '*.mdx' -exec sh -c 'for f; do mv "$f" "${f%.mdx}.md"; done' _ {} +

(the folder then holds ``valkey/``, ``polars/``, ``homebrew/``, ``caddy/`` and ``ollama/``;
the labels are page paths under it). Every ``*.md`` file under it is ingested into one
collection, in the data home ``--work`` (default ``bench/results/realdocs_home``; kept
between runs, an unchanged page is not embedded again).

Each question is asked through the real searcher (``limit`` 5) with each configuration
(``--config NAME=JSON``, default: ``kb.foreign_veto`` off, as before issue 34, and the
defaults), in the same run. Printed per configuration and split:

* ``top-3``: an expected page among the first 3 hits, before the floor (ranking);
* ``top-3 kept``: the same among the hits the floor (``kb.min_score``) keeps;
* ``answers lost``: answerable questions whose expected page was in the top 3 before the
  floor and is no longer kept;
* ``answerable abstention``: answerable questions with nothing kept;
* ``near-topic abstention`` and ``far-off abstention``: nothing kept;
* ``worded unlike their page``: the same as ``top-3 kept`` for the questions in a user's
  own words (``style: user``).

``--split tune|held-out|all`` (default all, each split printed: ``tune`` is the working
part, ``held-out`` the locked one); ``--json FILE`` writes every question's kept pages
and scores. ``--folds`` adds leave-one-project-out: for each project, the configuration
that does best on the *other* projects' working questions (:meth:`Tally.objective`), and
its figures on the left-out project.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

import anyio  # noqa: E402

from agent_search import Request, SearchConfig, Searcher  # noqa: E402
from agent_search.kb import close_stores, create_handler, ingest_paths  # noqa: E402

QUESTIONS = ROOT / "bench" / "realdocs_questions.json"
COLLECTION = "realdocs"
RAW: dict[str, list[tuple[dict[str, Any], list[tuple[str, float]], float]]] = {}
"""Every configuration's answers: (question, hits, floor), for the folds."""
PARTIAL: Path | None = None
"""Where each configuration's answers are saved as it ends (``--json FILE`` + .raw)."""
DEFAULT_CONFIGS = {"before (no veto)": {"kb": {"foreign_veto": False}}, "now": {}}


@dataclass
class Tally:
    """Counts of one configuration over one split."""

    answerable: int = 0
    top3: int = 0
    top3_kept: int = 0
    lost: int = 0
    answerable_abstained: int = 0
    near: int = 0
    near_abstained: int = 0
    far: int = 0
    far_abstained: int = 0
    user: int = 0
    user_top3_kept: int = 0
    rows: list[dict[str, Any]] = field(default_factory=list)

    def add(self, q: dict[str, Any], pages: list[tuple[str, float]], floor: float) -> None:
        kept = [(p, s) for p, s in pages if s >= floor]
        expected = set(q["expected"])
        self.rows.append({"id": q["id"], "kind": q["kind"], "split": q["split"],
                          "hits": [[p, round(s, 4)] for p, s in pages[:5]]})
        if q["kind"] == "answerable":
            self.answerable += 1
            hit = bool(expected & {p for p, _ in pages[:3]})
            hit_kept = bool(expected & {p for p, _ in kept[:3]})
            self.top3 += hit
            self.top3_kept += hit_kept
            self.lost += hit and not hit_kept
            self.answerable_abstained += not kept
            if q.get("style") == "user":
                self.user += 1
                self.user_top3_kept += hit_kept
        elif q["kind"] == "near-topic":
            self.near += 1
            self.near_abstained += not kept
        else:
            self.far += 1
            self.far_abstained += not kept

    def objective(self) -> float:
        """What a leave-one-project-out fold chooses a configuration by (on the other
        projects' working questions): abstention where nothing answers, less three times
        the answers lost, plus the user-worded questions kept."""
        def r(a: int, b: int) -> float:
            return a / b if b else 0.0
        return (r(self.near_abstained, self.near) + r(self.far_abstained, self.far)
                - 3 * r(self.lost, self.answerable) + r(self.user_top3_kept, self.user))

    def measures(self) -> list[tuple[str, str, str]]:
        def r(a: int, b: int) -> str:
            return f"{a / b:.2f}" if b else "-"
        return [
            (f"top-3, before the floor ({self.answerable})", r(self.top3, self.answerable),
             ""),
            (f"top-3 kept ({self.answerable})", r(self.top3_kept, self.answerable), "≥ 0.90"),
            (f"answers lost to the floor ({self.answerable})", r(self.lost, self.answerable),
             "≤ 0.10"),
            (f"answerable abstention ({self.answerable})",
             r(self.answerable_abstained, self.answerable), ""),
            (f"worded unlike their page: top-3 kept ({self.user})",
             r(self.user_top3_kept, self.user), "≥ 0.50"),
            (f"near-topic abstention ({self.near})", r(self.near_abstained, self.near),
             "≥ 0.70"),
            (f"far-off abstention ({self.far})", r(self.far_abstained, self.far), "1.00"),
        ]


def _project(q: dict[str, Any]) -> str:
    return str(q["id"]).split("-")[0]


def _page(item: Any, root: Path) -> str:
    source = str(item.metadata.get("source") or "")
    path = Path(source)
    if path.is_absolute():
        try:
            return path.resolve().relative_to(root).as_posix()
        except ValueError:
            return source
    return path.as_posix()


async def run(docs: Path, work: Path, configs: dict[str, dict[str, Any]],
              questions: list[dict[str, Any]]) -> dict[str, dict[str, Tally]]:
    # a first search embeds the model's background, and the machine may be loaded: the
    # figures are about what is found, not about the 10 s limit
    base = SearchConfig(home=work, kb={"source_root": str(docs)},
                        options={"timeout": 300, "deadline": 300})
    files = sorted(p for p in docs.rglob("*.md") if p.is_file())
    started = time.perf_counter()
    report = await ingest_paths(base, files, COLLECTION)
    print(f"ingest: {len(files)} pages, {report.chunks} chunks, "
          f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    out: dict[str, dict[str, Tally]] = {}
    from dataclasses import replace

    from agent_search.kb._retrieval import _foreign
    shipped = _foreign.FOREIGN
    for name, raw in configs.items():
        overrides = {k: v for k, v in raw.items() if k != "_foreign"}
        fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v
                                   for k, v in raw.get("_foreign", {}).items()}
        _foreign.FOREIGN = replace(shipped, **fields)
        config = base.merged(overrides) if overrides else base
        floor = config.min_score_for("kb")
        searcher = Searcher(config, handlers=[create_handler(config)])
        tallies = out.setdefault(name, {})
        started = time.perf_counter()
        try:
            for q in questions:
                result = await searcher.search(Request(
                    type="kb", query=q["question"], limit=5, min_score=0.0,
                    options={"collections": [COLLECTION]}))
                if result.error:
                    raise RuntimeError(f"{q['id']}: {result.error}")
                pages = [(_page(i, docs), i.score) for i in result.items]
                RAW.setdefault(name, []).append((q, pages, floor))
                for split in (q["split"], "all"):
                    tallies.setdefault(split, Tally()).add(q, pages, floor)
        finally:
            await searcher.aclose()
            _foreign.FOREIGN = shipped
        if PARTIAL is not None:  # a long run's answers so far survive an interruption
            PARTIAL.write_text(json.dumps(RAW), encoding="utf-8")
        print(f"{name}: {len(questions)} questions, "
              f"{(time.perf_counter() - started) / max(len(questions), 1) * 1000:.0f} ms each",
              file=sys.stderr, flush=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=Path,
                        default=os.environ.get("AGENT_SEARCH_REALDOCS") or None,
                        help="the docs folder (valkey/, polars/, homebrew/, caddy/, ollama/); "
                             "default $AGENT_SEARCH_REALDOCS")
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "results" /
                        "realdocs_home", help="data home (kept: unchanged pages are reused)")
    parser.add_argument("--split", choices=("tune", "held-out", "all"), default="all")
    parser.add_argument("--config", action="append", default=[], metavar="NAME=JSON",
                        help="a configuration to compare (repeatable); default: "
                             + ", ".join(DEFAULT_CONFIGS))
    parser.add_argument("--json", type=Path, help="write every question's hits here")
    parser.add_argument("--folds", action="store_true", help=(
        "leave one project out: each project's figures under the configuration chosen "
        "on the other projects' working questions (needs --split all or tune; with tune "
        "only the working part is printed)"))
    args = parser.parse_args()
    if args.docs is None or not Path(args.docs).is_dir():
        print("bench_realdocs: skipped, no docs folder (--docs DIR or $AGENT_SEARCH_REALDOCS; "
              "see this script's docstring for how to build it)")
        return 0
    docs = Path(args.docs).resolve()
    every = json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]
    missing = sorted({p for q in every for p in q["expected"] if not (docs / p).is_file()})
    if missing:
        print(f"bench_realdocs: skipped, {docs} lacks {len(missing)} of the labelled pages "
              f"(first: {missing[0]}); see this script's docstring for how to build it")
        return 0
    configs = {name: json.loads(raw) if raw else {}
               for name, _, raw in (spec.partition("=") for spec in args.config)}
    questions = [q for q in every if args.split in ("all", q["split"])]
    args.work.mkdir(parents=True, exist_ok=True)
    if args.json:
        global PARTIAL
        PARTIAL = args.json.with_suffix(".raw.json")
    try:
        results = anyio.run(run, docs, args.work, configs or DEFAULT_CONFIGS, questions)
    finally:
        close_stores()
    _print_table(results, ["tune", "held-out", "all"] if args.split == "all" else [args.split])
    if args.folds and len(results) > 0:
        _print_folds(list(results))
    if args.json:
        args.json.write_text(json.dumps({n: r["all"].rows for n, r in results.items()},
                                        indent=1), encoding="utf-8")
    return 0


def _tally(name: str, keep: Any) -> Tally:
    t = Tally()
    for q, pages, floor in RAW[name]:
        if keep(q):
            t.add(q, pages, floor)
    return t


def _choose(names: list[str], left: str) -> str:
    """The configuration a fold keeps: the best on the other projects' working part."""
    return max(names, key=lambda n: _tally(
        n, lambda q: q["split"] == "tune" and _project(q) != left).objective())


def _print_folds(names: list[str]) -> None:
    """Leave one project out: for each project, the configuration with the best
    :meth:`Tally.objective` on the *other* projects' working questions (far-off ones
    included), and its figures on the left-out project, working and locked apart."""
    projects = sorted({_project(q) for q, _, _ in RAW[names[0]]} - {"far"})
    print("\n| left out | chosen | split | " + " | ".join(
        label.split(" (")[0] for label, _, _ in Tally().measures()) + " |")
    print("|---|---|---|" + "---:|" * len(Tally().measures()))
    choice = {left: _choose(names, left) for left in projects}
    splits = [s for s in ("tune", "held-out") if any(q["split"] == s for q, _, _ in RAW[names[0]])]
    for left in projects:
        chosen = choice[left]
        for split in splits:
            t = _tally(chosen, lambda q, s=split, p=left: q["split"] == s and _project(q) == p)
            print(f"| {left} | {chosen} | {split} | "
                  + " | ".join(v for _, v, _ in t.measures()) + " |")
    for split in splits:
        # each project's questions answered by its own fold's choice, summed
        total = Tally()
        for left in projects:
            for q, pages, floor in RAW[choice[left]]:
                if q["split"] == split and _project(q) == left:
                    total.add(q, pages, floor)
        # far-off questions belong to no project: answered by the most folds' choice
        most = max(set(choice.values()), key=list(choice.values()).count)
        far = _tally(most, lambda q, s=split: q["split"] == s and _project(q) == "far")
        total.far, total.far_abstained = far.far, far.far_abstained
        print(f"| every fold | - | {split} | "
              + " | ".join(v for _, v, _ in total.measures()) + " |")


def _print_table(results: dict[str, dict[str, Tally]], splits: list[str]) -> None:
    names = list(results)
    print(f"| measure (real docs, {COLLECTION}) | split | " + " | ".join(names) + " | goal |")
    print("|---|---|" + "---:|" * len(names) + "---|")
    for split in splits:
        rows = [results[n][split].measures() for n in names]
        for i, (label, _, goal) in enumerate(rows[0]):
            print(f"| {label} | {split} | " + " | ".join(r[i][1] for r in rows) + f" | {goal} |")


if __name__ == "__main__":
    sys.exit(main())
