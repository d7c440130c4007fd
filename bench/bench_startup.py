"""How long the CLI and the package take to start (issue 31 item 3).

Run: ``.venv/bin/python -m bench.bench_startup`` (or ``make bench-startup``). Each row is
a fresh process, run ``--runs`` times (median), measured in CPU seconds (user + sys of the
child, from ``resource.getrusage(RUSAGE_CHILDREN)``) and wall seconds, beside
``python -c pass`` in the same run (the machine is shared and noisy: compare the rows with
each other, not with another day's figures):

- ``python -c pass``: the interpreter alone, the floor of every row;
- ``import agent_search``;
- ``Searcher.from_config``: the package imported and a searcher built with the builtin
  handlers (no network, nothing contacted);
- ``agent-search --help``;
- ``agent-search search kb "..." -c notes``: a cold kb search on a two-note collection,
  embedding model included (the collection is ingested once, before the timing).

``--baseline-src DIR`` adds a column for another checkout of the package (e.g. a
``git worktree`` of an earlier commit), run from the same interpreter and environment
with ``PYTHONPATH=DIR``: before and after in one run. Goals on a quiet 2-core machine:
kb search <= 1.2 s CPU / 1.0 s wall, ``--help`` <= 0.4 s, ``import agent_search`` <=
0.25 s, ``Searcher.from_config`` <= 0.3 s.

Everything runs in a temporary folder (data home and working directory), so no project
configuration is found: the defaults, as for a new user. Each row is run once untimed
first, with ``PYTHONDONTWRITEBYTECODE`` unset, so the timed runs read compiled bytecode as
on a user's machine (pip compiles at install; the project's ``make install`` does not, and
with the variable set every start compiled numpy, pydantic and the package from source).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "how do bees tell each other where the food is"
NOTES = {
    "bees.md": "# Bees\n\nHoney bees tell each other the direction of food with a waggle "
               "dance in the hive.\n",
    "tea.md": "# Tea\n\nGreen tea is brewed at about 80 degrees Celsius for two minutes.\n",
}
FROM_CONFIG = "from agent_search import Searcher; Searcher.from_config()"
GOALS = {"import agent_search": 0.25, "Searcher.from_config": 0.3,
         "agent-search --help": 0.4, "search kb (cold CLI)": 1.2}
"""CPU seconds (user + sys) each row should stay under on a quiet 2-core machine."""


def rows() -> dict[str, list[str]]:
    """The command of each row (after the interpreter)."""
    cli = ["-m", "agent_search"]
    return {
        "python -c pass": ["-c", "pass"],
        "import agent_search": ["-c", "import agent_search"],
        "Searcher.from_config": ["-c", FROM_CONFIG],
        "agent-search --help": [*cli, "--help"],
        "search kb (cold CLI)": [*cli, "search", "kb", QUESTION, "-c", "notes"],
    }


def measure(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """One fresh process: (CPU seconds of the child, wall seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, *args], env=env, cwd=cwd,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}): "
                         f"{done.stderr.decode(errors='replace')[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def environment(home: Path, src: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("AGENT_SEARCH_") and k != "PYTHONDONTWRITEBYTECODE"}
    env["AGENT_SEARCH_HOME"] = str(home)
    env.pop("PYTHONPATH", None)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each row (median)")
    parser.add_argument("--baseline-src", type=Path, default=None,
                        help="another checkout of the package to measure beside this one")
    parser.add_argument("--only", default=None,
                        help="comma-separated row names to run (default: all)")
    ns = parser.parse_args()
    sources: dict[str, Path | None] = {"this": None}
    if ns.baseline_src is not None:
        sources = {"baseline": ns.baseline_src.resolve(), "this": None}
    wanted = rows()
    if ns.only:
        keep = {n.strip() for n in ns.only.split(",")}
        wanted = {k: v for k, v in wanted.items() if k in keep or k == "python -c pass"}
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        work = Path(tmp)
        for name, text in NOTES.items():
            (work / name).write_text(text)
        homes = {label: work / f"home-{label}" for label in sources}
        for label, src in sources.items():  # the collection, once per checkout
            env = environment(homes[label], src)
            measure(["-m", "agent_search", "kb", "ingest", "-c", "notes",
                     *(str(work / n) for n in NOTES)], env, work)
        for args in wanted.values():  # bytecode written, files in the page cache
            for label, src in sources.items():
                measure(args, environment(homes[label], src), work)
        figures: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for _ in range(ns.runs):  # interleaved, so both columns see the same load
            for row, args in wanted.items():
                for label, src in sources.items():
                    figures.setdefault((row, label), []).append(
                        measure(args, environment(homes[label], src), work))
    report(wanted, sources, figures, ns.runs)


def report(wanted: dict[str, list[str]], sources: dict[str, Path | None],
           figures: dict[tuple[str, str], list[tuple[float, float]]], runs: int) -> None:
    print(f"startup, median of {runs} runs; CPU = user + sys seconds of the process; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    head = f"{'row':26}" + "".join(f" {label + ' CPU':>13} {label + ' wall':>13}"
                                   for label in sources)
    print(head + f" {'goal CPU':>9}")
    for row in wanted:
        line = f"{row:26}"
        for label in sources:
            cpu = statistics.median(c for c, _ in figures[(row, label)])
            wall = statistics.median(w for _, w in figures[(row, label)])
            line += f" {cpu:13.3f} {wall:13.3f}"
        goal = GOALS.get(row)
        print(line + (f" {goal:9.2f}" if goal else f" {'':9}"))


if __name__ == "__main__":
    main()
