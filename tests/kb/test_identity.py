"""Idempotent ingest (a document is its canonical source, however the path is written) and
the evaluation's collections kept apart from every default search (issue 12 item 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import agent_search.cli  # noqa: F401  (registers the sub-commands)
from agent_search import Context, Request, SearchConfig
from agent_search.cli.app import app
from agent_search.kb import create_handler, ingest_paths, list_collections, prune_eval_collections
from agent_search.kb._ingest import legacy_file_doc_id
from agent_search.kb._store import ID_SCHEME, PointData, SparseVec, get_store, point_id, scroll_all
from agent_search.kb._store import _schema as ingest_module
from agent_search.kb.settings import KBSettings

runner = CliRunner()


@pytest.fixture
def project(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The project folder (the data home's parent) as the working directory, with
    ``docs/`` (two notes) and ``README.md``."""
    root = home.parent
    (root / "docs").mkdir()
    (root / "docs" / "bees.md").write_text(
        "# Bees\n\nHoney bees dance to show where the flowers are.\n")
    (root / "docs" / "pasta.txt").write_text(
        "Cooking pasta\n\nBoil salted water and cook the spaghetti al dente.\n")
    (root / "README.md").write_text("# Project\n\nThis project searches documents.\n")
    monkeypatch.chdir(root)
    monkeypatch.setenv("AGENT_SEARCH_HOME", str(home))
    return root


async def _points(config: SearchConfig, name: str) -> int:
    return int({r["name"]: r["points"] for r in await list_collections(config)}[name])


@pytest.mark.anyio
async def test_three_path_forms_are_one_document(config: SearchConfig, project: Path) -> None:
    first = await ingest_paths(config, ["README.md"], "docs")
    assert (first.added, first.updated, first.unchanged, first.removed) == (1, 0, 0, 0)
    for form in ("./README.md", str(project / "README.md"), "docs/../README.md"):
        again = await ingest_paths(config, [form], "docs")
        assert (again.added, again.updated, again.unchanged, again.removed) == (0, 0, 1, 0), form
    assert await _points(config, "docs") == 1
    hit = (await create_handler(config).search(
        Context(config=config), Request(type="kb", query="project searches", limit=1))).items[0]
    assert hit.metadata["source"] == "README.md"  # the canonical source, not the typed path


@pytest.mark.anyio
async def test_a_folder_then_folder_and_file_never_duplicates(config: SearchConfig,
                                                               project: Path) -> None:
    first = await ingest_paths(config, ["docs/"], "docs")
    assert first.documents == 2 and first.added == first.chunks
    both = await ingest_paths(config, ["docs/", "README.md", "./docs/bees.md"], "docs")
    assert both.files == 3  # docs/bees.md given twice is read once
    assert (both.added, both.unchanged, both.updated, both.removed) == (1, first.chunks, 0, 0)
    assert await _points(config, "docs") == first.chunks + 1


@pytest.mark.anyio
async def test_report_counts_added_updated_unchanged_removed(config: SearchConfig,
                                                              project: Path) -> None:
    notes = project / "notes.md"
    notes.write_text("# Notes\n\nAlpha paragraph about ants.\n\n## Two\n\nBeta about bats.\n"
                     "\n## Three\n\nGamma about cats.\n")
    first = await ingest_paths(config, [notes], "n")
    assert (first.added, first.chunks) == (3, 3)
    notes.write_text("# Notes\n\nAlpha paragraph about ants.\n\n## Two\n\nBeta about owls.\n")
    second = await ingest_paths(config, [notes], "n")
    assert (second.added, second.updated, second.unchanged, second.removed) == (0, 1, 1, 1)
    assert await _points(config, "n") == 2


