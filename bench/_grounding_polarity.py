"""The polarity part of bench/bench_grounding.py (issue 37): sentences that say the
opposite of their reference, and sentences that say the same in other words.

Built at bench time from the same requests as the main sets (their references, their
cited document), so no SciFact or zh-rgb text is stored: for the cited passage D of each
request of ``beir-scifact`` and ``zh-rgb``, the answer holds, each citing D:

- ``negated`` — a sentence of D with its polarity turned: a "not" / "no" / 不 / 没有 / 未
  taken out, or put in after its first auxiliary (is, was, did, can…) or before its
  first verb (不, or 没有 for a verb with 了);
- ``swapped`` — a sentence of D with one direction word turned to its opposite
  (increased → decreased, higher → lower, before → after, 增加 → 减少, 升高 → 降低…);
  the list is this bench's own, written apart from the grounding's vocabulary;
- ``paraphrased`` — a sentence of D reworded without changing what it says: common
  words swapped and a lead-in added as the main bench rewords, "did not" as "didn't"
  (English; parentheses kept: the main bench's rewording drops them, which turned
  "Ca(2+)-activated" into a new name "Ca-activated" on the tune half); in Chinese the
  main bench's rewording (a number written as Chinese also writes it);
- ``copied-polar`` — a sentence of D copied as it is, chosen among those that hold a
  negation or a direction word: what the check must leave alone.

Requests fall in the main sets' halves (by a hash of the document or question id): the
check was tuned on ``tune`` and is reported on ``report``, the held-out half.
"""

from __future__ import annotations

import random
import re
from typing import Any

KINDS = ("negated", "swapped", "paraphrased", "copied-polar")
OPPOSITE = ("negated", "swapped")

_AUX = re.compile(r"\b(is|are|was|were|has|have|had|can|could|may|might|will|would|should|"
                  r"does|did|do)\b(?! not\b)")
_SWAP_EN = {
    "increased": "decreased", "decreased": "increased", "increase": "decrease",
    "decrease": "increase", "increases": "decreases", "decreases": "increases",
    "increasing": "decreasing", "decreasing": "increasing", "higher": "lower",
    "lower": "higher", "more": "less", "less": "more", "greater": "smaller",
    "larger": "smaller", "smaller": "larger", "reduced": "increased", "reduces": "increases",
    "reduce": "increase", "elevated": "reduced", "before": "after", "after": "before",
    "upregulated": "downregulated", "downregulated": "upregulated", "enhanced": "reduced",
    "inhibits": "promotes", "inhibited": "promoted", "promotes": "inhibits",
    "promoted": "inhibited", "improved": "worsened", "positive": "negative",
    "negative": "positive", "positively": "negatively", "negatively": "positively",
    "gain": "loss", "loss": "gain", "longer": "shorter", "shorter": "longer",
    "earlier": "later", "later": "earlier", "above": "below", "below": "above",
    "activates": "inhibits", "activation": "inhibition", "inhibition": "activation",
    "suppressed": "enhanced", "suppresses": "enhances", "stimulates": "inhibits",
    "high": "low", "low": "high", "increase in": "decrease in", "rise": "fall",
    "protective": "harmful", "fewer": "more", "maximal": "minimal", "induced": "suppressed",
}
_SWAP_ZH = {
    "增加": "减少", "减少": "增加", "升高": "降低", "降低": "升高", "上升": "下降", "下降": "上升",
    "提高": "降低", "增长": "下降", "高于": "低于", "低于": "高于", "之前": "之后", "之后": "之前",
    "以前": "以后", "以后": "以前", "多于": "少于", "扩大": "缩小", "缩小": "扩大", "上涨": "下跌",
    "下跌": "上涨", "增强": "减弱", "加快": "放缓", "提前": "推迟", "推迟": "提前", "最高": "最低",
    "最低": "最高", "领先": "落后", "落后": "领先", "增多": "减少", "超过": "低于", "前": "后",
    "后": "前", "高": "低", "低": "高", "多": "少", "大幅": "小幅",
}
_NEGATION_EN = re.compile(r"\b(not|no|never|without|none)\b|n't\b", re.IGNORECASE)
_NEGATION_ZH = ("没有", "不", "未", "无")


