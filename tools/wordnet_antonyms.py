"""Extract the antonym pairs of WordNet 3.0 into agent_search/grounding/_data/antonyms.tsv.

Run once by a maintainer, where WordNet's database files are installed (Debian:
``apt-get install wordnet-base`` puts them in /usr/share/wordnet):

    python tools/wordnet_antonyms.py [/usr/share/wordnet]

The grounding reads only the file this writes (a few hundred KB in the package), so a
user needs neither WordNet nor a download. Kept:

- every direct antonym pointer (``!``) between two words, any part of speech (WordNet's
  indirect antonyms, through similar adjectives, are left out: "safe" would oppose
  "wild" and "silence");
- verbs that WordNet derives from an antonymous adjective pair ("thicken" from "thick",
  "thin" from "thin"), through its derivation pointers (``+``).

Single words only (no collocations), lower-cased, one pair per line, sorted. WordNet's
licence (WordNet3.0, permissive with the notice kept) is written beside the file.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

POS = {"adj": "a", "verb": "v", "noun": "n", "adv": "r"}


def _read(root: Path) -> dict[tuple[str, str], tuple[list[str], list[tuple[str, str, str, str]]]]:
    """(pos, offset) → (words, pointers (symbol, offset, pos, source/target))."""
    out = {}
    for name, pos in POS.items():
        for line in (root / f"data.{name}").read_text(encoding="latin-1").splitlines():
            if line.startswith("  "):
                continue
            fields = line.split(" | ")[0].split()
            offset, count = fields[0], int(fields[3], 16)
            words = [fields[4 + 2 * i].lower().split("(")[0] for i in range(count)]
            at = 4 + 2 * count
            n = int(fields[at])
            ptrs = [tuple(fields[at + 1 + 4 * i: at + 5 + 4 * i]) for i in range(n)]
            out[(pos if pos != "a" or fields[2] != "s" else "s", offset)] = (words, ptrs)
            if fields[2] == "s":
                out[("a", offset)] = (words, ptrs)
    return out


def pairs(root: Path) -> set[tuple[str, str]]:
    synsets = _read(root)
    found: set[tuple[str, str]] = set()
    antonyms_of: dict[str, set[str]] = defaultdict(set)
    for (_pos, _), (words, ptrs) in synsets.items():
        for symbol, offset, tpos, st in ptrs:
            if symbol != "!":
                continue
            target = synsets.get((tpos if tpos != "s" else "a", offset))
            if target is None:
                continue
            src, dst = int(st[:2], 16), int(st[2:], 16)
            a, b = words[src - 1], target[0][dst - 1]
            found.add((a, b))
            antonyms_of[a].add(b)
    for (pos, _), (words, ptrs) in synsets.items():  # verbs derived from antonym adjectives
        if pos != "v":
            continue
        for symbol, offset, tpos, st in ptrs:
            if symbol != "+" or tpos not in ("a", "s") or st == "0000":
                continue
            target = synsets.get(("a", offset))
            if target is None:
                continue
            src, dst = int(st[:2], 16), int(st[2:], 16)
            verb, adjective = words[src - 1], target[0][dst - 1]
            found.update((verb, b) for b in antonyms_of.get(adjective, ()))
    symmetric = found | {(b, a) for a, b in found}
    return {(a, b) for a, b in symmetric
            if a != b and "_" not in a + b and a.isalpha() and b.isalpha()}


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/wordnet")
    target = Path(__file__).resolve().parent.parent / "agent_search" / "grounding" / "_data"
    target.mkdir(exist_ok=True)
    found = sorted(pairs(root))
    (target / "antonyms.tsv").write_text(
        "".join(f"{a}\t{b}\n" for a, b in found if a < b), encoding="utf-8")
    vocabulary = {a for a, _ in found}
    forms = sorted({(form, lemma) for name in ("adj", "verb", "noun")
                    for line in (root / f"{name}.exc").read_text(encoding="latin-1").splitlines()
                    for form, *lemmas in [line.split()] for lemma in lemmas
                    if lemma in vocabulary and form.isalpha() and form != lemma})
    (target / "antonym_forms.tsv").write_text(
        "".join(f"{form}\t{lemma}\n" for form, lemma in forms), encoding="utf-8")
    units = _units(root)
    (target / "units.txt").write_text("".join(f"{u}\n" for u in units), encoding="utf-8")
    print(f"{len(found) // 2} pairs, {len(forms)} irregular forms, {len(units)} units "
          f"-> {target}")


def _units(root: Path) -> list[str]:
    """The single-word nouns of WordNet's lexicographer files noun.quantity (units of
    measure: meter, percent, dose) and noun.time (week, month, year): what a number
    counts when one of them follows it."""
    out: set[str] = set()
    for line in (root / "data.noun").read_text(encoding="latin-1").splitlines():
        if line.startswith("  "):
            continue
        fields = line.split()
        if fields[1] not in UNIT_FILES:
            continue
        count = int(fields[3], 16)
        out.update(w.lower() for w in (fields[4 + 2 * i] for i in range(count))
                   if w.isalpha())
    return sorted(out)


UNIT_FILES = ("23", "28")
"""noun.quantity and noun.time (WordNet's lexnames)."""


if __name__ == "__main__":
    main()
