"""A one-word query for a rare name that one document holds (a surname, a product code,
an identifier) finds that document above the floor: an exact match of a term the
collection holds in one chunk is evidence, not a coincidence of one shared word. A name
the collection lacks, and a question whose other words the passage lacks, still get
nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_search import Request, SearchConfig, Searcher
from agent_search.kb import create_handler, ingest_paths

pytestmark = pytest.mark.anyio

TOPICS = {
    "lists": "A list holds strings in insertion order. Push items on the left and pop "
             "them from the right to use the list as a work queue for workers.",
    "expiry": "Set a time to live on a key and the server deletes the key when the time "
              "is up. The remaining time tells how many seconds a key has left.",
    "replication": "A replica keeps a copy of the primary's data and follows every write. "
                   "Replicas are read-only by default and resync when the link breaks.",
    "snapshots": "The server saves its whole dataset to disk as a snapshot file every few "
                 "minutes, so a restart loads the data back from the file.",
    "security": "Clients authenticate with a user name and a password; each user has a "
                "list of commands and key patterns it may use.",
}
ROTA = ("# On-call\n\nIncidents of the storage cluster are escalated to Priya "
        "Raghunathan, who holds the pager this quarter. Hardware faults are filed under "
        "the asset tag QX7731 with the data-centre team.")


@pytest.fixture
def config(config: SearchConfig) -> SearchConfig:
    return config.merged({"options": {"timeout": 300, "deadline": 300}})


async def _collection(config: SearchConfig, folder: Path) -> Searcher:
    folder.mkdir()
    for copy in range(8):  # several pages per topic: a collection with statistics
        for name, text in TOPICS.items():
            (folder / f"{name}-{copy}.md").write_text(
                f"# {name.title()} {copy}\n\n{text} Page {copy} of the {name} notes.",
                encoding="utf-8")
    (folder / "oncall.md").write_text(ROTA, encoding="utf-8")
    await ingest_paths(config, [folder], "ops")
    return Searcher(config, handlers=[create_handler(config)])


async def _kept(searcher: Searcher, query: str) -> list[str]:
    result = await searcher.search(Request(type="kb", query=query, collections=["ops"]))
    assert result.error is None
    return [str(i.metadata.get("source")) for i in result.items]


async def test_a_rare_name_alone_finds_its_page(config: SearchConfig, tmp_path: Path) -> None:
    searcher = await _collection(config, tmp_path / "notes")
    try:
        for query in ("Raghunathan", "QX7731", "raghunathan"):
            kept = await _kept(searcher, query)
            assert kept and kept[0].endswith("oncall.md"), (query, kept)
        # a name no page holds, and an unrelated question sharing one rare word: nothing
        assert await _kept(searcher, "Okonkwo") == []
        assert await _kept(searcher,
                           "Which quarter is best for planting tulip bulbs in clay?") == []
    finally:
        await searcher.aclose()