def _negate_en(s: str) -> str | None:
    if " not " in s:
        return s.replace(" not ", " ", 1)
    if re.search(r"\bno\b", s):
        return re.sub(r"\bno\b", "a", s, count=1)
    m = _AUX.search(s)
    if m is None:
        return None
    return s[:m.end()] + " not" + s[m.end():]


def _negate_zh(s: str, posseg: Any) -> str | None:
    words = [(p.word, p.flag) for p in posseg.lcut(s)]
    for i, (w, _) in enumerate(words):
        if w in _NEGATION_ZH:
            return "".join(x for j, (x, _) in enumerate(words) if j != i)
    for i, (w, flag) in enumerate(words):
        if flag.startswith("v") and i > 0:
            after = words[i + 1][0] if i + 1 < len(words) else ""
            if after == "了":
                return "".join(x for x, _ in words[:i]) + "没有" + w + \
                    "".join(x for x, _ in words[i + 2:])
            return "".join(x for x, _ in words[:i]) + "不" + "".join(x for x, _ in words[i:])
    return None


def _swap_en(s: str, rng: random.Random) -> str | None:
    found = [m for m in re.finditer(r"\b[a-z]+(?: in)?\b", s)
             if m.group(0) in _SWAP_EN]
    if not found:
        return None
    m = rng.choice(found)
    return s[:m.start()] + _SWAP_EN[m.group(0)] + s[m.end():]


def _swap_zh(s: str, rng: random.Random, jieba: Any) -> str | None:
    words = jieba.lcut(s)
    found = [i for i, w in enumerate(words) if w in _SWAP_ZH]
    if not found:
        return None
    i = rng.choice(found)
    return "".join(words[:i]) + _SWAP_ZH[words[i]] + "".join(words[i + 1:])


def _polar(s: str, zh: bool, jieba: Any) -> bool:
    if zh:
        return any(w in _SWAP_ZH or w in _NEGATION_ZH for w in jieba.lcut(s))
    return bool(_NEGATION_EN.search(s)) or any(w in _SWAP_EN for w in s.lower().split())


def _contracted(s: str) -> str:
    for a, b in ((" did not ", " didn't "), (" does not ", " doesn't "),
                 (" is not ", " isn't "), (" was not ", " wasn't "), (" were not ", " weren't "),
                 (" are not ", " aren't "), (" could not ", " couldn't ")):
        s = s.replace(a, b)
    return s


def _paraphrase_en(s: str, rng: random.Random, tools: Any) -> str:
    words = [tools.swaps.get(w.lower(), w) if rng.random() < 0.8 else w for w in s.split()]
    s = _contracted(" ".join(words))
    return rng.choice(tools.leads) + s[0].lower() + s[1:] if rng.random() < 0.5 else s


def build(halves: dict[str, list[Any]], tools: Any, seed: int) -> dict[str, list[Any]]:
    """Polarity cases for the requests of ``halves`` from beir-scifact and zh-rgb."""
    import jieba
    import jieba.posseg

    rng = random.Random(seed + 37)
    out: dict[str, list[Any]] = {"tune": [], "report": []}
    for half, cases in halves.items():
        for case in cases:
            if case.dataset not in ("beir-scifact", "zh-rgb"):
                continue
            made = _case(case, tools, rng, jieba, jieba.posseg)
            if made is not None:
                out[half].append(made)
    return out


def _case(case: Any, tools: Any, rng: random.Random, jieba: Any, posseg: Any) -> Any:
    zh = case.dataset == "zh-rgb"
    me = next(i.cite for i in case.items if i.kind == "copied")
    source = next(r for r in case.references if r["citation_id"] == me)
    own = [s for s in tools.sentences(source["content"], zh) if s[-1] not in "？?"]
    rng.shuffle(own)
    if len(own) < 3:
        return None
    new = tools.Case(case.doc, case.references, case.dataset)
    used: set[str] = set()

    def add(kind: str, make: Any, pool: list[str], copy: bool = False) -> None:
        for s in pool:
            if s in used:
                continue
            changed = make(s)
            if changed and (copy or changed != s):
                used.add(s)
                new.items.append(tools.Item(kind, changed, me, None))
                return

    add("negated", (lambda s: _negate_zh(s, posseg)) if zh else _negate_en, own)
    add("swapped", (lambda s: _swap_zh(s, rng, jieba)) if zh else
        (lambda s: _swap_en(s, rng)), own)
    add("copied-polar", lambda s: s if _polar(s, zh, jieba) else None, own, copy=True)
    if zh:
        add("paraphrased", lambda s: tools.reword_zh(s, rng), own)
    else:
        add("paraphrased", lambda s: _paraphrase_en(s, rng, tools), own)
    if not new.items:
        return None
    tools.join(new, zh, rng)
    return new


