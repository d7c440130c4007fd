"""A question about a neighbouring tool gets no confident answer from a collection on the
same topic (issue 34 item 1): the rare words it asks about that the passage never speaks
of, weighed by how much of the question they carry (``agent_search/kb/_retrieval/_foreign.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agent_search import Request, SearchConfig, Searcher
from agent_search.kb import create_handler, ingest_paths
from agent_search.kb._retrieval._background import Null
from agent_search.kb._retrieval._foreign import _words, kept_meaning, without
from agent_search.kb._store import BM25

pytestmark = pytest.mark.anyio


@pytest.fixture
def config(config: SearchConfig) -> SearchConfig:
    """A first search embeds the model's background passages: no 10 s limit on a busy
    machine."""
    return config.merged({"options": {"timeout": 300, "deadline": 300}})

# written for this test: a key-value server's notes on lists, queues, expiry and copies
NOTES = {
    "lists.md": (
        "# Lists\n\nA list holds strings in insertion order. Push items on the left with "
        "LPUSH and pop them from the right with RPOP to use the list as a work queue: "
        "producers push jobs, workers pop them. BRPOP blocks a worker until a job arrives, "
        "so idle workers do not poll the server."),
    "expiry.md": (
        "# Key expiry\n\nSet a time to live on a key with EXPIRE and the server deletes "
        "the key when the time is up. TTL tells how many seconds a key has left; PERSIST "
        "removes the time to live so the key stays until it is deleted."),
    "replication.md": (
        "# Replication\n\nA replica keeps a copy of the primary's data and follows every "
        "write. Replicas are read-only by default: clients may read from them, and writes "
        "go to the primary. When the link breaks, the replica resyncs from the primary."),
    "snapshots.md": (
        "# Snapshots\n\nThe server saves its whole dataset to disk as a snapshot file every "
        "few minutes, so a restart loads the data back. Saving runs in a child process and "
        "the server keeps answering clients while the snapshot is written."),
}
NEIGHBOUR = "How do I declare a durable queue in RabbitMQ?"
ANSWERED = "How do I use a list as a work queue for my workers?"


def _notes(folder: Path, copies: int) -> list[Path]:
    """Each note ``copies`` times: with several copies no word of the collection occurs
    in one chunk only, so its statistics can tell a word it lacks (unseen mass 0)."""
    folder.mkdir()
    for name, text in NOTES.items():
        for i in range(copies):
            (folder / f"{i}-{name}").write_text(text, encoding="utf-8")
    return [folder]


async def _kept(config: SearchConfig, collection: str, question: str,
                floor: float | None = None) -> list[str]:
    searcher = Searcher(config, handlers=[create_handler(config)])
    try:
        result = await searcher.search(Request(type="kb", query=question, limit=3,
                                               collections=[collection], min_score=floor))
    finally:
        await searcher.aclose()
    assert result.error is None
    return [Path(i.metadata["source"]).name.split("-", 1)[1] for i in result.items]


async def test_a_question_about_a_neighbouring_tool_is_not_answered(
        config: SearchConfig, tmp_path: Path) -> None:
    await ingest_paths(config, _notes(tmp_path / "notes", copies=5), "kv")
    off = config.merged({"kb": {"foreign_veto": False}})
    # same topic: without the rule the queue note is a confident answer
    assert (await _kept(off, "kv", NEIGHBOUR))[:1] == ["lists.md"]
    assert await _kept(config, "kv", NEIGHBOUR) == []
    # only the scores moved: without a floor the ranking is the one without the rule
    assert await _kept(config, "kv", NEIGHBOUR, floor=0.0) == \
        await _kept(off, "kv", NEIGHBOUR, floor=0.0)
    # the question the notes answer keeps its answer
    assert (await _kept(config, "kv", ANSWERED))[:1] == ["lists.md"]


async def test_five_notes_cannot_tell_a_foreign_word(config: SearchConfig,
                                                     tmp_path: Path) -> None:
    """In a handful of notes most words of any question are absent: there the rule is
    off and scores are the ones without it."""
    await ingest_paths(config, _notes(tmp_path / "notes", copies=1), "few")
    off = config.merged({"kb": {"foreign_veto": False}})
    for question in (NEIGHBOUR, ANSWERED):
        assert await _kept(config, "few", question) == await _kept(off, "few", question)


def test_words_are_cut_out_as_written() -> None:
    query = "How do I declare a durable queue in RabbitMQ?"
    words = _words(query, BM25())
    texts = [query[w.start:w.end] for w in words]
    assert texts[-1] == "RabbitMQ" and words[-1].terms  # a word with its BM25 term
    assert not words[1].terms  # "do": a stop word, no term
    assert without(query, words, frozenset({len(words) - 1})) == \
        "How do I declare a durable queue in ?"


def test_kept_meaning_is_zero_at_unrelated_text_and_one_at_the_question() -> None:
    q = np.asarray([1.0, 0.0, 0.0])
    null = Null(dense_mean=0.2, dense_std=0.05, coverage_mean=0.0, coverage_std=0.01)
    assert kept_meaning(q, q, null) == pytest.approx(1.0)
    unrelated = np.asarray([0.2, np.sqrt(1 - 0.04), 0.0])  # cosine 0.2: the background's
    assert kept_meaning(q, unrelated, null) == pytest.approx(0.0, abs=1e-9)
    half = np.asarray([0.6, 0.8, 0.0])  # cosine 0.6: half way from unrelated to itself
    assert kept_meaning(q, half, null) == pytest.approx(0.5)


USER_WORDS = ("My idle background workers keep hammering the server with requests; how "
              "can they just sit and wait until the next job shows up?")


async def test_a_question_in_a_users_own_words_keeps_its_answer(
        config: SearchConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A user describing their situation uses several words no note has; each alone
    carries little of the question, so the note that answers it is kept. Cut all at once
    (the rule's first form) they took most of the question's meaning with them."""
    from dataclasses import replace

    from agent_search.kb._retrieval import _foreign

    await ingest_paths(config, _notes(tmp_path / "notes", copies=5), "kv")
    assert (await _kept(config, "kv", USER_WORDS))[:1] == ["lists.md"]
    assert await _kept(config, "kv", NEIGHBOUR) == []  # the neighbouring tool still vetoed
    monkeypatch.setattr(_foreign, "FOREIGN", replace(_foreign.FOREIGN, each=False))
    assert await _kept(config, "kv", USER_WORDS) == []


