"""Each document's best chunk comes before further chunks of documents already listed
(``kb.diversity``, :func:`agent_search.kb._retrieval._hits.diversified`): three chunks of
one long page no longer fill the first three places when another page also matches."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_search import Request, SearchConfig, Searcher
from agent_search.kb import create_handler, ingest_paths
from agent_search.kb._retrieval._hits import Hit, diversified


def _hit(doc: str, n: int, score: float, own: float | None = None) -> Hit:
    return Hit(f"{doc}{n}", score, {"document_id": doc}, own=own)


def _docs(hits: list[Hit]) -> list[str]:
    return [h.point_id for h in hits]


RANKED = [_hit("a", 1, 0.9), _hit("a", 2, 0.8), _hit("a", 3, 0.7), _hit("b", 1, 0.6),
          _hit("c", 1, 0.2)]


def test_off_keeps_the_ranking() -> None:
    assert _docs(diversified(RANKED, 0.0, 4)) == ["a1", "a2", "a3", "b1"]


def test_each_documents_best_chunk_comes_first_when_it_scores_near_enough() -> None:
    # b1 (0.6) is within 1 - 0.5 of a2 (0.8); c1 (0.2) is not within it of a2 or a3
    assert _docs(diversified(RANKED, 0.5, 5)) == ["a1", "b1", "a2", "a3", "c1"]
    # diversity 1: every document's best chunk first, whatever its score
    assert _docs(diversified(RANKED, 1.0, 5)) == ["a1", "b1", "c1", "a2", "a3"]
    # a chunk far below stays where it was
    assert _docs(diversified(RANKED, 0.1, 5)) == _docs(RANKED)


def test_scores_follow_the_new_order_and_a_chunk_that_gave_way_keeps_its_share() -> None:
    for diversity in (0.3, 0.5, 0.7, 1.0):
        out = diversified(RANKED, diversity, 5)
        scores = [h.score for h in out]
        assert scores == sorted(scores, reverse=True)  # the handler sorts by score
        assert out[0].score == RANKED[0].score  # the first hit and its score never move
        before = {h.point_id: h.score for h in RANKED}
        for h in out:
            assert h.score >= (1.0 - diversity) * before[h.point_id] - 1e-12


def test_a_hit_capped_by_one_ranked_above_gets_its_own_evidence_back() -> None:
    # b1's own evidence is 0.7; it was capped at 0.3 under a2, which gives way to it
    ranked = [_hit("a", 1, 0.9), _hit("a", 2, 0.3, own=0.3), _hit("b", 1, 0.3, own=0.7)]
    out = diversified(ranked, 0.5, 3)
    assert _docs(out) == ["a1", "b1", "a2"]
    assert [h.score for h in out] == [0.9, 0.7, 0.3]


def test_the_limit_cuts_after_reordering() -> None:
    assert _docs(diversified(RANKED, 1.0, 3)) == ["a1", "b1", "c1"]
    assert diversified([], 1.0, 3) == []


def test_a_chunk_without_a_document_id_counts_by_its_source() -> None:
    ranked = [Hit("x1", 0.9, {"source": "x.md"}), Hit("x2", 0.8, {"source": "x.md"}),
              Hit("y1", 0.7, {"source": "y.md"})]
    assert _docs(diversified(ranked, 1.0, 3)) == ["x1", "y1", "x2"]


# written for this test: a long page on backups in three sections, and a short one
LONG = "\n\n".join([
    "# Backups\n\nBack up the database every night. " + "A nightly backup copies every "
    "table to a dump file, so a lost disk costs at most one day of data. " * 6,
    "## Restoring a backup\n\nRestore a backup by loading the dump file into an empty "
    "database. " + "The restore replays every table of the backup in order. " * 6,
    "## Backup retention\n\nKeep seven nightly backups and four weekly ones. "
    + "Older backup files are deleted by the retention job. " * 6,
    "## Checking a backup\n\nCheck each nightly backup of the database by restoring it "
    "on a test server. " + "A backup that was never restored is not known to work. " * 6,
])
SHORT = ("# Offsite copies\n\nCopy the dump files to a second site, so a fire in the "
         "server room does not take them with it.")
QUESTION = "How do I back up the database every night and keep the backup files?"


async def _sources(config: SearchConfig, diversity: float) -> list[str]:
    config = config.merged({"kb": {"diversity": diversity},
                            "options": {"timeout": 300, "deadline": 300}})
    searcher = Searcher(config, handlers=[create_handler(config)])
    try:
        result = await searcher.search(Request(type="kb", query=QUESTION, limit=3,
                                               collections=["ops"], min_score=0.0))
    finally:
        await searcher.aclose()
    assert result.error is None
    return [Path(str(i.metadata["source"])).name for i in result.items]


@pytest.mark.anyio
async def test_a_long_page_does_not_fill_the_first_places(config: SearchConfig,
                                                         tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "backups.md").write_text(LONG, encoding="utf-8")
    (folder / "offsite.md").write_text(SHORT, encoding="utf-8")
    await ingest_paths(config, [folder], "ops")
    # as ranked, the long page's three sections come first
    assert await _sources(config, 0.0) == ["backups.md"] * 3
    # each page's best chunk first: the short page is among the first three
    kept = await _sources(config, 1.0)
    assert kept[0] == "backups.md" and "offsite.md" in kept
    assert kept.count("backups.md") == 2
