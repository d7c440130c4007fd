"""How bench/bench_grounding.py runs the grounding: with the embedding model (``--embed``),
the timing baseline (sentence splitting alone), and ``--baseline REF``: the same answers
grounded by the ``agent_search`` package of an older commit, in a subprocess (the
labelled set is built once, by the current code, so both sides judge the same
sentences)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def ground_only(path: str) -> None:
    """Subprocess side: ground the answers of a JSON file and print, as one JSON line,
    each sentence's start, end, status and support, and the time grounding took (after
    a warm-up: pySBD's rules and jieba's dictionary load on first use)."""
    from agent_search.grounding import ground

    cases = json.loads(Path(path).read_text(encoding="utf-8"))
    ground("Warm up the segmenter. And jieba: 北京三十五。", [])
    grounded, seconds, cpu = [], 0.0, 0.0
    for c in cases:
        t0, c0 = time.perf_counter(), time.process_time()
        sentences = ground(c["answer"], c["references"])
        seconds += time.perf_counter() - t0
        cpu += time.process_time() - c0
        grounded.append([[g.start, g.end, g.status, g.support] for g in sentences])
    print(json.dumps({"grounded": grounded, "seconds": seconds, "cpu_seconds": cpu,
                      "sentences": sum(len(g) for g in grounded)}))


def grounded_at(root: Path, ref: str, cases: list[Any]
                ) -> tuple[list[list[list[Any]]], float]:
    """[start, end, status, support] of each sentence of each case's answer, grounded
    by the package of git ``ref``, and its milliseconds per sentence."""
    out = _ground_at(root, ref, cases)
    return out["grounded"], 1000 * out["seconds"] / max(1, out["sentences"])


def cost_at(root: Path, ref: str, cases: list[Any]) -> tuple[float, float]:
    """Milliseconds per sentence of git ``ref``'s grounding on ``cases``: wall clock, and
    CPU time of the whole process (all its threads: the embedding model runs in its own),
    which a shared machine's load moves far less than the wall clock."""
    out = _ground_at(root, ref, cases)
    n = max(1, out["sentences"])
    return 1000 * out["seconds"] / n, 1000 * out.get("cpu_seconds", float("nan")) / n


def _ground_at(root: Path, ref: str, cases: list[Any]) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-grounding-base-"))
    try:
        archive = subprocess.run(["git", "-C", str(root), "archive", ref, "agent_search"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
        (tmp / "cases.json").write_text(json.dumps(
            [{"answer": c.answer, "references": c.references} for c in cases]),
            encoding="utf-8")
        # the ref's package first, then the checkout for the bench package itself
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp), str(root)])}
        done = subprocess.run([sys.executable, "-m", "bench.bench_grounding",
                               "--ground-only", str(tmp / "cases.json")], env=env,
                              check=True, capture_output=True, text=True, cwd=tmp)
        out: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def embedder(root: Path) -> Any:
    from agent_search.embedding import get_embedder
    from agent_search.kb.settings import KBSettings

    home = Path(os.environ.get("AGENT_SEARCH_HOME", root / ".agent_search"))
    return get_embedder(KBSettings(), home).embed


class Memo:
    """The embedder with its vectors kept across the tuning grid's runs (the timed runs
    use the plain embedder)."""

    def __init__(self, embed: Any) -> None:
        self.embed = embed
        self.seen: dict[str, Any] = {}

    def __call__(self, texts: Any) -> Any:
        import numpy as np

        missing = [t for t in texts if t not in self.seen]
        if missing:
            for t, v in zip(missing, self.embed(missing), strict=True):
                self.seen[t] = v
        return np.stack([self.seen[t] for t in texts])


def segmentation_ms(cases: list[Any]) -> float:
    """The baseline of the timing: splitting the same answers into sentences only."""
    from agent_search.citation import marker_regex
    from agent_search.grounding._segment import segment

    marker = marker_regex("#ref:{id}")
    t0 = time.perf_counter()
    n = sum(len(segment(c.answer, marker)) for c in cases)
    return 1000 * (time.perf_counter() - t0) / max(1, n)