# a note that speaks of a neighbouring tool in passing, as real docs do
STREAMS = (
    "# Streams\n\nA stream is an append-only log of entries. A consumer group splits the "
    "entries among its consumers, much like Kafka's consumer groups: each consumer reads "
    "the entries the group gives it and acknowledges them with XACK, and a pending list "
    "keeps the entries read but not yet acknowledged.")
MENTIONED = "How do I reset a Kafka consumer group's offsets to the earliest message?"
ASKED = "How does a consumer group acknowledge the stream entries it has read?"


async def test_a_name_the_passage_mentions_in_passing_is_not_an_answer(
        config: SearchConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The streams note holds "Kafka", so the lacked-word rule cannot see it; the question
    asks about Kafka (the shared rare name carries it) and the rest of it — resetting
    offsets to the earliest message — is nowhere in the note: no confident answer. The
    question the note answers shares no rare name it lacks the rest of, and keeps it."""
    from dataclasses import replace

    from agent_search.kb._retrieval import _foreign

    # Kafka rare in the collection: two streams notes among eighty others
    folder = tmp_path / "notes"
    _notes(folder, copies=20)
    for i in range(2):
        (folder / f"{i}-streams.md").write_text(STREAMS, encoding="utf-8")
    await ingest_paths(config, [folder], "kv")
    assert (await _kept(config, "kv", ASKED))[:1] == ["streams.md"]
    assert await _kept(config, "kv", MENTIONED) == []
    # only the scores moved: the ranking is the one without the rule
    off = config.merged({"kb": {"foreign_veto": False}})
    assert await _kept(config, "kv", MENTIONED, floor=0.0) == \
        await _kept(off, "kv", MENTIONED, floor=0.0)
    # the shared-name part is what abstains: without it the note is kept
    monkeypatch.setattr(_foreign, "FOREIGN", replace(_foreign.FOREIGN, named=0.0))
    assert (await _kept(config, "kv", MENTIONED))[:1] == ["streams.md"]
    assert (await _kept(config, "kv", USER_WORDS))[:1] == ["lists.md"]


# written for this test: a name one page explains throughout, another names once
PASSING = "\n\n".join([
    "# Install\n\nBuild the server from source with make. " + "The build needs a C "
    "compiler and takes a few minutes on a laptop. " * 8,
    "## Package managers\n\nOn a Mac the server is in Zorblax as well as in the usual "
    "package managers. " + "Package managers keep the server up to date for you. " * 8,
    "## Containers\n\nRun the server in a container from the published image. "
    + "The image keeps its data in a volume you mount. " * 8,
])
THROUGHOUT = "\n\n".join([
    "# Zorblax\n\nZorblax builds ports from their recipes. " + "A port is a recipe "
    "Zorblax compiles for your Mac. " * 8,
    "## Variants\n\nZorblax variants switch a port's options on. " + "Zorblax lists a "
    "port's variants before it builds it. " * 8,
    "## Upgrades\n\nZorblax upgrades outdated ports in one step. " + "Zorblax keeps "
    "the old version until the new one is built. " * 8,
])


async def test_a_name_its_document_mentions_once_is_not_its_subject(
        config: SearchConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The page that explains a thing names it throughout; a page that lists it beside
    others names it in one chunk. Only the first speaks of it (``_Spoken``); a short
    page that names it in half of its chunks does too."""
    from dataclasses import replace

    from agent_search.kb._retrieval import _foreign
    from agent_search.kb._retrieval._foreign import _Spoken
    from agent_search.kb._retrieval._hits import Hit
    from agent_search.kb._store import get_store, scroll_all
    from agent_search.kb.settings import KBSettings

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "install.md").write_text(PASSING, encoding="utf-8")
    (folder / "zorblax.md").write_text(THROUGHOUT, encoding="utf-8")
    (folder / "note.md").write_text("# Zorblax\n\nZorblax is a port system.",
                                    encoding="utf-8")
    # a short page: one of its two chunks names it
    (folder / "short.md").write_text(
        "# Build\n\n" + "Build the server from source with make and a C compiler. " * 14
        + "\n\n## Elsewhere\n\nOn a Mac the server is in Zorblax too. "
        + "Package managers keep the server up to date for you. " * 14, encoding="utf-8")
    await ingest_paths(config, [folder], "docs")
    store = get_store(KBSettings.from_config(config), config.home)
    docs: dict[str, Hit] = {}
    chunks: dict[str, int] = {}
    for rec in scroll_all(store, "docs"):
        name = Path(str(rec.payload["source"])).name
        docs[name] = Hit(rec.id, 1.0, rec.payload)
        chunks[name] = chunks.get(name, 0) + 1
    (word,) = [w for w in _words("Zorblax", BM25())]
    # off (the default): every name the passage holds is its own
    assert _Spoken(store, "docs")(docs["install.md"], word.terms)
    monkeypatch.setattr(_foreign, "FOREIGN", replace(_foreign.FOREIGN, subject=3))
    assert chunks["install.md"] >= 3 and chunks["zorblax.md"] >= 3
    spoken = _Spoken(store, "docs")
    assert not spoken(docs["install.md"], word.terms)  # one chunk of three
    assert spoken(docs["zorblax.md"], word.terms)  # every chunk
    assert spoken(docs["note.md"], word.terms)  # a one-chunk document that holds it
    assert chunks["short.md"] == 2
    assert spoken(docs["short.md"], word.terms)  # half of a short page
    (other,) = [w for w in _words("compiler", BM25())]
    assert not spoken(docs["note.md"], other.terms)


