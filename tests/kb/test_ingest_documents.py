"""Documents come and go (issue 24 item 2): a folder ingest mirrors the folder, one
document can be removed by path or id, a collection lists its documents, and the result
table names the file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import agent_search.cli  # noqa: F401  (registers the sub-commands)
from agent_search import SearchConfig
from agent_search.cli.app import app
from agent_search.cli.search import _kb_where
from agent_search.kb import (
    Access,
    CollectionNotFound,
    KBSettings,
    ingest_paths,
    ingest_texts,
    list_documents,
    remove_document,
)
from agent_search.kb._store import get_store, scroll_all
from agent_search.types import ResultItem

runner = CliRunner()


def _sources(config: SearchConfig, collection: str) -> dict[str, set[str | None]]:
    """Source → the owners of its chunks."""
    store = get_store(KBSettings.from_config(config), config.home)
    out: dict[str, set[str | None]] = {}
    for record in scroll_all(store, collection):
        out.setdefault(record.payload["source"], set()).add(record.payload["acl_owner"])
    return out


@pytest.mark.anyio
async def test_a_folder_ingest_removes_the_documents_whose_file_is_gone(
        config: SearchConfig, docs: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("A note that lives outside the folder, about owls.\n")
    await ingest_paths(config, [docs, outside], "notes")
    pasta_chunks = sum(1 for s in _sources_list(config) if s == "docs/pasta.txt")
    (docs / "pasta.txt").unlink()
    (docs / "bees.html").unlink()

    kept = await ingest_paths(config, [docs], "notes", mirror=False)
    assert kept.missing == [] and kept.removed == 0
    assert "docs/pasta.txt" in _sources(config, "notes")

    report = await ingest_paths(config, [docs], "notes")
    assert sorted(report.missing) == ["docs/bees.html", "docs/pasta.txt"]
    assert report.removed >= pasta_chunks + 1
    assert report.to_json()["missing"] == report.missing
    assert set(_sources(config, "notes")) == {"docs/qdrant.md", "elsewhere.txt"}


def _sources_list(config: SearchConfig) -> list[str]:
    store = get_store(KBSettings.from_config(config), config.home)
    return [r.payload["source"] for r in scroll_all(store, "notes")]


@pytest.mark.anyio
async def test_mirroring_removes_only_the_ingesting_owners_documents(
        config: SearchConfig, docs: Path) -> None:
    await ingest_paths(config, [docs], "mixed", access=Access.of("alice"))
    await ingest_paths(config, [docs], "mixed")
    (docs / "pasta.txt").unlink()
    report = await ingest_paths(config, [docs], "mixed")  # public: removes the public one
    assert report.missing == ["docs/pasta.txt"]
    assert _sources(config, "mixed")["docs/pasta.txt"] == {"alice"}


@pytest.mark.anyio
async def test_remove_one_document_by_path_source_or_id(
        config: SearchConfig, docs: Path) -> None:
    await ingest_paths(config, [docs], "notes")
    listed = await list_documents(config, "notes")
    assert [d["source"] for d in listed] == ["docs/bees.html", "docs/pasta.txt",
                                             "docs/qdrant.md"]
    assert all(d["share"] == "public" and d["chunks"] >= 1 for d in listed)

    (docs / "pasta.txt").unlink()  # a file already gone is named by its path all the same
    removed = await remove_document(config, "notes", str(docs / "pasta.txt"))
    assert [d["source"] for d in removed] == ["docs/pasta.txt"]
    removed = await remove_document(config, "notes", "docs/bees.html")
    assert [d["source"] for d in removed] == ["docs/bees.html"]
    qdrant = next(d for d in listed if d["source"] == "docs/qdrant.md")
    assert await remove_document(config, "notes", "no-such-doc") == []
    assert set(_sources(config, "notes")) == {"docs/qdrant.md"}
    removed = await remove_document(config, "notes", qdrant["document_id"])
    assert [d["chunks"] for d in removed] == [qdrant["chunks"]]
    assert _sources(config, "notes") == {}
    with pytest.raises(CollectionNotFound):
        await remove_document(config, "nope", "docs/qdrant.md")


@pytest.mark.anyio
async def test_removal_with_an_identity_touches_only_its_documents(
        config: SearchConfig, docs: Path) -> None:
    await ingest_paths(config, [docs / "pasta.txt"], "mixed", access=Access.of("alice"))
    await ingest_paths(config, [docs / "pasta.txt"], "mixed", access=Access.of("bob"))
    assert await remove_document(config, "mixed", "docs/pasta.txt",
                                 access=Access.of("carol")) == []
    removed = await remove_document(config, "mixed", "docs/pasta.txt", access=Access.of("bob"))
    assert [d["owner"] for d in removed] == ["bob"]
    assert _sources(config, "mixed") == {"docs/pasta.txt": {"alice"}}


def test_cli_list_rm_and_keep_missing(home: Path, docs: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_SEARCH_HOME", str(home))
    out = runner.invoke(app, ["kb", "ingest", str(docs), "-c", "notes", "--json"])
    assert out.exit_code == 0, out.output
    listed = json.loads(runner.invoke(app, ["kb", "list", "notes", "--json"]).stdout)
    assert [d["source"] for d in listed] == ["docs/bees.html", "docs/pasta.txt",
                                             "docs/qdrant.md"]
    plain = runner.invoke(app, ["kb", "list", "notes"]).stdout
    assert re.search(r"^docs/pasta\.txt\s+1 chunk\s+public\s+[0-9a-f]{16}$", plain, re.M)

    (docs / "pasta.txt").unlink()
    kept = runner.invoke(app, ["kb", "ingest", str(docs), "-c", "notes", "--keep-missing"])
    assert kept.exit_code == 0 and "is gone" not in kept.stdout
    mirrored = runner.invoke(app, ["kb", "ingest", str(docs), "-c", "notes"])
    assert "removed docs/pasta.txt: the file is gone" in mirrored.stdout

    gone = runner.invoke(app, ["kb", "rm", str(docs / "bees.html"), "-c", "notes", "--json"])
    assert gone.exit_code == 0, gone.output
    assert [d["source"] for d in json.loads(gone.stdout)["removed"]] == ["docs/bees.html"]
    again = runner.invoke(app, ["kb", "rm", str(docs / "bees.html"), "-c", "notes"])
    assert again.exit_code == 2 and "no document" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1
    missing = runner.invoke(app, ["kb", "list", "nope"])
    assert missing.exit_code == 2 and "collection 'nope' not found" in missing.stderr


def test_the_result_table_names_the_file_not_a_hash() -> None:
    item = ResultItem(type="kb", collection="notes", document_id="3f2a9c0d11aa44bb",
                      metadata={"source": "docs/guide.pdf", "page": 4})
    assert _kb_where(item) == "notes: docs/guide.pdf p. 4"
    beir = ResultItem(type="kb", collection="sci", document_id="4983",
                      metadata={"source": "data/corpus.jsonl"})
    assert _kb_where(beir) == "sci: data/corpus.jsonl #4983"


@pytest.mark.anyio
async def test_mirroring_the_source_root_keeps_documents_sent_as_text(
        config: SearchConfig, docs: Path) -> None:
    rooted = config.merged({"kb": {"source_root": str(docs)}})
    sent = await ingest_texts(rooted, "notes", [("memo.md", "# Memo\n\nCall the vet.\n")])
    assert sent.documents == 1 and sent.skipped == []
    report = await ingest_paths(rooted, [docs], "notes")  # the root itself: prefix ""
    assert report.missing == []
    assert set(_sources(rooted, "notes")) == {"upload:memo.md", "bees.html", "pasta.txt",
                                              "qdrant.md"}
    (docs / "pasta.txt").unlink()
    report = await ingest_paths(rooted, [docs], "notes")
    assert report.missing == ["pasta.txt"]
    with pytest.raises(ValueError, match="relative path"):
        await ingest_texts(rooted, "notes", [("../memo.md", "x")])
