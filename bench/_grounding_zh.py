"""The Chinese half of bench/bench_grounding.py: answers to zh-rgb's questions.

A request is what a Chinese RAG answer meets: one question of ``../shared/data/zh-rgb``,
its judged passages (up to three, those that hold its answer) and one passage retrieved
for it that is not judged for it (the nearest by TF-IDF to the question), shuffled, with
citation ids 1-4. The answer mixes sentences of these kinds, each labelled:

- supported: ``copied`` (a sentence of a judged passage, citing it), ``reworded`` (the
  same reworded without a model: a lead-in, common words swapped, parentheses dropped,
  and one number written as Chinese writes it too: 三十五 for 35, 二〇二二 for 2022, ４５
  in full-width digits), ``unmarked`` (a sentence of any reference, no marker; the
  citation added may be any reference that holds it word for word: news passages copy
  each other);
- unsupported: ``number`` / ``date`` / ``name`` (a judged sentence with one number,
  year or name changed to one no reference has; the number half the time in Chinese
  numerals), ``nearby`` (a sentence of a passage judged for another question on a
  close topic, citing a judged passage). A nearby sentence found word for word in a
  reference is not used (zh-rgb holds copies of one news item).

Questions are split in two halves by a hash of their id, as the English documents are.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

_ZH_SWAPS = {"表示": "称", "目前": "当前", "已经": "已", "进行": "开展", "但是": "但",
             "因为": "由于", "同时": "此外", "非常": "十分", "宣布": "公布", "举行": "举办",
             "日前": "近日", "成为": "变成"}
_LEADS = ("据报道，", "资料显示，", "报道称，", "")
_DIGITS = "零一二三四五六七八九"


def chinese_numeral(value: int, year: bool) -> str:
    """35 → 三十五, 4300 → 四千三百, 2022 (a year) → 二〇二二; below 10^8."""
    if year:
        return "".join("〇" if c == "0" else _DIGITS[int(c)] for c in str(value))
    if value == 0:
        return "零"

    def section(n: int) -> str:
        out, zero = "", False
        for unit, name in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
            d, n = divmod(n, unit)
            if d:
                out += ("零" if zero and out else "") + _DIGITS[d] + name
                zero = False
            else:
                zero = True
        return out

    high, low = divmod(value, 10_000)
    text = (section(high) + "万" + ("零" if 0 < low < 1000 else "") if high else "") + \
        (section(low) if low else "")
    return text[1:] if text.startswith("一十") else text


def full_width(text: str) -> str:
    return "".join(chr(0xFF10 + int(c)) if c.isdigit() else c for c in text)


def load(data: Path) -> tuple[dict[str, str], dict[str, str], dict[str, list[str]]]:
    docs: dict[str, str] = {}
    with open(data / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            docs[row["_id"]] = row["text"]
    with open(data / "queries.jsonl", encoding="utf-8") as f:
        queries = {q["_id"]: q["text"] for q in map(json.loads, f)}
    judged: dict[str, list[str]] = defaultdict(list)
    with open(data / "qrels" / "test.tsv", encoding="utf-8") as f:
        next(f)
        for line in f:
            qid, did, score = line.rstrip("\n").split("\t")
            if int(score) > 0:
                judged[qid].append(did)
    return docs, queries, judged


def _reword(sentence: str, rng: random.Random, numbers: Any) -> str:
    s = re.sub(r"（[^（）]*）|\([^()]*\)", "", sentence)
    for a, b in _ZH_SWAPS.items():
        s = s.replace(a, b)
    found = [n for n in numbers(s, words=False)
             if n.decimals == 0 and n.text.isdigit() and 2 <= n.values[0] < 10**8]
    if found:
        n = rng.choice(found)
        value = int(n.values[0])
        year = 1900 <= value <= 2030 and s[s.find(n.text) + len(n.text):][:1] == "年"
        written = chinese_numeral(value, year) if rng.random() < 0.6 else full_width(n.text)
        s = re.sub(rf"(?<![\d.]){n.text}(?![\d.])", written, s, count=1)
    return rng.choice(_LEADS) + s


def _changed_number(sentence: str, avoid: frozenset[float], rng: random.Random,
                    years: bool, numbers: Any) -> str | None:
    found = [n for n in numbers(sentence, words=False)
             if n.values[0] > 0 and n.text.replace(".", "").isdigit()]
    picks = [n for n in found if (1900 <= n.values[0] <= 2030 and n.decimals == 0) == years]
    if not picks:
        return None
    n = rng.choice(picks)
    value = n.values[0]
    for _ in range(20):
        if years:
            new = value + rng.choice((-3, -2, -1, 1, 2, 3))
        else:
            new = round(value * rng.choice((0.5, 0.6, 1.5, 2.0, 3.0)) + rng.choice((0, 1)),
                        n.decimals)
        if new >= 1 and new != value and new not in avoid and round(new) not in avoid:
            break
    else:
        return None
    text = f"{new:.{n.decimals}f}" if n.decimals else str(int(new))
    if not n.decimals and new < 10**8 and rng.random() < 0.5:
        text = chinese_numeral(int(new), years)
    return re.sub(rf"(?<![\d.]){re.escape(n.text)}(?![\d.])", text, sentence, count=1)


def _holders(sentence: str, source: str, order: list[str], docs: dict[str, str],
             cid: dict[str, str]) -> tuple[str, ...]:
    """The other references that hold ``sentence`` word for word."""
    return tuple(cid[d] for d in order if d != source and sentence in docs[d])


def build(data: Path, n_questions: int, seed: int, tools: Any) -> dict[str, list[Any]]:
    """Cases of both halves; ``tools`` gives the English bench's helpers (sentences,
    TF-IDF, names, Item, Case, numbers, prepare)."""
    rng = random.Random(seed)
    docs, queries, judged = load(data)
    index = tools.Tfidf({d: {"title": "", "text": t} for d, t in docs.items()})
    owner: dict[str, set[str]] = defaultdict(set)
    for qid, dids in judged.items():
        for did in dids:
            owner[did].add(qid)
    names = sorted({w for t in list(docs.values())[:600] for w in tools.zh_names(t)})
    # statements only: a question in an answer is no_claim
    sentences = {d: [s for s in tools.sentences(t, True) if s[-1] != "？"]
                 for d, t in docs.items()}
    qids = sorted(judged)
    rng.shuffle(qids)
    halves: dict[str, list[Any]] = {"tune": [], "report": []}
    for qid in qids:
        half = "tune" if int(hashlib.sha1(qid.encode()).hexdigest(), 16) % 2 else "report"
        if len(halves[half]) >= n_questions:
            continue
        positives = [d for d in judged[qid] if sentences[d]]
        rng.shuffle(positives)
        positives = positives[:3]
        if len(positives) < 2 or sum(len(sentences[d]) for d in positives) < 6:
            continue
        related = set().union(*(owner[d] for d in judged[qid]))
        near = [d for d in index.nearest_to(queries[qid], 40) if d not in judged[qid]]
        retrieved = next((d for d in near if qid not in owner[d]), None)
        far = [d for d in near if not owner[d] & related and owner[d] and sentences[d]]
        if retrieved is None or not far:
            continue
        order = [*positives, retrieved]
        rng.shuffle(order)
        cid = {d: str(i + 1) for i, d in enumerate(order)}
        refs = [{"citation_id": cid[d], "title": "", "content": docs[d]} for d in order]
        ref_text = "\n".join(docs[d] for d in order)
        avoid = frozenset().union(*(tools.prepare(r["citation_id"], "", r["content"]).numbers
                                    for r in refs))
        own = [(s, d) for d in positives for s in sentences[d]]
        rng.shuffle(own)
        case = tools.Case(qid, refs, "zh-rgb")
        items = case.items
        items.append(tools.Item("copied", own[0][0], cid[own[0][1]], None))
        items.append(tools.Item("reworded", _reword(own[1][0], rng, tools.numbers),
                                cid[own[1][1]], None))
        s, d = own[2]
        items.append(tools.Item("unmarked", s, None, cid[d], also=_holders(s, d, order, docs, cid)))
        other = [(s, d) for d in order if d != own[2][1] for s in sentences[d]
                 if s not in {i.text for i in items}]
        if other:
            s, d = rng.choice(other)
            items.append(tools.Item("unmarked", s, None, cid[d],
                                    also=_holders(s, d, order, docs, cid)))
        for kind, years in (("number", False), ("date", True)):
            for s, d in own[3:]:
                changed = _changed_number(s, avoid, rng, years, tools.numbers)
                if changed:
                    items.append(tools.Item(kind, changed, cid[d], None))
                    break
        for s, d in own[3:]:
            changed = tools.changed_name(s, names, ref_text, rng)
            if changed:
                items.append(tools.Item("name", changed, cid[d], None))
                break
        nearby = [s for s in sentences[far[0]] if s not in ref_text]
        if nearby:
            items.append(tools.Item("nearby", rng.choice(nearby), cid[positives[0]], None))
        tools.join(case, zh=True, rng=rng)
        halves[half].append(case)
    return halves
