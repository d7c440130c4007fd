"""Extract WordNet 3.0's near-synonyms into agent_search/grounding/_data/related.tsv.

Run once by a maintainer, where WordNet's database files are installed (Debian:
``apt-get install wordnet-base`` puts them in /usr/share/wordnet):

    python tools/wordnet_related.py [/usr/share/wordnet]

The grounding's word overlap counts a sentence's word as held by a reference window
when the window holds a word WordNet relates to it ("rust" and "corrosion", "remain"
and "stay", "sound" and "safe"): a rewording changes words for such words. Kept, for
single words only and for the **common senses** of a word (among its first
:data:`SENSES` in WordNet's frequency order, in both words of a pair), so a rare sense
does not relate words a reader would not ("come" and "semen"):

- the other words of the same synset (synonyms);
- the words of the synsets an adjective is ``similar to`` (``&``: "sound" ~ "safe");
- the words of a synset's direct hypernym (``@``) and of its direct hyponyms, below the
  top of the hierarchy (a noun synset at depth :data:`MIN_DEPTH` or more: "rust" ~
  "corrosion", not "power" ~ "quality");
- derivations (``+``: "weaken" ~ "weak", "strength" ~ "strong").

One line per lemma: ``lemma<TAB>count<TAB>related related ...``, the related words cut to
the grounding's five-letter stems (what a window holds), sorted; ``count`` is how often
SemCor (WordNet's tagged corpus, cntlist.rev) tags the lemma, all senses together: the
overlap weighs a common word ("become", "bring") less than a rare one. Irregular forms
of these lemmas (WordNet's ``.exc`` files) go to related_forms.tsv. WordNet's licence
is already beside them (LICENSE-WordNet.txt, written by tools/wordnet_antonyms.py).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

FILES = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}
SENSES = 3
"""A word's synsets kept: its first three senses (WordNet lists them most frequent first)."""
MIN_DEPTH = 5
"""A hypernym or hyponym link counts below this depth of the noun hierarchy ("entity" is
0): above it, the words are too general to stand for each other ("quality", "object")."""
STEM = 5
"""The grounding's stem length (agent_search/grounding/_claims.py)."""

Key = tuple[str, str]
"""(part of speech, offset); adjective satellites are read as adjectives."""
SenseKey = tuple[str, int, int, int]
"""(lemma, synset type, lexicographer file, lexical id): a sense key of cntlist.rev."""
TYPES = {"n": 1, "v": 2, "a": 3, "r": 4, "s": 5}
SENSE_KEYS: dict[Key, list[SenseKey]] = {}
MAX_HYPONYMS = 6
"""A general word stands for its specific words only in a small family (a hypernym
with at most six hyponyms): "corrosion" for "rust", not "change" for its hundreds."""


def _pos(tag: str) -> str:
    return "a" if tag == "s" else tag


def read(root: Path) -> dict[Key, tuple[list[str], list[tuple[str, Key, int, int]]]]:
    """Synsets: their words and their pointers (symbol, target, source word, target
    word; word numbers 0 for a pointer between whole synsets)."""
    out = {}
    for name, pos in FILES.items():
        for line in (root / f"data.{name}").read_text(encoding="latin-1").splitlines():
            if line.startswith("  "):
                continue
            fields = line.split(" | ")[0].split()
            count = int(fields[3], 16)
            words = [fields[4 + 2 * i].lower().split("(")[0] for i in range(count)]
            at = 4 + 2 * count
            pointers = []
            for i in range(int(fields[at])):
                symbol, offset, tpos, st = fields[at + 1 + 4 * i: at + 5 + 4 * i]
                pointers.append((symbol, (_pos(tpos), offset), int(st[:2], 16),
                                 int(st[2:], 16)))
            lex_ids = [int(fields[5 + 2 * i], 16) for i in range(count)]
            out[(pos, fields[0])] = (words, pointers)
            SENSE_KEYS[(pos, fields[0])] = [(w, TYPES[fields[2]], int(fields[1]), lex)
                                             for w, lex in zip(words, lex_ids, strict=True)]
    return out


def ranks(root: Path) -> dict[tuple[str, Key], int]:
    """(lemma, synset) → the sense number of the synset for that lemma (0: most common)."""
    out = {}
    for name, pos in FILES.items():
        for line in (root / f"index.{name}").read_text(encoding="latin-1").splitlines():
            if line.startswith("  "):
                continue
            fields = line.split()
            lemma, pointer_count = fields[0], int(fields[3])
            for i, offset in enumerate(fields[4 + pointer_count + 2:]):
                out[(lemma, (pos, offset))] = i
    return out


