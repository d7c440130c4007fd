"""Words aligned by meaning (grounding._meaning) where neither stems nor WordNet align
them, and the polarity readings made for faithful rewordings: a reference that states a
word both negated and not, "little" before a plural. The embedder here is scripted (a
vector per word), so what is asserted is the check's rule, not the model's judgement."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from agent_search.embedding import VectorCache
from agent_search.grounding import Budget, ground
from agent_search.grounding._meaning import MEANING, Meanings, opposed
from agent_search.types import ResultItem

REFERENCE = ("The hurricane weakened to a tropical storm after landfall, and its rainfall "
             "caused record flooding across the coastal valleys.")
ANSWER = "Once ashore, the storm brought unprecedented flooding to the coastal valleys #ref:1."
"""56% of its weight in the reference's words; with "ashore" and "unprecedented" aligned
(landfall, record), all but "brought"."""

CLOSE = {("ashore", "landfall"), ("unprecedented", "record"), ("safe", "unsafe"),
         ("unsafe", "safe")}
"""Word pairs the scripted model puts close together (cosine 0.9); all others at 0."""


_PAIRS: dict[str, int] = {}
for _a, _b in sorted(CLOSE):
    _PAIRS.setdefault(_a, len(_PAIRS))
    _PAIRS.setdefault(_b, _PAIRS[_a])
_OWN: dict[str, int] = {}
"""Each word its own axis, past the pairs' (given in the order words are first seen)."""


def scripted(texts: Sequence[str]) -> NDArray[np.float32]:
    """One unit vector per word: a word of a close pair shares its partner's axis."""
    axes = _PAIRS
    out = np.zeros((len(texts), 1024), dtype=np.float32)
    for i, text in enumerate(texts):
        own = _OWN.setdefault(text, 16 + len(_OWN))
        if text in axes:  # 0.9 along the pair's axis, the rest its own
            out[i, axes[text]] = 0.9
            out[i, own] = np.sqrt(1 - 0.81)
        else:
            out[i, own] = 1.0
    return out


def verdict(answer: str, reference: str, **kwargs: object) -> str:
    (g,) = ground(answer, [{"citation_id": "1", "title": "", "content": reference}],
                  **kwargs)  # type: ignore[arg-type]
    return g.status


def test_words_aligned_by_meaning_support_a_rewording() -> None:
    meanings = Meanings(scripted)
    assert verdict(ANSWER, REFERENCE, meanings=None) == "unsupported"  # words alone
    assert verdict(ANSWER, REFERENCE, meanings=meanings) == "supported"


def test_no_model_or_spent_budget_leaves_the_overlap_lexical() -> None:
    budget = Budget(meaning_words=0)
    assert verdict(ANSWER, REFERENCE, meanings=Meanings(scripted),
                   budget=budget) == "unsupported"


def test_a_sentence_far_from_the_window_is_not_read_by_meaning() -> None:
    calls: list[Sequence[str]] = []

    def counting(texts: Sequence[str]) -> NDArray[np.float32]:
        calls.append(texts)
        return scripted(texts)

    # 33% of its weight: under MEANING_FROM
    far = "Ashore, the hurricane brought unprecedented flooding to farms and towns #ref:1."
    assert verdict(far, REFERENCE, meanings=Meanings(counting)) == "unsupported"
    assert calls == []


def test_a_word_is_never_aligned_with_its_opposite() -> None:
    meanings = Meanings(scripted)
    assert meanings.aligned(["ashore"], ["landfall"]) == [True]
    assert meanings.aligned(["unsafe"], ["safe"]) == [False]  # close, but opposite
    assert opposed("unsafe", "safe") and opposed("increase", "decrease")
    assert opposed("thin", "thick") and not opposed("ashore", "landfall")
    assert MEANING < 0.9


def test_word_vectors_are_kept() -> None:
    calls: list[Sequence[str]] = []

    def counting(texts: Sequence[str]) -> NDArray[np.float32]:
        calls.append(list(texts))
        return scripted(texts)

    meanings = Meanings(counting)
    meanings.aligned(["ashore"], ["landfall", "rain"])
    meanings.aligned(["ashore"], ["landfall"])
    assert calls == [["ashore", "landfall", "rain"]]


