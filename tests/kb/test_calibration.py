"""Scores on one absolute scale (issue 12 item 1, kb part): ~0.5 = probably relevant, the
same for a document whether its collection holds one document or many."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agent_search import Context, Request, SearchConfig
from agent_search.kb import create_handler, ingest_paths
from agent_search.kb._retrieval import calibrated_fusion
from agent_search.kb._retrieval._evidence import (
    CALIBRATION,
    calibrated_dense,
    calibrated_fused,
    calibrated_sparse,
    sigmoid,
)
from agent_search.kb.calibrate import fit_logistic

from ..support.data import KB_SAMPLE

pytestmark = pytest.mark.anyio

NOTE = ("# Citations\n\nEvery reference in the answer is fenced: the references block is "
        "escaped and quoted so that its content cannot break out of the prompt.\n")
QUERY = "the references block is escaped and quoted so it cannot break out of the prompt"


async def _score(config: SearchConfig, collection: str, query: str, mode: str) -> float:
    result = await create_handler(config).search(Context(config=config), Request(
        type="kb", query=query, collections=[collection], limit=50,
        options={"mode": mode}))
    assert result.error is None, result.error
    for item in result.items:
        if item.metadata["source"].endswith("note.md"):
            return item.score
    return 0.0


@pytest.mark.parametrize("mode", ["hybrid", "dense", "sparse"])
async def test_a_match_scores_the_same_alone_and_among_many(
        config: SearchConfig, tmp_path: Path, mode: str) -> None:
    note = tmp_path / "note.md"
    note.write_text(NOTE)
    corpus = tmp_path / "corpus.jsonl"
    lines = (KB_SAMPLE / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:60]
    corpus.write_text("\n".join(lines) + "\n")
    await ingest_paths(config, [note], "alone")
    await ingest_paths(config, [note, corpus], "many")
    alone = await _score(config, "alone", QUERY, mode)
    many = await _score(config, "many", QUERY, mode)
    off_topic = await _score(config, "alone", "chocolate cake recipe with berries", mode)
    assert off_topic < 0.2
    if mode == "sparse":
        # BM25's length normalisation is relative to the collection's average chunk
        # length: the short note is "average" alone and short among the abstracts
        assert alone >= 0.3 and many >= 0.3
        return
    assert alone >= 0.5 and many >= 0.5  # a good match is "probably relevant" whatever
    # the collection's size (was 0.000 vs 0.22); what still differs is BM25's length
    # normalisation (relative to the collection's average chunk length, as in sparse mode)
    assert abs(alone - many) < (0.4 if mode == "hybrid" else 0.15)


def test_the_calibration_is_increasing_and_small_collections_borrow_statistics() -> None:
    assert CALIBRATION.dense[1] > 0 and CALIBRATION.sparse[1] > 0 and CALIBRATION.zscore[1] > 0
    assert calibrated_dense(0.2) < calibrated_dense(0.6) < calibrated_dense(0.9) <= 1.0
    assert calibrated_sparse(0.0) == 0.0 < calibrated_sparse(0.1) < calibrated_sparse(0.5)
    assert calibrated_fused(-50.0) < 0.01 and calibrated_fused(50.0) > 0.99
    assert sigmoid(-1e6) == 0.0 and sigmoid(0.0) == 0.5
    one = calibrated_fusion(np.asarray([0.9], np.float32), np.asarray([0.45], np.float32),
                            1, 0.75, 0.25)
    assert calibrated_fused(float(one[0])) > 0.7  # a lone exact match is not "average"
    rng = np.random.default_rng(3)
    dense = rng.normal(0.3, 0.05, 20_000).astype(np.float32)
    coverage = rng.uniform(0, 0.1, 20_000).astype(np.float32)
    big = calibrated_fusion(dense, coverage, 20_000, 0.75, 0.25)
    own = 0.75 * (dense - dense.mean()) / dense.std() + 0.25 * (
        coverage - coverage.mean()) / coverage.std()
    assert np.allclose(big, own, atol=0.05)  # a large collection uses its own statistics


def test_logistic_fit_recovers_a_known_model() -> None:
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, size=(4000, 2))
    p = 1 / (1 + np.exp(-(-0.5 + 3.0 * x[:, 0] + 1.5 * x[:, 1])))
    y = (rng.uniform(size=4000) < p).astype(np.float64)
    w = fit_logistic(x, y)
    assert np.allclose(w, [-0.5, 3.0, 1.5], atol=0.35)