def test_cli_reports_the_counts(project: Path) -> None:
    (project / "notes.md").write_text("# Notes\n\nAlpha.\n\n## Two\n\nBeta.\n")
    out = runner.invoke(app, ["kb", "ingest", "notes.md", "-c", "n", "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert {k: report[k] for k in ("added", "updated", "unchanged", "removed")} == {
        "added": 2, "updated": 0, "unchanged": 0, "removed": 0}
    human = runner.invoke(app, ["kb", "ingest", "./notes.md", "-c", "n"])
    assert "chunks added 0, updated 0, unchanged 2, removed 0" in " ".join(human.stdout.split())


@pytest.mark.anyio
async def test_points_of_the_old_id_scheme_are_replaced_not_duplicated(
        config: SearchConfig, project: Path) -> None:
    """A collection written before source keys (ids from the path as typed, document id a
    hash of the absolute path, no ``id_scheme``) and doubled the way issue 12 found it
    (``docs/`` then the absolute path) is re-keyed on the next ingest: one copy left."""
    report = await ingest_paths(config, ["docs/"], "old")
    store = get_store(KBSettings(), config.home)
    records = list(scroll_all(store, "old", vectors=True))
    store.delete("old", [r.id for r in records])
    legacy = []
    for r in records:
        for typed in (r.payload["source"], str(project / r.payload["source"])):  # type: ignore[index]
            payload = dict(r.payload or {})
            payload.pop("id_scheme")
            payload["source"] = payload["meta"]["source"] = typed
            payload["document_id"] = legacy_file_doc_id(Path(typed))
            legacy.append(PointData(
                point_id("old", typed, payload["document_id"], payload["chunk_index"]),
                r.dense or [], r.sparse or SparseVec([], []), payload))
    store.upsert("old", legacy)
    # metadata updates merge keys: mark the collection as older than the source keys
    store.update_meta("old", {**store.info("old").meta, "id_scheme": 1})
    assert await _points(config, "old") == 2 * report.chunks

    again = await ingest_paths(config, ["./docs"], "old")
    assert again.removed == 2 * report.chunks and again.added == report.chunks
    assert await _points(config, "old") == report.chunks
    assert store.info("old").meta["id_scheme"] == ID_SCHEME
    third = await ingest_paths(config, [project / "docs"], "old")
    assert third.unchanged == report.chunks and third.removed == 0


def _ids(config: SearchConfig, name: str) -> list[str]:
    return [r.id for r in scroll_all(get_store(KBSettings(), config.home), name,
                                     payload=False)]


@pytest.mark.anyio
async def test_new_collections_use_integer_point_ids(config: SearchConfig,
                                                     project: Path) -> None:
    """Integer ids (cheaper to search than UUIDs), recorded in the collection's metadata
    and derived from the same identity: a re-ingest finds every chunk unchanged."""
    first = await ingest_paths(config, ["docs/"], "ints")
    ids = _ids(config, "ints")
    assert len(ids) == first.chunks > 0
    assert all(i.isdecimal() and 0 <= int(i) < 2 ** 63 for i in ids), ids
    assert get_store(KBSettings(), config.home).info("ints").meta["point_ids"] == "u64"
    again = await ingest_paths(config, ["./docs"], "ints")
    assert (again.added, again.unchanged) == (0, first.chunks)
    assert sorted(_ids(config, "ints")) == sorted(ids)
    result = await create_handler(config).search(
        Context(config=config), Request(type="kb", query="honey bees dance", limit=1))
    assert result.error is None and result.items[0].metadata["source"] == "docs/bees.md"


@pytest.mark.anyio
async def test_a_collection_with_uuid_ids_keeps_them_and_never_duplicates(
        config: SearchConfig, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A collection written before integer ids (UUIDs, no ``point_ids`` in its metadata)
    is searched and re-ingested with UUIDs: edits overwrite, nothing is doubled."""
    with monkeypatch.context() as patch:
        patch.setattr(ingest_module, "POINT_IDS", "uuid")
        first = await ingest_paths(config, ["docs/"], "uuids")
    store = get_store(KBSettings(), config.home)
    meta = dict(store.info("uuids").meta)
    del meta["point_ids"]  # as the older versions wrote it
    store.update_meta("uuids", meta)
    old = _ids(config, "uuids")
    assert len(old) == first.chunks and all(len(i) == 36 and i.count("-") == 4 for i in old)

    again = await ingest_paths(config, ["docs/"], "uuids")
    assert (again.added, again.updated, again.unchanged) == (0, 0, first.chunks)
    (project / "docs" / "bees.md").write_text("# Bees\n\nBumble bees hum in the clover.\n")
    (project / "docs" / "ants.md").write_text("# Ants\n\nAnts farm aphids for honeydew.\n")
    edited = await ingest_paths(config, ["docs/"], "uuids")
    assert (edited.added, edited.updated, edited.removed) == (1, 1, 0)
    ids = _ids(config, "uuids")
    assert len(ids) == first.chunks + 1 and set(old) <= set(ids)
    assert all(len(i) == 36 for i in ids) and "point_ids" not in store.info("uuids").meta
    handler = create_handler(config)
    for query, source in (("bumble bees clover", "docs/bees.md"),
                          ("ants aphids honeydew", "docs/ants.md")):
        result = await handler.search(Context(config=config),
                                      Request(type="kb", query=query, collections=["uuids"],
                                              limit=1))
        assert result.error is None and result.items[0].metadata["source"] == source


@pytest.mark.anyio
async def test_eval_collections_are_invisible_to_default_searches(
        config: SearchConfig, project: Path) -> None:
    from agent_search import Searcher
    from agent_search.mcp.server import SearchTools

    paper = project / "paper.md"
    paper.write_text("# Citations\n\nHow are citations fenced? In the evaluation corpus.\n")
    await ingest_paths(config, ["README.md"], "docs")
    await ingest_paths(config, [paper], "eval-0123abcd", evaluation=True)
    with pytest.raises(ValueError, match="reserved"):
        await ingest_paths(config, [paper], "eval-mine")

    query = Request(type="kb", query="how are citations fenced", limit=10)
    default = await create_handler(config).search(Context(config=config), query)
    assert default.error is None and {i.collection for i in default.items} == {"docs"}
    named = await create_handler(config).search(Context(config=config), query.model_copy(
        update={"collections": ["eval-0123abcd"]}))
    assert named.items == [] and "not found" in (named.error or "")
    mcp = SearchTools(Searcher.from_config(None, overrides={"home": str(config.home)}))
    for collections in (None, ["eval-0123abcd"], ["EVAL-0123abcd"]):
        answer = await mcp.kb_search("how are citations fenced", collections=collections)
        assert all(i["collection"] == "docs" for i in answer["items"]), collections

    rows = {r["name"]: r["evaluation"] for r in await list_collections(config)}
    assert rows == {"docs": False, "eval-0123abcd": True}
    assert await prune_eval_collections(config) == ["eval-0123abcd"]
    assert [r["name"] for r in await list_collections(config)] == ["docs"]


def test_cli_lists_eval_collections_apart_and_prunes_them(config: SearchConfig,
                                                          project: Path) -> None:
    import anyio

    anyio.run(lambda: ingest_paths(config, ["README.md"], "docs"))
    anyio.run(lambda: ingest_paths(config, ["README.md"], "eval-0123abcd", evaluation=True))
    listed = runner.invoke(app, ["kb", "list"])
    own, _, evals = listed.stdout.partition("evaluation collections")
    assert "docs" in own and "eval-0123abcd" not in own and "eval-0123abcd" in evals
    pruned = runner.invoke(app, ["kb", "prune-evals", "--json"])
    assert json.loads(pruned.stdout) == {"dropped": ["eval-0123abcd"]}
    assert "evaluation" not in runner.invoke(app, ["kb", "list"]).stdout
