"""Leave-databases-out for ``bench/bench_spider.py`` (issue 35): folds of databases, the
relevance floor fitted on the develop part of each fold, the left-out part scored with it.

The scoring itself (``rescore``, ``summarise``) is the benchmark's; this module only
decides which questions are scored with which floor.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

Rescore = Callable[[dict[str, Any], float], dict[str, Any]]
Summarise = Callable[[list[dict[str, Any]], list[float], int], dict[str, Any]]

FOLDS = 3
FLOORS = [round(0.05 * i, 2) for i in range(19)]
"""The relevance floors a fold may pick (0 … 0.9)."""


def split(sizes: dict[str, int], k: int = FOLDS) -> list[list[str]]:
    """The databases in ``k`` folds of about as many questions each: the largest first,
    each to the fold with the fewest questions so far (ties by name). Fixed by the data,
    not chosen: every database is left out exactly once."""
    folds: list[list[str]] = [[] for _ in range(k)]
    load = [0] * k
    for db_id in sorted(sizes, key=lambda d: (-sizes[d], d)):
        i = min(range(k), key=lambda j: (load[j], j))
        folds[i].append(db_id)
        load[i] += sizes[db_id]
    return [sorted(f) for f in folds if f]


def fit_floor(asked: list[dict[str, Any]], rescore: Rescore, summarise: Summarise) -> float:
    """The relevance floor the develop part of a fold picks: precision of answered ≥ 0.90
    first (the highest-scoring floor that reaches it, by ``overall``), else the floor of
    the best precision. The one number fitted to data here."""
    best: tuple[bool, float, float, float] | None = None
    for floor in FLOORS:
        m = summarise([rescore(e, floor) for e in asked], [], 0)
        precise = m["precision of answered"] >= 0.90
        key = (precise, m["overall"] if precise else m["precision of answered"], -floor,
               floor)
        if best is None or key[:3] > best[:3]:
            best = key
    assert best is not None
    return best[3]


def leave_out(asked: list[dict[str, Any]], times: list[float], rescore: Rescore,
              summarise: Summarise) -> dict[str, Any]:
    """Leave-databases-out (issue 35): for each fold, the floor fitted on the other folds
    (the develop part) and the fold's own questions scored with it. ``left out``: every
    question scored once, as a database nobody developed on; ``develop``: the develop
    parts, each question once per fold it develops in; ``folds``: one line per fold."""
    sizes = Counter(e["db"] for e in asked)
    left: list[dict[str, Any]] = []
    develop: list[dict[str, Any]] = []
    lines: list[str] = []
    for fold in split(dict(sizes)):
        dev = [e for e in asked if e["db"] not in fold]
        held = [e for e in asked if e["db"] in fold]
        floor = fit_floor(dev, rescore, summarise) if dev else 0.0
        here = [rescore(e, floor) for e in held]
        there = [rescore(e, floor) for e in dev]
        left += here
        develop += there
        a, b = summarise(here, [], 0), summarise(there, [], 0)
        lines.append(f"left out {', '.join(fold)} ({len(held)} q), floor {floor:.2f} fitted "
                     f"on the rest: F1 {a['record F1']:.3f} / {b['record F1']:.3f}, precision "
                     f"{a['precision of answered']:.3f} / {b['precision of answered']:.3f}, "
                     f"how many {a['how many right']:.3f} / {b['how many right']:.3f}, "
                     f"aggregates {a['aggregate right']:.3f} / {b['aggregate right']:.3f} "
                     "(left out / develop)")
    return {"left out": summarise(left, times, 0), "develop": summarise(develop, times, 0),
            "folds": lines}