def metrics(scored: list[Any]) -> dict[str, float]:
    """Per kind: n, share flagged (unsupported), share not supported (any other status)."""
    m: dict[str, float] = {}
    for kind in KINDS:
        of = [s for s in scored if s.kind == kind]
        m[f"n:{kind}"] = len(of)
        m[f"flagged:{kind}"] = sum(s.status == "unsupported" for s in of) / max(1, len(of))
        m[f"unchecked:{kind}"] = sum(s.status == "unchecked" for s in of) / max(1, len(of))
    return m


def main(halves: dict[str, list[Any]], bench: Any, seed: int, ref: str | None) -> None:
    """Build the set on the requests of ``halves`` and print its table; ``bench`` is
    bench/bench_grounding.py (its helpers, its runs)."""
    import types

    from bench._grounding_zh import _reword as reword_zh

    tools = types.SimpleNamespace(
        Item=bench.Item, Case=bench.Case, sentences=bench._sentences, swaps=bench._SWAPS,
        leads=bench._LEADS,
        join=bench._join, reword_zh=lambda s, rng: reword_zh(s, rng, bench.numbers))
    cases = build(halves, tools, seed)
    report(cases, lambda of: bench.run(of, None, bench.Thresholds())[0],
           lambda r, of: bench.baseline(r, of)[0], ref)
    if ref:
        _cost(bench, ref, list(halves["report"]) + cases["report"])


def _cost(bench: Any, ref: str, cases: list[Any], rounds: int = 3) -> None:
    """Milliseconds per sentence of git ``ref``'s grounding and of this commit's (HEAD),
    each in a fresh subprocess on the same answers (the report half and the held-out
    polarity set), alternately; the fastest round of each (the machine is shared), by
    the wall clock and by the process's CPU time (all its threads)."""
    from bench._grounding_runs import cost_at

    times: dict[str, list[tuple[float, float]]] = {ref: [], "HEAD": []}
    for _ in range(rounds):
        for which in times:
            times[which].append(cost_at(bench.ROOT, which, cases))
    for i, clock in enumerate(("wall", "CPU")):
        base = min(t[i] for t in times[ref])
        now = min(t[i] for t in times["HEAD"])
        print(f"\ncost per sentence, {clock} ({len(cases)} answers, fastest of {rounds} "
              f"alternate runs): {ref} {base:.2f} ms, HEAD {now:.2f} ms, × {now / base:.2f} "
              "(all rounds: " + ", ".join(f"{k} " + "/".join(f"{v[i]:.2f}" for v in vs)
                                          for k, vs in times.items()) + ")")


def report(cases: dict[str, list[Any]], run: Any, baseline: Any, ref: str | None) -> None:
    """The table of the polarity set: per kind and language, the share flagged by the
    stream's decision (and by the grounding of git ``ref``), tune and held-out halves."""
    print("\npolarity (issue 37): share of sentences flagged unsupported, per kind "
          "(unchecked in brackets when any); goals on the held-out half: negated ≥ 0.80, "
          "swapped ≥ 0.70, copied-polar and paraphrased ≤ 0.05")
    head = "| half | language | kind | n |" + (f" {ref} |" if ref else "") + " now |"
    print(head + "\n|" + "---|" * (head.count("|") - 1))
    for half in ("tune", "report"):
        for language, dataset in (("English", "beir-scifact"), ("Chinese", "zh-rgb")):
            of = [c for c in cases[half] if c.dataset == dataset]
            now = metrics(run(of))
            before = metrics(baseline(ref, of)) if ref else None
            for kind in KINDS:
                cells = [f"{before[f'flagged:{kind}']:.3f}"] if before else []
                unchecked = now[f"unchecked:{kind}"]
                cells.append(f"{now[f'flagged:{kind}']:.3f}"
                             + (f" ({unchecked:.3f})" if unchecked else ""))
                label = "held-out" if half == "report" else "tune"
                print(f"| {label} | {language} | {kind} | {int(now[f'n:{kind}'])} | "
                      + " | ".join(cells) + " |")
