"""``eval retrieval --ignore-self``: a hit whose document id is the query's id is dropped
(ArguAna's queries are documents of its corpus; BEIR's evaluation drops them too)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import agent_search.cli  # noqa: F401  (registers the sub-commands)
from agent_search import SearchConfig
from agent_search.cli.app import app
from agent_search.kb.evaluation import evaluate

ARGUMENT = ("Zoos protect endangered species: breeding programmes in zoos have saved the "
            "Arabian oryx and the California condor from extinction.")
COUNTER = ("Zoos do little for endangered species: most animals kept in zoos are not "
           "endangered, and breeding programmes rarely return animals to the wild.")


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    docs = [{"_id": "arg-pro", "title": "", "text": ARGUMENT},
            {"_id": "arg-con", "title": "", "text": COUNTER},
            {"_id": "other", "title": "", "text": "Tomatoes grow best in full sun."}]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "arg-pro", "text": ARGUMENT})
                                          + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\narg-pro\targ-con\t1\n")
    return folder


@pytest.mark.anyio
async def test_the_query_s_own_document_is_dropped_when_asked(config: SearchConfig,
                                                              tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    kept = await evaluate(config, folder)
    dropped = await evaluate(config, folder, ignore_self=True)
    assert kept.mrr_at_10 == pytest.approx(0.5)  # the query itself ranks first
    assert dropped.mrr_at_10 == pytest.approx(1.0)


def test_the_cli_takes_ignore_self(home: Path, tmp_path: Path) -> None:
    out = CliRunner().invoke(app, ["eval", "retrieval", str(_folder(tmp_path)),
                                   "--ignore-self", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["mrr@10"] == pytest.approx(1.0)
