"""Benchmark of grounding: are invented numbers, dates and names caught, and supported
sentences left alone?

Run: ``.venv/bin/python -m bench.bench_grounding [--docs 120] [--questions 60] [--embed]
[--baseline REF]`` (``make bench-grounding``).

An English labelled set is built from ``../shared/data/beir-scifact`` and ``beir-arguana``
and a Chinese one from ``../shared/data/zh-rgb``'s questions (bench/_grounding_zh.py). For a
sampled document D, a request's references are D and its three nearest documents (TF-IDF
over the corpus, so on a nearby topic), shuffled, with citation ids 1-4. The answer is
made of sentences of these kinds, each labelled:

- supported: ``copied`` (a sentence of D, citing D), ``reworded`` (the same lightly
  reworded: parentheses dropped, common words swapped, a lead-in added, a leading clause
  dropped — no language model), ``unmarked`` (a sentence of D or of a neighbour in the
  references, with no marker: the grounding should add its citation);
- unsupported: ``number`` / ``date`` / ``name`` (a copied sentence with one number, year
  or name changed to one no reference has), ``nearby`` (a sentence of the fourth-nearest
  document, which is not among the references, citing D).

Documents are split in two halves by a hash of their id: thresholds are chosen on the
``tune`` half (the grid is printed) and the table reports the ``report`` half, English
and Chinese apart. ``--baseline REF`` grounds the same report half with the
``agent_search`` package of git ``REF`` (in a subprocess) for a before/after table.

Goals (issue 25): unsupported recall ≥ 0.85 with ≤ 5% of supported sentences flagged;
missing citations added ≥ 0.80; ≤ 10 ms per sentence. Then the polarity set (issue 37:
negated, direction-swapped, paraphrased sentences; bench/_grounding_polarity.py), the
hand-written natural set by half (bench/_grounding_natural.py, also with the embedding
model under ``--embed``) and the cost of one answer (bench/_grounding_cost.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import sys
import time
import types
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

from agent_search.grounding import GroundedSentence, Thresholds, ground  # noqa: E402
from agent_search.grounding._claims import content_words, numbers  # noqa: E402
from agent_search.grounding._references import prepare  # noqa: E402
from agent_search.language import CJK_CHAR  # noqa: E402
from bench._grounding_runs import Memo, embedder, segmentation_ms  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
SUPPORTED = ("copied", "reworded", "unmarked")
UNSUPPORTED = ("number", "date", "name", "nearby")
_SWAPS = {
    "showed": "demonstrated", "shows": "demonstrates", "increased": "raised",
    "decreased": "lowered", "reduced": "lowered", "patients": "people", "significant":
    "notable", "significantly": "notably", "associated": "linked", "however": "but",
    "used": "employed", "using": "employing", "found": "observed", "higher": "greater",
    "lower": "smaller", "important": "key", "results": "findings", "study": "work",
    "because": "since", "should": "ought to", "many": "numerous", "people": "individuals",
    "large": "big", "small": "little", "help": "aid", "government": "state",
}
_LEADS = ("The study reports that ", "According to the reference, ", "It was found that ",
          "Notably, ")


@dataclass
class Item:
    kind: str
    text: str
    cite: str | None        # the citation id written after the sentence
    expect: str | None      # the citation id that should support it (unmarked)
    start: int = 0
    end: int = 0
    also: tuple[str, ...] = ()  # other references that hold it word for word (zh-rgb copies)


@dataclass
class Case:
    doc: str
    references: list[dict[str, str]]
    dataset: str = ""
    items: list[Item] = field(default_factory=list)
    answer: str = ""


def _load(name: str) -> dict[str, dict[str, str]]:
    docs: dict[str, dict[str, str]] = {}
    with open(DATA / name / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            docs[row["_id"]] = {"title": row.get("title") or "", "text": row["text"]}
    return docs


class _Tfidf:
    """Nearest documents by TF-IDF cosine over content words (the bench's own; the
    grounding never sees it)."""

    def __init__(self, docs: dict[str, dict[str, str]]) -> None:
        self.vectors: dict[str, dict[str, float]] = {}
        df: Counter[str] = Counter()
        tfs: dict[str, Counter[str]] = {}
        for did, d in docs.items():
            tf = Counter(content_words(d["title"] + " " + d["text"]))
            tfs[did] = tf
            df.update(tf.keys())
        n = len(docs)
        self.postings: dict[str, list[str]] = defaultdict(list)
        for did, tf in tfs.items():
            vec = {w: (1 + math.log(c)) * math.log(n / df[w]) for w, c in tf.items()}
            norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
            self.vectors[did] = {w: v / norm for w, v in vec.items()}
            for w in vec:
                self.postings[w].append(did)
        self.df, self.n = df, n

    def nearest_to(self, text: str, k: int) -> list[str]:
        """The documents nearest to any text (a question)."""
        tf = Counter(w for w in content_words(text) if w in self.df)
        vec = {w: (1 + math.log(c)) * math.log(self.n / self.df[w]) for w, c in tf.items()}
        return self._nearest(vec, None, k)

    def nearest(self, did: str, k: int) -> list[str]:
        return self._nearest(self.vectors[did], did, k)

    def _nearest(self, vec: dict[str, float], did: str | None, k: int) -> list[str]:
        top_terms = sorted(vec, key=vec.__getitem__, reverse=True)[:25]
        scores: Counter[str] = Counter()
        for w in top_terms:
            if len(self.postings[w]) > 500:
                continue
            for other in self.postings[w]:
                if other != did:
                    scores[other] += vec[w] * self.vectors[other][w]
        return [d for d, _ in scores.most_common(k)]


def _sentences(text: str, zh: bool = False) -> list[str]:
    from agent_search.grounding._segment import _segmenter

    out = []
    for s in _segmenter("zh" if zh else "en").segment(text):
        s = " ".join(s.split())
        if zh:
            if 12 <= len(s) <= 90 and s[-1] in "。！？" and CJK_CHAR.search(s[:4]) is not None:
                out.append(s)
        elif 8 <= len(s.split()) <= 45 and s[-1] in ".!?" and s[0].isupper():
            out.append(s)
    return out


def _reword(sentence: str, rng: random.Random) -> str:
    s = re.sub(r"\s*\([^()]*\)", "", sentence)
    words = s.split()
    swapped = [(_SWAPS.get(w.lower(), w) if rng.random() < 0.8 else w) for w in words]
    s = " ".join(swapped)
    head, sep, rest = s.partition(", ")
    if sep and len(rest.split()) >= 8 and len(head.split()) <= 6 and rng.random() < 0.5:
        s = rest[0].upper() + rest[1:]
    if rng.random() < 0.5:
        s = rng.choice(_LEADS) + s[0].lower() + s[1:]
    return s


def _changed_number(sentence: str, avoid: frozenset[float], rng: random.Random,
                    years: bool) -> str | None:
    found = [n for n in numbers(sentence, words=False) if n.values[0] > 0]
    picks = [n for n in found if (1900 <= n.values[0] <= 2030 and n.decimals == 0) == years]
    if not picks:
        return None
    n = rng.choice(picks)
    value = n.values[0]
    for _ in range(20):
        if years:
            new = value + rng.choice((-3, -2, -1, 1, 2, 3))
        else:
            new = value * rng.choice((0.5, 0.6, 1.5, 2.0, 3.0)) + rng.choice((0, 1))
            new = round(new, n.decimals)
        if new != value and new not in avoid and round(new) not in avoid:
            break
    else:
        return None
    text = f"{new:.{n.decimals}f}" if n.decimals else str(int(new))
    raw = re.match(r"[\d.,]+", n.text)
    assert raw is not None
    return sentence.replace(n.text, n.text.replace(raw.group(0), text, 1), 1)


def _zh_names(text: str) -> list[str]:
    from agent_search.grounding._claims import _posseg

    return [p.word for p in _posseg().lcut(text)
            if len(p.word) >= 2 and p.flag in ("nr", "ns", "nt")]


def _changed_name(sentence: str, names: list[str], ref_text: str,
                  rng: random.Random) -> str | None:
    if CJK_CHAR.search(sentence):
        found = _zh_names(sentence)
        if not found:
            return None
        old = rng.choice(found)
        for _ in range(20):
            name = rng.choice(names)
            if name not in ref_text:
                return sentence.replace(old, name)
        return None
    words = sentence.split()
    picks = [i for i, w in enumerate(words) if i > 0 and re.fullmatch(r"[A-Z][a-z]{3,}", w)]
    if not picks:
        return None
    i = rng.choice(picks)
    for _ in range(20):
        name = rng.choice(names)
        if name.lower() not in ref_text.lower():
            words[i] = name
            return " ".join(words)
    return None


def build(dataset: str, n_docs: int, seed: int, pool: int) -> dict[str, list[Case]]:
    rng = random.Random(seed)
    docs = _load(dataset)
    keep = sorted(docs)
    rng.shuffle(keep)
    docs = {d: docs[d] for d in sorted(keep[:pool])}
    index = _Tfidf(docs)
    zh = False  # the Chinese set is built from questions: bench/_grounding_zh.py
    names = sorted({w for d in list(docs.values())[:3000]
                    for w in re.findall(r"(?<=[a-z,] )[A-Z][a-z]{3,}\b", d["text"])})
    ids = [d for d in docs if len(_sentences(docs[d]["text"], zh)) >= 4]
    rng.shuffle(ids)
    halves: dict[str, list[Case]] = {"tune": [], "report": []}
    for did in ids:
        half = "tune" if int(hashlib.sha1(did.encode()).hexdigest(), 16) % 2 else "report"
        if len(halves[half]) >= n_docs:
            if all(len(h) >= n_docs for h in halves.values()):
                break
            continue
        near = index.nearest(did, 6)
        if len(near) < 5:
            continue
        in_refs = [did, *near[:3]]
        outside = [d for d in near[3:] if _sentences(docs[d]["text"], zh)]
        order = in_refs[:]
        rng.shuffle(order)
        cid = {d: str(i + 1) for i, d in enumerate(order)}
        refs = [{"citation_id": cid[d], "title": docs[d]["title"], "content": docs[d]["text"]}
                for d in order]
        ref_text = " ".join(r["title"] + " " + r["content"] for r in refs)
        avoid = frozenset().union(*(prepare(r["citation_id"], r["title"], r["content"]).numbers
                                    for r in refs))
        own = _sentences(docs[did]["text"], zh)
        rng.shuffle(own)
        case = Case(did, refs, dataset)
        me = cid[did]
        case.items.append(Item("copied", own[0], me, None))
        case.items.append(Item("reworded", _reword(own[1], rng), me, None))
        case.items.append(Item("unmarked", own[2], None, me))
        neighbour = rng.choice(near[:3])
        other = _sentences(docs[neighbour]["text"], zh)
        if other:
            case.items.append(Item("unmarked", rng.choice(other), None, cid[neighbour]))
        for kind, years in (("number", False), ("date", True)):
            for s in own[3:]:
                changed = _changed_number(s, avoid, rng, years)
                if changed:
                    case.items.append(Item(kind, changed, me, None))
                    break
        for s in own[3:]:
            changed = _changed_name(s, names, ref_text, rng)
            if changed:
                case.items.append(Item("name", changed, me, None))
                break
        if outside:
            far = _sentences(docs[outside[0]]["text"], zh)
            if far:
                case.items.append(Item("nearby", rng.choice(far), me, None))
        _join(case, zh, rng)
        halves[half].append(case)
    return halves


def _join(case: Case, zh: bool, rng: random.Random) -> None:
    """The case's items shuffled and written as one answer, markers before the full stop."""
    rng.shuffle(case.items)
    parts: list[str] = []
    pos = 0
    for item in case.items:
        text = item.text[:-1] + f" #ref:{item.cite}" + item.text[-1] if item.cite \
            else item.text
        item.start, item.end = pos, pos + len(text)
        parts.append(text)
        pos += len(text) + (0 if zh else 1)
    case.answer = ("" if zh else " ").join(parts)


