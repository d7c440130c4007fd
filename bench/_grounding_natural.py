"""The natural-wording part of bench/bench_grounding.py: answers reworded by hand, the
way a language model rewords its source, rather than by template.

Run alone: ``.venv/bin/python -m bench._grounding_natural [--half tune|held-out|both]``
(``make bench-grounding`` prints both halves). No shared data: the set is
``bench/grounding_natural.json`` (52 short references written for this bench from facts
in public-domain texts, 206 answer sentences, each labelled by its kind before any run):

- ``paraphrase`` — says what the reference says in other words (synonyms, passive and
  active, clauses reordered, numbers written another way): must not be flagged;
- ``reversal`` — the direction turned without a negation word (an antonym verb,
  adjective or quantity): must be flagged;
- ``negation`` — negated without the word "not" ("none of", "failed to", "no bearing
  on", 未, 并非...): must be flagged;
- ``number`` — a count, ratio, fold or date changed: must be flagged.

Each answer is one sentence citing its reference (``#ref:1``), grounded against that
reference alone. "Flagged" is ``unsupported``; ``unchecked`` is counted apart. A
reference's half (``tune``, read while writing the check; ``held-out``, never read) is
fixed by a hash of its id.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from agent_search.grounding import ground

SET = Path(__file__).resolve().parent / "grounding_natural.json"
KINDS = ("paraphrase", "reversal", "negation", "number")
GOALS = {  # (language or "all", kind or "reversal+negation") → (">=" or "<=", goal)
    ("all", "paraphrase"): ("<=", 0.10),
    ("en", "reversal"): (">=", 0.70),
    ("en", "negation"): (">=", 0.70),
    ("all", "number"): (">=", 0.80),
    ("zh", "reversal+negation"): (">=", 0.70),
}


def half_of(ref_id: str) -> str:
    return "tune" if hashlib.sha1(ref_id.encode()).digest()[0] % 2 == 0 else "held-out"


def _cited(answer: str, lang: str) -> str:
    """The answer with its citation marker before its final punctuation."""
    end = answer[-1] if answer[-1] in ".。" else ""
    body = answer[: len(answer) - len(end)]
    return f"{body} #ref:1{end or '.'}" if lang == "en" else f"{body}#ref:1{end or '。'}"


def run(half: str, embed: Any = None) -> tuple[dict[tuple[str, str], list[str]], float, int]:
    """Statuses by (language, kind) of the cases of ``half``; seconds; sentences."""
    data = json.loads(SET.read_text(encoding="utf-8"))
    out: dict[tuple[str, str], list[str]] = defaultdict(list)
    seconds, sentences = 0.0, 0
    for ref in data["references"]:
        if half != "both" and half_of(ref["id"]) != half:
            continue
        refs = [{"citation_id": "1", "title": "", "content": ref["text"]}]
        for case in ref["cases"]:
            answer = _cited(case["answer"], ref["lang"])
            start = time.perf_counter()
            grounded = ground(answer, refs, embed=embed)
            seconds += time.perf_counter() - start
            sentences += len(grounded)
            status = "unsupported" if any(g.status == "unsupported" for g in grounded) \
                else grounded[0].status if grounded else "none"
            out[(ref["lang"], case["kind"])].append(status)
    return out, seconds, sentences


def _share(statuses: list[str], status: str = "unsupported") -> float:
    return sum(s == status for s in statuses) / len(statuses) if statuses else 0.0


def _pooled(results: dict[tuple[str, str], list[str]], lang: str, kind: str) -> list[str]:
    langs = ("en", "zh") if lang == "all" else (lang,)
    kinds = kind.split("+")
    return [s for la in langs for k in kinds for s in results.get((la, k), [])]


def table(half: str, embed: Any = None) -> None:
    results, seconds, sentences = run(half, embed)
    print(f"\nnatural wording ({SET.name}), {half} half"
          f"{', with the embedding model' if embed else ''}: share flagged (unsupported); "
          f"{1000 * seconds / max(1, sentences):.2f} ms / sentence")
    print("| kind | English n | flagged | unchecked | Chinese n | flagged | unchecked |\n"
          "|---|---:|---:|---:|---:|---:|---:|")
    for kind in KINDS:
        en, zh = results.get(("en", kind), []), results.get(("zh", kind), [])
        print(f"| {kind} | {len(en)} | {_share(en):.2f} | {_share(en, 'unchecked'):.2f} | "
              f"{len(zh)} | {_share(zh):.2f} | {_share(zh, 'unchecked'):.2f} |")
    print("| goal | n | flagged | goal | met |\n|---|---:|---:|---|---|")
    for (lang, kind), (op, goal) in GOALS.items():
        pooled = _pooled(results, lang, kind)
        share = _share(pooled)
        met = share <= goal if op == "<=" else share >= goal
        print(f"| {kind} ({'both' if lang == 'all' else lang}) | {len(pooled)} | "
              f"{share:.2f} | {op} {goal:.2f} | {'yes' if met else 'no'} |")


def main(halves: tuple[str, ...] = ("tune", "held-out"), embed: Any = None) -> None:
    ground("Warm up. 热身。", [{"citation_id": "1", "title": "", "content": "热身。"}])
    for half in halves:
        table(half)
        if embed is not None:
            table(half, embed)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--half", choices=("tune", "held-out", "both"), default="tune")
    parser.add_argument("--embed", action="store_true",
                        help="also with the embedding model (as ground(embed=...))")
    args = parser.parse_args()
    model = None
    if args.embed:
        from bench._grounding_runs import embedder

        model = embedder(Path(__file__).resolve().parent.parent)
    main(("tune", "held-out") if args.half == "both" else (args.half,), model)
