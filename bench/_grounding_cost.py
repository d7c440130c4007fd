"""The cost part of bench/bench_grounding.py: what grounding one answer costs in CPU, and
what it costs the other requests of the same server while it runs.

Run alone: ``.venv/bin/python -m bench._grounding_cost`` (``make bench-grounding`` prints
it too). No data needed: the answers are made here.

- CPU seconds (the grounding thread's own time) for answers of 2,000 and 20,000 random
  common Han characters, 20,000 characters of made-up English words and of Cyrillic, each
  with references of the same script; the bound is 1 s. Beside, jieba's tagger alone with
  its HMM on every unknown run, as the check ran it before it was bounded, and a short
  ordinary answer as the baseline.
- The event loop's lag while one answer of 1,064 Han characters (five Han documents as
  references) is grounded as a stream grounds it (``ground_answer``: a worker thread, one
  at a time): a ticker sleeping 2 ms measures how late it wakes, p50 and p99, against the
  same ticker on a quiet loop in the same run.
"""

from __future__ import annotations

import random
import statistics
import string
import time
from collections.abc import Callable
from typing import Any

import anyio

from agent_search.grounding import ground

HAN = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]


def _han(rng: random.Random, length: int) -> str:
    return "".join(rng.choice(HAN) + ("。" if rng.random() < 0.03 else "")
                   for _ in range(length))


def _latin(rng: random.Random, length: int, letters: str) -> str:
    vocab = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 9)))
             for _ in range(3000)]
    out: list[str] = []
    while sum(map(len, out)) < length:
        words = " ".join(rng.choice(vocab) for _ in range(rng.randint(5, 30)))
        out.append(words.capitalize() + (" #ref:1" if rng.random() < 0.5 else "") + ". ")
    return "".join(out)[:length]


def _cpu(answer: str, refs: list[dict[str, str]]) -> tuple[float, int, int]:
    """CPU seconds of one grounding, its sentences, and those left ``unchecked``."""
    start = time.thread_time()
    out = ground(answer, refs)
    return (time.thread_time() - start, len(out),
            sum(1 for g in out if g.status == "unchecked"))


def _tagger_as_before(answer: str) -> tuple[float, int, int]:
    """CPU seconds of jieba's part-of-speech tagger with its HMM on every unknown run, on
    each sentence of ``answer``: the part of the check that was unbounded."""
    import jieba.posseg

    sentences = [s for s in answer.split("。") if s]
    start = time.thread_time()
    for sentence in sentences:
        jieba.posseg.lcut(sentence)
    return time.thread_time() - start, len(sentences), 0


def cpu_table() -> None:
    rng = random.Random(42)
    ground("热身。Warm up.", [{"citation_id": "1", "title": "", "content": "北京。"}])
    han_refs = [{"citation_id": str(i), "title": "", "content": _han(rng, 3000)}
                for i in range(1, 4)]
    en = string.ascii_lowercase
    cyr = "".join(chr(c) for c in range(0x430, 0x450))
    en_refs = [{"citation_id": str(i), "title": "", "content": _latin(rng, 3000, en)}
               for i in range(1, 4)]
    cyr_refs = [{"citation_id": "1", "title": "", "content": _latin(rng, 3000, cyr)}]
    ordinary = ("Aspirin reduced the risk of stroke by 30% in the trial #ref:1. "
                "The effect held in patients over 65 #ref:1.")
    base, _, _ = _cpu(ordinary, [{"citation_id": "1", "title": "", "content": ordinary}])
    rows: list[tuple[str, str, Callable[[], tuple[float, int, int]]]] = [
        ("Han", "2,000", lambda: _cpu(_han(rng, 2000), han_refs)),
        ("Han", "20,000", lambda: _cpu(_han(rng, 20000), han_refs)),
        ("Han: jieba's tagger alone, HMM on every unknown run (as before the bound)",
         "2,000", lambda: _tagger_as_before(_han(rng, 2000))),
        ("English (made-up words)", "20,000", lambda: _cpu(_latin(rng, 20000, en), en_refs)),
        ("Cyrillic", "20,000", lambda: _cpu(_latin(rng, 20000, cyr), cyr_refs)),
    ]
    print("\ngrounding cost: CPU seconds of one answer's check (its thread's time); "
          f"baseline: a two-sentence answer, {base * 1000:.1f} ms")
    print("| answer | characters | CPU s | × baseline | sentences | unchecked |\n"
          "|---|---:|---:|---:|---:|---:|")
    for name, chars, measure in rows:
        seconds, sentences, left = measure()
        print(f"| {name} | {chars} | {seconds:.2f} | {seconds / max(base, 1e-6):.0f} | "
              f"{sentences} | {left} |")


async def _lags(duration: Callable[[], bool]) -> list[float]:
    """How late (ms) a 2 ms sleep wakes, for as long as ``duration()`` holds."""
    lags: list[float] = []
    while duration():
        start = time.perf_counter()
        await anyio.sleep(0.002)
        lags.append((time.perf_counter() - start) * 1000 - 2.0)
    return lags


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def loop_table() -> None:
    from agent_search.agent._grounding import ground_answer
    from agent_search.searcher import Searcher
    from agent_search.types import ResultItem

    rng = random.Random(7)
    docs = [ResultItem(citation_id=str(i), type="kb", title=f"doc {i}",
                       content=_han(rng, 2000)) for i in range(1, 6)]
    answer = "".join(_han(rng, 1064))
    ctx = Searcher().context(user_id="tenant-a")

    async def quiet() -> list[float]:
        end = time.perf_counter() + 1.0
        return await _lags(lambda: time.perf_counter() < end)

    async def busy() -> tuple[list[float], float]:
        done: list[float] = []

        async def check() -> None:
            start = time.perf_counter()
            await ground_answer(ctx, answer, docs)
            done.append(time.perf_counter() - start)

        async with anyio.create_task_group() as tg:
            tg.start_soon(check)
            lags = await _lags(lambda: not done)
        return lags, done[0]

    async def main() -> tuple[list[float], list[float], float]:
        await ground_answer(ctx, "热身。", docs[:1])
        calm = await quiet()
        lags, seconds = await busy()
        return calm, lags, seconds

    calm, lags, seconds = anyio.run(main)
    print(f"\nthe event loop while one answer of {len(answer)} Han characters (5 documents "
          f"of 2,000) is grounded in {seconds:.2f} s: how late a 2 ms sleep wakes (ms)")
    print("| loop | wake-ups | p50 | p99 | max |\n|---|---:|---:|---:|---:|")
    for name, values in (("quiet (baseline)", calm), ("while grounding", lags)):
        print(f"| {name} | {len(values)} | {statistics.median(values):.2f} | "
              f"{_pct(values, 0.99):.2f} | {max(values):.2f} |")


def main(*_: Any) -> None:
    cpu_table()
    loop_table()


if __name__ == "__main__":
    main()