def build_chinese(n_questions: int, seed: int) -> dict[str, list[Case]]:
    from bench._grounding_zh import build as build_zh

    tools = types.SimpleNamespace(
        Tfidf=_Tfidf, zh_names=_zh_names, sentences=_sentences, Item=Item, Case=Case,
        numbers=numbers, prepare=prepare, changed_name=_changed_name, join=_join)
    out: dict[str, list[Case]] = build_zh(DATA / "zh-rgb", n_questions, seed, tools)
    return out


@dataclass
class Scored:
    kind: str
    status: str
    support: list[str]
    expect: str | None
    aligned: bool
    also: tuple[str, ...] = ()


def run(cases: list[Case], embed: Any, thresholds: Thresholds) -> tuple[list[Scored], float, int]:
    out: list[Scored] = []
    seconds, sentences = 0.0, 0
    for case in cases:
        t0 = time.perf_counter()
        grounded = ground(case.answer, case.references, embed=embed, thresholds=thresholds)
        seconds += time.perf_counter() - t0
        sentences += len(grounded)
        out.extend(_score(case, grounded))
    return out, seconds, sentences


def _score(case: Case, grounded: list[GroundedSentence]) -> list[Scored]:
    """Each labelled sentence against the grounded sentence that overlaps it most."""
    out: list[Scored] = []
    for item in case.items:
        best: GroundedSentence | None = None
        overlap = 0
        for g in grounded:
            o = min(g.end, item.end) - max(g.start, item.start)
            if o > overlap:
                best, overlap = g, o
        assert best is not None
        aligned = best.start == item.start and best.end == item.end
        out.append(Scored(item.kind, best.status, best.support, item.expect, aligned,
                          item.also))
    return out


