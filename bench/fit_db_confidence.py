"""Refit the calibrated confidence of the builtin database reading on the WORKING part.

Run: ``BENCH_DB_UNSEEN=../dbdata .venv/bin/python -m bench.fit_db_confidence [--floor F]``

Asks every question of the working part of the held-out databases (``bench/bench_spider.py``,
the gate off), and for each question answered (with the relevance floor ``--floor``,
default 0: readings the db floor hides teach too) takes the features of its reading
(:mod:`agent_search.query.nl._answer._calibration`) and, as its label, how right the answer is:
the precision of its rows for a record question, right or not for a "how many" or an
aggregate. It fits a logistic regression to them (numpy: full-batch gradient descent on the
cross-entropy with soft labels, L2 0.01, features as they are: every one is in 0..1) and
chooses a floor per kind of reading (records — chosen on record and text-match answers
together —, a count, grouped numbers): the one that
maximises the sum, over the answers it keeps, of how right each is minus 0.90 — an answer
less likely right than the precision asked of all is worth less than silence. The floors
are chosen on out-of-fold probabilities (each database's from a fit on the others), so
that a database's own questions never set its own floor.

Prints the coefficients and the floors to paste into ``_calibration.py`` and the
precision / answered curve of the out-of-fold probabilities. Never reads the locked part.
"""

from __future__ import annotations

import argparse
from typing import Any

import anyio
import numpy as np

from agent_search.config import SearchConfig
from agent_search.query.nl._answer._calibration import FEATURES, kind_of
from bench import bench_spider

L2 = 0.01
GOAL = 0.90
FITTED = {"records": ("records", "text"), "count": ("count",), "grouped": ("grouped",)}
"""The floor of each kind of reading is chosen on the answers of these kinds: rows that
meet conditions and rows ranked by a text match are both "records answered" (the measure
the records floor protects); text matches themselves are not gated (see
``_calibration.THRESHOLDS``)."""


def fit(x: np.ndarray, y: np.ndarray, steps: int = 4000, rate: float = 0.5) -> np.ndarray:
    """Logistic-regression weights (bias unpenalised) by gradient descent."""
    w = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], L2)
    penalty[0] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        w -= rate * ((x.T @ (p - y)) / len(y) + penalty * w)
    return w


def predict(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(x @ w)))


def precision_at(p: np.ndarray, y: np.ndarray, floor: float) -> tuple[float, int]:
    kept = p >= floor
    return (float(y[kept].mean()) if kept.any() else 1.0), int(kept.sum())


def choose(p: np.ndarray, y: np.ndarray, floors: np.ndarray) -> float:
    """The floor that maximises the sum of ``y − GOAL`` over the answers it keeps: an
    answer right with a chance under :data:`GOAL` costs more (a wrong answer quoted as
    fact) than it is worth; ties go to the lowest floor."""
    gains = [float((y[p >= f] - GOAL).sum()) for f in floors]
    return float(floors[int(np.argmax(gains))])


def _label(s: dict[str, Any]) -> float | None:
    """How right one scored answer is: right or not (1 / 0) for a "how many" or an
    aggregate question, the precision of its rows for a record question; None when
    nothing was answered (or nothing can be scored)."""
    if not s["answered"]:
        return None
    if s["kind"] in ("count", "aggregate"):
        return float(s["right"])
    return s.get("precision")


def collect(floor: float) -> list[dict[str, Any]]:
    """One row per question answered with the relevance floor ``floor``: its reading's
    features, the kind of its reading, how right its answer is (``y``) and, when it is
    answered over the default relevance floor (what a searcher shows), how right that is
    (``shown``)."""
    questions = bench_spider.load("working")
    if questions is None:
        raise SystemExit(f"no working part at {bench_spider.UNSEEN}")
    asked, _ = anyio.run(lambda: bench_spider.ask(questions, 0, None, meaning=True))
    shown_floor = SearchConfig().min_score_for("db")
    rows = []
    for entry in asked:
        label = _label(bench_spider.rescore(entry, floor, 0.0))
        if entry["features"] is None or label is None:
            continue
        rows.append({"db": entry["db"], "x": [entry["features"][n] for n in FEATURES],
                     "y": label, "kind": kind_of(entry["features"]),
                     "shown": _label(bench_spider.rescore(entry, shown_floor, 0.0))})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--floor", type=float, default=0.0,
                        help="relevance floor of the rows labelled (default 0: readings the "
                             "db floor hides teach too)")
    args = parser.parse_args()
    rows = collect(args.floor)
    x = np.array([r["x"] for r in rows], dtype=float)
    y = np.array([r["y"] for r in rows], dtype=float)
    dbs = np.array([r["db"] for r in rows])
    oof = np.zeros(len(y))
    for name in np.unique(dbs):
        mine = dbs == name
        oof[mine] = predict(x[mine], fit(x[~mine], y[~mine]))
    w = fit(x, y)
    print(f"{len(y)} answered questions of {len(np.unique(dbs))} working databases; "
          f"mean label {y.mean():.3f}")
    print("COEFFICIENTS = (" + ", ".join(f"{v:.3f}" for v in w) + ")")
    print("  # " + ", ".join(FEATURES))
    floors = np.round(np.arange(0.0, 0.96, 0.01), 2)
    # each floor is chosen on what a searcher shows: answers over the default relevance
    # floor, scored as the benchmark scores them
    chosen: dict[str, float] = {}
    lines = []
    for kind, kinds in FITTED.items():
        mine = np.array([r["kind"] in kinds and r["shown"] is not None for r in rows])
        y_shown = np.array([r["shown"] or 0.0 for r in rows])[mine]
        chosen[kind] = choose(oof[mine], y_shown, floors) if mine.any() else 0.0
        lines.append(f"{kind} readings ({int(mine.sum())} answered), out of fold: "
                     "right / answered, and how right those dropped are, by floor:")
        for f in (0.0, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, chosen[kind]):
            prec, kept = precision_at(oof[mine], y_shown, f)
            lost = oof[mine] < f
            below = y_shown[lost].mean() if lost.any() else float("nan")
            lines.append(f"  {f:.2f}: {prec:.3f} / {kept} (dropped: {below:.3f})")
    print("THRESHOLDS = {" + ", ".join(f'"{k}": {v:.2f}' for k, v in chosen.items()) + "}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
