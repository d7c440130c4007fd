"""What the check does not compute: work whose result no verdict reads (its cost per
sentence is bounded against the check of an older commit, bench/bench_grounding.py)."""

from __future__ import annotations

import agent_search.grounding._ground as grounding
from agent_search.grounding import ground
from agent_search.grounding._claims import extract

SOURCE = "Aspirin lowered the risk of stroke by 30% in the trial of 2,000 adults."
NEIGHBOUR = "Aspirin was given to adults in a trial on the risk of stroke in older men."
OTHER = "Adults in the trial who took aspirin had a lower risk of stroke than the rest."


def _refs() -> list[dict[str, str]]:
    return [{"citation_id": str(i), "title": "", "content": text}
            for i, text in enumerate((SOURCE, NEIGHBOUR, OTHER), start=1)]


def test_a_reference_without_the_sentences_number_is_not_measured_for_overlap(
        monkeypatch) -> None:  # type: ignore[no-untyped-def]
    measured: list[tuple[str, ...]] = []
    best_window = grounding._best_window

    def spy(claims, refs, exact):  # type: ignore[no-untyped-def]
        measured.append(tuple(r.citation_id for r in refs))
        return best_window(claims, refs, exact)

    monkeypatch.setattr(grounding, "_best_window", spy)
    (g,) = ground("Aspirin cut the risk of stroke by 30% #ref:2.", _refs(), meanings=None)
    assert g.status == "supported" and g.support == ["1"]
    # the third reference states no 30%: it cannot support the sentence, so its windows
    # are not read when the other references are tried in place of the cited one
    assert ("1",) in measured and ("3",) not in measured


def test_the_other_references_still_add_a_missing_citation() -> None:
    (g,) = ground("Aspirin lowered the risk of stroke by 30% in the trial #ref:2.", _refs(),
                  meanings=None)
    assert g.status == "supported" and g.support == ["1"]


def test_a_sentences_words_are_weighed_once_for_all_its_references() -> None:
    refs = [grounding.prepare("1", "", SOURCE), grounding.prepare("2", "", NEIGHBOUR)]
    claims = extract("Aspirin cut the risk of stroke in the trial.")
    grounding._coverage(claims, refs[:1])
    units = claims.memo["units", False]
    grounding._coverage(claims, refs[1:])
    assert claims.memo["units", False] is units


def test_a_references_names_are_read_only_when_a_sentence_has_one() -> None:
    ref = grounding.prepare("1", "", SOURCE + " It was run by Bayer in Leverkusen.")
    assert ref._names is None  # prepared: nothing asked yet
    assert ref.has_name("Bayer") and not ref.has_name("Pfizer")
    assert ref._names is not None and "leverkusen" in ref.names


def test_a_references_numbers_are_those_of_its_sentences() -> None:
    from agent_search.grounding._claims import reference_numbers

    text = ("Of 2,000 adults, 30% took aspirin. 三十五人退出。 Risk fell 1.5 percent.\n\n"
            "A second arm had 12 people")
    assert grounding.prepare("1", "", text).numbers == reference_numbers(text)