def _half_without(query: str, word: str) -> tuple[list[Any], int, Any]:
    """The question's words, the index of ``word`` among them, and its meaning kept by an
    embedder under which the question without ``word`` keeps half of its meaning."""
    from agent_search.kb._retrieval._foreign import _Kept

    words = _words(query, BM25())
    name = next(i for i, w in enumerate(words) if query[w.start:w.end] == word)
    full = np.asarray([1.0, 0.0])

    def embed(text: str) -> np.ndarray:
        return full if word in text else np.asarray([0.5, np.sqrt(0.75)])

    return words, name, _Kept(query, words, full, None, embed)


def test_a_carrying_name_named_in_passing_counts_as_lacked() -> None:
    """A rare name the passage holds that carries the question vetoes the hit when its
    document only names it in passing, and is the passage's own when it speaks of it."""
    from agent_search.kb._retrieval._foreign import _factor

    words, name, kept = _half_without("How do I install Zorblax", "Zorblax")
    held = set(words[name].terms)
    assert _factor(kept, {name}, held, lambda terms: True) == 1.0
    assert _factor(kept, {name}, held, lambda terms: False) == 0.0
    assert _factor(kept, {name}, held) == 1.0  # nothing to tell by: the passage's own


def test_a_rare_word_the_page_speaks_of_elsewhere_is_held() -> None:
    """The chunk that best matches a question need not be the one that names what it
    asks about: a rare word the passage lacks that its page speaks of in other chunks is
    the page's own, and the hit is not vetoed; one the page does not speak of still is."""
    from agent_search.kb._retrieval._foreign import _factor

    words, name, kept = _half_without(
        "How do I write a recipe for an app shipped as a zorbfile", "zorbfile")
    held = {t for i, w in enumerate(words) if i != name for t in w.terms}  # all but it
    assert _factor(kept, {name}, held) == 0.0  # lacked: vetoed
    assert _factor(kept, {name}, held, None, lambda terms: True) == 1.0  # page speaks of it
    assert _factor(kept, {name}, held, None, lambda terms: False) == 0.0


