"""The ``kb`` and ``eval retrieval`` commands, and a CI-sized retrieval evaluation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import agent_search.cli  # noqa: F401  (registers the sub-commands)
from agent_search import SearchConfig
from agent_search.cli.app import app
from agent_search.kb.evaluation import DatasetError, evaluate, load_dataset, ndcg_at

from ..support.data import KB_SAMPLE

runner = CliRunner()


def test_kb_ingest_list_drop_json(home: Path, docs: Path) -> None:
    out = runner.invoke(app, ["kb", "ingest", str(docs), "--collection", "notes", "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["documents"] == 3 and report["chunks"] >= 5 and report["skipped"] == []
    listed = json.loads(runner.invoke(app, ["kb", "list", "--json"]).stdout)
    assert [(r["name"], r["points"]) for r in listed] == [("notes", report["chunks"])]
    dropped = runner.invoke(app, ["kb", "drop", "notes", "--json"])
    assert json.loads(dropped.stdout) == {"dropped": "notes"}
    again = runner.invoke(app, ["kb", "drop", "notes"])
    assert again.exit_code == 2 and "collection 'notes' not found" in again.stderr


def test_kb_ingest_bad_input(home: Path, docs: Path) -> None:
    missing = runner.invoke(app, ["kb", "ingest", str(docs / "nope.md"), "-c", "x"])
    assert missing.exit_code == 2 and "no such file" in missing.stderr
    bad_name = runner.invoke(app, ["kb", "ingest", str(docs), "-c", "a/b"])
    assert bad_name.exit_code == 2 and "invalid collection name" in bad_name.stderr
    assert len(bad_name.stderr.strip().splitlines()) == 1


def test_eval_bad_input(home: Path, tmp_path: Path) -> None:
    out = runner.invoke(app, ["eval", "retrieval", str(tmp_path), "--json"])
    assert out.exit_code == 2 and "corpus.jsonl not found" in out.stderr
    out = runner.invoke(app, ["eval", "retrieval", str(KB_SAMPLE), "--mode", "fuzzy"])
    assert out.exit_code == 2 and "fuzzy" in out.stderr
    out = runner.invoke(app, ["eval", "retrieval", str(KB_SAMPLE), "--split", "dev"])
    assert out.exit_code == 2 and "dev.tsv not found" in out.stderr
    with pytest.raises(DatasetError):
        load_dataset(tmp_path)


def test_ndcg() -> None:
    assert ndcg_at(["a", "b"], {"a": 1}, 10) == 1.0
    assert ndcg_at(["b", "a"], {"a": 1}, 10) == pytest.approx(1 / 1.5849625)
    assert ndcg_at(["b"], {"a": 1}, 10) == 0.0


@pytest.mark.anyio
async def test_eval_on_a_subset_of_the_sample_set(home: Path) -> None:
    """CI-sized: 15 questions over their relevant passages plus others, 45 of the sample's
    60 (each question's two same-subject neighbours among them)."""
    config = SearchConfig(home=home, kb={"chunk_tokens": 512})
    first = await evaluate(config, KB_SAMPLE, mode="hybrid", max_queries=15, max_docs=45)
    assert first.ingest is not None and first.ingest.documents == 45
    assert first.queries == 15
    assert first.ndcg_at_10 > 0.9 and first.recall_at_100 > 0.9
    again = await evaluate(config, KB_SAMPLE, mode="sparse", max_queries=15, max_docs=45)
    assert again.ingest is None  # the ingested corpus is reused
    assert again.collection == first.collection and again.ndcg_at_10 > 0.8
    dense = await evaluate(config, KB_SAMPLE, mode="dense", max_queries=15, max_docs=45)
    assert dense.ndcg_at_10 > 0.8 and dense.p50_ms > 0


def test_eval_command_json(home: Path) -> None:
    out = runner.invoke(app, ["eval", "retrieval", str(KB_SAMPLE), "--max-queries", "5",
                              "--max-docs", "30", "--chunk-tokens", "512", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert set(data) == {"ndcg@10", "recall@100", "mrr@10", "queries", "latency_ms"}
    assert data["queries"] == 5 and set(data["latency_ms"]) == {"p50", "p95"}
    assert 0.0 <= data["ndcg@10"] <= 1.0
    # off a terminal the query phase reports too (it was silent), on stderr only
    assert "agent-search: querying: 5 of 5 (100%)" in out.stderr


def test_eval_ingests_beir_records_as_passages_unless_chunking_is_configured() -> None:
    from agent_search.kb.evaluation import PASSAGE_TOKENS, passage_config
    from agent_search.kb.settings import KBSettings

    default = KBSettings.from_config(passage_config(SearchConfig()))
    assert default.chunk_tokens == PASSAGE_TOKENS == 512
    configured = SearchConfig(kb={"chunk_tokens": 128, "chunk_overlap": 16})
    assert KBSettings.from_config(passage_config(configured)).chunk_tokens == 128