def depths(synsets: dict[Key, tuple[list[str], list[tuple[str, Key, int, int]]]]
           ) -> dict[Key, int]:
    """Each noun synset's shortest distance to the top of the hierarchy."""
    memo: dict[Key, int] = {}

    def depth(key: Key, seen: frozenset[Key] = frozenset()) -> int:
        if key in memo:
            return memo[key]
        ups = [t for s, t, _, _ in synsets[key][1] if s in ("@", "@i") and t in synsets
               and t not in seen]
        memo[key] = 0 if not ups else 1 + min(depth(t, seen | {key}) for t in ups)
        return memo[key]

    return {key: depth(key) for key in synsets if key[0] == "n"}


def tag_counts(root: Path) -> dict[SenseKey, int]:
    """How often each sense is tagged in WordNet's SemCor counts (cntlist.rev)."""
    out: dict[SenseKey, int] = {}
    for line in (root / "cntlist.rev").read_text(encoding="latin-1").splitlines():
        key, _, count = line.split()
        lemma, rest = key.split("%")
        sstype, lexfile, lexid = rest.split(":")[:3]
        out[(lemma.lower(), int(sstype), int(lexfile), int(lexid))] = int(count)
    return out


def lemma_counts(root: Path) -> dict[str, int]:
    """How often each single-word lemma is tagged in SemCor, all its senses together: how
    common the word is, hence how little it says on its own ("become", "bring")."""
    out: dict[str, int] = defaultdict(int)
    for (lemma, _, _, _), n in tag_counts(root).items():
        if n and lemma.isalpha():
            out[lemma] += n
    return dict(out)


def common_senses(root: Path, synsets: dict[Key, Any]) -> set[tuple[str, Key]]:
    """(lemma, synset) for the senses a reader has in mind: among the lemma's first
    :data:`SENSES` of its part of speech and tagged at least once in SemCor; for a lemma
    SemCor never tags, its first sense only ("come" is never the noun "semen")."""
    rank = ranks(root)
    counts = tag_counts(root)
    tagged = {lemma for (lemma, _, _, _), n in counts.items() if n}
    out = set()
    for key in synsets:
        for lemma, sstype, lexfile, lexid in SENSE_KEYS[key]:
            r = rank.get((lemma, key), SENSES)
            n = counts.get((lemma, sstype, lexfile, lexid), 0)
            if r < SENSES and (n > 0 or (r == 0 and lemma not in tagged)):
                out.add((lemma, key))
    return out


def related(root: Path) -> dict[str, set[str]]:
    synsets = read(root)
    common = common_senses(root, synsets)
    depth = depths(synsets)
    hyponyms = {key: sum(s in ("~", "~i") for s, _, _, _ in pointers)
                for key, (_, pointers) in synsets.items()}
    out: dict[str, set[str]] = defaultdict(set)

    def usable(word: str, key: Key) -> bool:
        return "_" not in word and word.isalpha() and (word, key) in common

    def link(a: str, ka: Key, b: str, kb: Key, both: bool = True) -> None:
        if a != b and usable(a, ka) and usable(b, kb):
            out[a].add(b)
            if both:
                out[b].add(a)

    for key, (words, pointers) in synsets.items():
        for a in words:
            for b in words:
                link(a, key, b, key)
        for symbol, target, src, dst in pointers:
            if target not in synsets:
                continue
            twords = synsets[target][0]
            if symbol == "+" and src and dst:
                link(words[src - 1], key, twords[dst - 1], target)
            elif symbol == "&" or (symbol == "@" and _deep(key, target, depth)):
                both = symbol == "&" or hyponyms[target] <= MAX_HYPONYMS
                for a in words:
                    for b in twords:
                        link(a, key, b, target, both)
    return out


def _deep(key: Key, target: Key, depth: dict[Key, int]) -> bool:
    """A hypernym link low enough in the hierarchy (verbs: below a top verb)."""
    if key[0] == "n":
        return depth.get(target, 0) >= MIN_DEPTH
    return key[0] == "v"


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/wordnet")
    target = Path(__file__).resolve().parent.parent / "agent_search" / "grounding" / "_data"
    found = related(root)
    counts = lemma_counts(root)
    lines = []
    for lemma in sorted(set(found) | set(counts)):
        stems = sorted({b[:STEM] for b in found.get(lemma, ())} - {lemma[:STEM]})
        if stems or counts.get(lemma):
            lines.append(f"{lemma}\t{counts.get(lemma, 0)}\t{' '.join(stems)}\n")
    (target / "related.tsv").write_text("".join(lines), encoding="utf-8")
    vocabulary = set(found)
    forms = sorted({(form, lemma) for name in ("adj", "verb", "noun")
                    for line in (root / f"{name}.exc").read_text(encoding="latin-1").splitlines()
                    for form, *lemmas in [line.split()] for lemma in lemmas
                    if lemma in vocabulary and form.isalpha() and form != lemma})
    (target / "related_forms.tsv").write_text(
        "".join(f"{form}\t{lemma}\n" for form, lemma in forms), encoding="utf-8")
    print(f"{len(lines)} lemmas, {len(forms)} irregular forms -> {target}")


if __name__ == "__main__":
    main()