def metrics(scored: list[Scored]) -> dict[str, float]:
    sup = [s for s in scored if s.kind in SUPPORTED]
    uns = [s for s in scored if s.kind in UNSUPPORTED]
    unmarked = [s for s in scored if s.kind == "unmarked"]
    m: dict[str, float] = {
        "unsupported_recall": sum(s.status == "unsupported" for s in uns) / max(1, len(uns)),
        "supported_flagged": sum(s.status == "unsupported" for s in sup) / max(1, len(sup)),
        "citation_added": sum(s.status == "supported"
                              and (s.expect in s.support or bool(set(s.also) & set(s.support)))
                              for s in unmarked) / max(1, len(unmarked)),
        "aligned": sum(s.aligned for s in scored) / max(1, len(scored)),
    }
    for kind in (*SUPPORTED, *UNSUPPORTED):
        of = [s for s in scored if s.kind == kind]
        bad = "unsupported" if kind in SUPPORTED else "supported"
        m[f"n:{kind}"] = len(of)
        m[f"ok:{kind}"] = sum(s.status != bad and (kind in SUPPORTED or s.status != "no_claim")
                              for s in of) / max(1, len(of))
    return m


LANGUAGES = {"English": ("beir-scifact", "beir-arguana"), "Chinese": ("zh-rgb",)}