def test_a_reference_stating_a_word_negated_and_not_does_not_contradict_it() -> None:
    reference = ("Growth on glucose is the condition used to deplete SecDFyajC. "
                 "Cells lacking SecDFyajC grow slowly.")
    assert verdict("Cells grow slowly on glucose, the condition used to deplete "
                   "SecDFyajC #ref:1.", reference) == "supported"
    # the negation alone still contradicts a sentence that states the word
    assert verdict("Cells with SecDFyajC grow slowly #ref:1.",
                   "Cells lacking SecDFyajC grow slowly.") == "unsupported"


@pytest.mark.parametrize(("answer", "status"), [
    ("The tax places a roadblock to the success of little businesses #ref:1.",
     "supported"),
    ("The tax places little roadblock to the success of businesses #ref:1.",
     "unsupported"),
])
def test_little_before_a_plural_is_a_size_not_a_negation(answer: str, status: str) -> None:
    reference = "The tax places a roadblock to the success of businesses."
    assert verdict(answer, reference) == status


def test_one_answer_embeds_a_bounded_number_of_words() -> None:
    embedded: list[str] = []

    def counting(texts: Sequence[str]) -> NDArray[np.float32]:
        embedded.extend(texts)
        return scripted(texts)

    answer = " ".join(ANSWER.replace("coastal", f"coastal{i:02d}") for i in range(10))
    reference = " ".join(REFERENCE.replace("coastal", f"coastal{i:02d}") for i in range(10))
    out = ground(answer, [{"citation_id": "1", "title": "", "content": reference}],
                 meanings=Meanings(counting), budget=Budget(meaning_words=30))
    assert len(out) == 10
    assert 0 < len(embedded) <= 30
    assert [g.status for g in out].count("supported") < 10  # past the bound: lexical


class _Scripted:
    """An embedder with the scripted vectors, standing for the shipped model."""

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return scripted(texts)


@pytest.fixture
def homes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The homes the shipped model is looked up in (a scripted one each time, as if
    each lookup loaded a model), with a word-vector cache of the test's own."""
    import agent_search.embedding as embedding
    from agent_search.grounding import _meaning

    asked: list[Path] = []

    def shipped_embedder(home: Path) -> _Scripted:
        asked.append(Path(home))
        return _Scripted()

    monkeypatch.setattr(embedding, "shipped_embedder", shipped_embedder)
    monkeypatch.setattr(_meaning, "_SHIPPED_VECTORS", VectorCache(_meaning._CACHE))
    return asked


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_model_is_read_from_the_configured_home(
        homes: list[Path], tmp_path: Path) -> None:
    from agent_search import Searcher
    from agent_search.agent._grounding import ground_answer
    from agent_search.config import SearchConfig

    own = tmp_path / "own-home"
    ctx = Searcher().context(config=SearchConfig(home=own))
    (entry,) = await ground_answer(ctx, ANSWER, [ResultItem(
        citation_id="1", type="kb", title="", content=REFERENCE)])
    assert entry["status"] == "supported"  # aligned by meaning with the scripted model
    assert homes and set(homes) == {own}


def test_many_homes_keep_no_model_and_one_cache_of_vectors(
        homes: list[Path], tmp_path: Path) -> None:
    from agent_search.grounding import _meaning

    made: list[weakref.ref[_Scripted]] = []
    words: list[str] = []

    class Counting(_Scripted):
        def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
            words.extend(texts)
            return super().embed(texts)

    def shipped_embedder(home: Path) -> _Scripted:
        homes.append(Path(home))
        made.append(weakref.ref(found := Counting()))
        return found

    import agent_search.embedding as embedding
    embedding.shipped_embedder = shipped_embedder  # restored by the fixture
    for i in range(12):
        assert verdict(ANSWER, REFERENCE, home=tmp_path / f"home-{i}") == "supported"
    gc.collect()
    assert len(set(homes)) == 12
    assert not [ref for ref in made if ref() is not None]  # no model kept by grounding
    # the words were embedded once, in the first home; the others only warmed up
    assert sorted(set(words) - {"warm"}) == sorted(_meaning._SHIPPED_VECTORS.texts())
    assert len(words) - words.count("warm") == len(set(words) - {"warm"})


def test_an_answer_citing_nothing_does_not_load_the_model(
        homes: list[Path], tmp_path: Path) -> None:
    uncited = ANSWER.replace(" #ref:1", "")
    ground(uncited, [{"citation_id": "1", "title": "", "content": REFERENCE}],
           home=tmp_path)
    assert homes == []  # only the cited references are read by meaning
    verdict(ANSWER, REFERENCE, home=tmp_path)
    assert homes