async def test_a_page_speaks_of_a_word_it_holds_in_several_chunks(
        config: SearchConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``_Spoken.elsewhere``: the page that explains a thing holds it in several chunks,
    the page that lists it in one; a word no page holds is nobody's. Off at 0."""
    from dataclasses import replace

    from agent_search.kb._retrieval import _foreign
    from agent_search.kb._retrieval._foreign import FOREIGN, _Spoken
    from agent_search.kb._retrieval._hits import Hit
    from agent_search.kb._store import get_store, scroll_all
    from agent_search.kb.settings import KBSettings

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "install.md").write_text(PASSING, encoding="utf-8")
    (folder / "zorblax.md").write_text(THROUGHOUT, encoding="utf-8")
    await ingest_paths(config, [folder], "docs")
    store = get_store(KBSettings.from_config(config), config.home)
    docs: dict[str, Hit] = {}
    for rec in scroll_all(store, "docs"):
        docs[Path(str(rec.payload["source"])).name] = Hit(rec.id, 1.0, rec.payload)
    (word,) = _words("Zorblax", BM25())
    (none,) = _words("Quuxmorph", BM25())
    assert FOREIGN.page == 3  # the default: at least three chunks
    spoken = _Spoken(store, "docs")
    assert spoken.elsewhere(docs["zorblax.md"], word.terms)  # named in all three
    assert not spoken.elsewhere(docs["install.md"], word.terms)  # named in one
    assert not spoken.elsewhere(docs["zorblax.md"], none.terms)
    monkeypatch.setattr(_foreign, "FOREIGN", replace(FOREIGN, page=0))
    assert not _Spoken(store, "docs").elsewhere(docs["zorblax.md"], word.terms)