def baseline(ref: str, cases: list[Case]) -> tuple[list[Scored], float]:
    """The stream's decision of the ``agent_search`` package of git ``ref`` on ``cases``,
    and its milliseconds per sentence (measured in the same run)."""
    from bench._grounding_runs import grounded_at

    out: list[Scored] = []
    grounded, ms = grounded_at(ROOT, ref, cases)
    for case, sentences in zip(cases, grounded, strict=True):
        out.extend(_score(case, [GroundedSentence("", a, b, status, support=support)
                                 for a, b, status, support in sentences]))
    return out, ms


def _table(rows: list[tuple[str, dict[str, float], float | None]], base_ms: float) -> None:
    head = ["", "unsup. recall", "sup. flagged", "cite added", "aligned", "ms/sentence",
            "× segmentation"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for label, m, ms in rows:
        times = f"{ms:.2f} | {ms / base_ms:.1f}" if ms is not None else "– | –"
        print(f"| {label} | {m['unsupported_recall']:.3f} | {m['supported_flagged']:.3f} | "
              f"{m['citation_added']:.3f} | {m['aligned']:.3f} | {times} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=120, help="documents per half and dataset")
    parser.add_argument("--questions", type=int, default=60,
                        help="zh-rgb questions per half (the Chinese set)")
    parser.add_argument("--embed", action="store_true",
                        help="also tune and time the decision with the embedding model")
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument("--pool", type=int, default=3000,
                        help="documents of each corpus the neighbours are drawn from")
    parser.add_argument("--baseline", metavar="REF",
                        help="git ref whose grounding is measured on the same report half")
    parser.add_argument("--ground-only", metavar="CASES", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.ground_only:
        from bench._grounding_runs import ground_only

        ground_only(args.ground_only)
        return
    halves: dict[str, list[Case]] = {"tune": [], "report": []}
    for dataset in LANGUAGES["English"]:
        for half, cases in build(dataset, args.docs, args.seed, args.pool).items():
            halves[half].extend(cases)
    for half, cases in build_chinese(args.questions, args.seed).items():
        halves[half].extend(cases)
    embed = embedder(ROOT) if args.embed else None
    if embed is not None:
        embed(["warm up"])
    ground("Warm up the segmenter. And jieba: 北京三十五。", [])
    memo = Memo(embed) if embed is not None else None
    grid = []
    for coverage in (0.4, 0.5, 0.6, 0.7, 0.8):
        for similarity in ((2.0, 0.7, 0.75, 0.8) if embed else (2.0,)):
            t = Thresholds(coverage=coverage, similarity=similarity)
            scored, _, _ = run(halves["tune"], memo if similarity <= 1 else None, t)
            grid.append((t, metrics(scored)))
    print("tune half (both languages): thresholds → unsupported recall / supported flagged /"
          " citation added (similarity 2.00: no embedding)")
    for t, m in grid:
        print(f"  coverage {t.coverage:.2f} similarity {t.similarity:.2f}: "
              f"{m['unsupported_recall']:.3f} / {m['supported_flagged']:.3f} / "
              f"{m['citation_added']:.3f}")
    fit = [(t, m) for t, m in grid if m["supported_flagged"] <= 0.05]
    # a missed invented claim costs more than a flagged supported sentence (twice, here)
    best = max(fit or grid, key=lambda tm: 2 * tm[1]["unsupported_recall"]
               - tm[1]["supported_flagged"])[0]
    print(f"chosen on the tune half: {best}")
    report = halves["report"]
    stream: dict[str, list[Scored]] = {}
    for language, datasets in LANGUAGES.items():
        cases = [c for c in report if c.dataset in datasets]
        base_ms = segmentation_ms(cases)
        rows: list[tuple[str, dict[str, float], float | None]] = []
        if args.baseline:
            scored_at, ms_at = baseline(args.baseline, cases)
            rows.append((f"baseline {args.baseline} (the stream's decision)",
                         metrics(scored_at), ms_at))
        for label, t, e in (("the stream's decision (lexical, defaults)", Thresholds(), None),
                            ("tuned on the other half", best,
                             embed if best.similarity <= 1 else None),
                            *((("with embeddings (defaults)", Thresholds(), embed),)
                              if embed else ())):
            scored, seconds, sentences = run(cases, e, t)
            if label.startswith("the stream"):
                stream[language] = scored
            rows.append((label, metrics(scored), 1000 * seconds / max(1, sentences)))
        print(f"\n{language}, report half: {len(cases)} answers, "
              f"{sum(len(c.items) for c in cases)} labelled sentences "
              f"({', '.join(datasets)}); baseline of the time: segmentation alone "
              f"{base_ms:.2f} ms/sentence")
        _table(rows, base_ms)
    print("\nper dataset (the stream's decision)")
    print("| dataset | answers | unsup. recall | sup. flagged | cite added |\n"
          "|---|---|---|---|---|")
    for dataset in dict.fromkeys(c.dataset for c in report):
        of = [c for c in report if c.dataset == dataset]
        m = metrics(run(of, None, Thresholds())[0])
        print(f"| {dataset} | {len(of)} | {m['unsupported_recall']:.3f} | "
              f"{m['supported_flagged']:.3f} | {m['citation_added']:.3f} |")
    _polarity(halves, args)
    from bench import _grounding_cost, _grounding_natural

    _grounding_natural.main(("tune", "held-out"), embed)
    _grounding_cost.main()
    print("\nper kind (the stream's decision): share judged right (supported kinds: not "
          "flagged; unsupported kinds: flagged)")
    en, zh = metrics(stream["English"]), metrics(stream["Chinese"])
    print("| kind | English n | right | Chinese n | right |\n|---|---|---|---|---|")
    for kind in (*SUPPORTED, *UNSUPPORTED):
        print(f"| {kind} | {int(en['n:' + kind])} | {en['ok:' + kind]:.3f} | "
              f"{int(zh['n:' + kind])} | {zh['ok:' + kind]:.3f} |")


def _polarity(halves: dict[str, list[Case]], args: argparse.Namespace) -> None:
    from bench import _grounding_polarity

    _grounding_polarity.main(halves, sys.modules[__name__], args.seed, args.baseline)


if __name__ == "__main__":
    main()
