"""One document per file, however it was sent: ``kb ingest DIR -c notes`` and then ``kb
ingest DIR -c notes --server URL`` (which names the folder's files ``DIR/<path>``, as the
local ingest does) left two documents per file, ``DIR/deploy.md`` and
``upload:DIR/deploy.md``; a search returned the same passage twice (refs 1 and 2) and
the merge did not fold them; deleting a file and ingesting the folder again removed the
local copy while the upload stayed searchable. Now a send under one form replaces the
caller's document under the other, a folder mirrored either way removes both forms, and
the merge keeps one copy of a passage."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_search import SearchConfig, Searcher
from agent_search._builtins import register_builtin_handlers
from agent_search._merge import dedupe
from agent_search.kb import Access, ingest_paths, ingest_texts, list_documents, mirror_folder
from agent_search.types import ResultItem

from ..support.kb import linked_home, prepared_model_home

pytestmark = pytest.mark.anyio
FILES = {"deploy.md": "# Deploy\n\nRoll the canary to the eu-west pool before noon.\n",
         "backup.md": "# Backup\n\nSnapshots of the ledger volume run every six hours.\n"}


@pytest.fixture(scope="module")
def model_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return prepared_model_home(tmp_path_factory, "one-doc-model")


@pytest.fixture
def project(tmp_path: Path, model_home: Path,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[SearchConfig, Path]]:
    """A project folder holding the data home (so sources are relative to it) and DIR."""
    for home in linked_home(tmp_path, model_home, monkeypatch):
        folder = tmp_path / "DIR"
        folder.mkdir()
        for name, text in FILES.items():
            (folder / name).write_text(text, encoding="utf-8")
        yield SearchConfig(home=home), folder


async def _sources(config: SearchConfig) -> list[str]:
    return sorted(str(d["source"]) for d in await list_documents(config, "notes"))


async def _send(config: SearchConfig, folder: Path) -> None:
    """What ``kb ingest DIR --server`` sends for the folder (an anonymous caller)."""
    docs = [(f"DIR/{p.name}", p.read_text(encoding="utf-8")) for p in sorted(folder.iterdir())]
    await ingest_texts(config, "notes", docs, access=Access.of())


async def test_a_local_then_a_remote_ingest_is_one_document_per_file(
        project: tuple[SearchConfig, Path]) -> None:
    config, folder = project
    await ingest_paths(config, [folder], "notes")
    assert await _sources(config) == ["DIR/backup.md", "DIR/deploy.md"]
    await _send(config, folder)
    assert await _sources(config) == ["upload:DIR/backup.md", "upload:DIR/deploy.md"]
    searcher = Searcher(config)
    register_builtin_handlers(searcher.registry, config)
    try:
        result = await searcher.search({"type": "kb", "query": "canary eu-west pool",
                                        "collections": ["notes"], "min_score": 0})
    finally:
        await searcher.aclose()
    assert result.error is None
    passages = [i.content for i in result.items]
    assert passages and len(passages) == len(set(passages))
    # and back: the local ingest replaces the uploads
    await ingest_paths(config, [folder], "notes")
    assert await _sources(config) == ["DIR/backup.md", "DIR/deploy.md"]


async def test_a_file_deleted_is_gone_however_the_folder_was_sent(
        project: tuple[SearchConfig, Path]) -> None:
    config, folder = project
    await ingest_paths(config, [folder], "notes")
    await _send(config, folder)
    (folder / "deploy.md").unlink()
    report = await ingest_paths(config, [folder], "notes")  # mirrors the folder
    assert await _sources(config) == ["DIR/backup.md"]
    assert report.missing == ["upload:DIR/deploy.md"]
    # the remote mirror removes a local copy of a file the client no longer has
    (folder / "deploy.md").write_text(FILES["deploy.md"], encoding="utf-8")
    await ingest_paths(config, [folder], "notes")
    removed = await mirror_folder(config, "notes", "DIR", ["backup.md"], access=Access.of())
    assert [d["source"] for d in removed] == ["DIR/deploy.md"]
    assert await _sources(config) == ["DIR/backup.md"]


async def test_another_owners_copy_is_left_alone(project: tuple[SearchConfig, Path]) -> None:
    config, folder = project
    await ingest_paths(config, [folder], "notes", access=Access.of("bob", "t2"))
    await _send(config, folder)  # a public copy: another owner's scope
    docs = await list_documents(config, "notes")
    assert sorted((d["source"], d["owner"]) for d in docs) == [
        ("DIR/backup.md", "bob"), ("DIR/deploy.md", "bob"),
        ("upload:DIR/backup.md", None), ("upload:DIR/deploy.md", None)]


def test_the_merge_folds_identical_passages() -> None:
    text = "Roll the canary to the eu-west pool before noon."
    items = [ResultItem(title="Deploy", content=text, collection="notes", document_id=d,
                        score=0.8, metadata={"chunk_index": 0}) for d in ("a1", "b2")]
    other = ResultItem(title="Deploy", content=text, collection="elsewhere",
                       document_id="c3", score=0.8, metadata={"chunk_index": 0})
    assert len(dedupe([*items, other])) == 2
