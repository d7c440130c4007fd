"""A data home made by Qdrant's local mode is detected and migrated without loss or
re-embedding; a real ``kb ingest`` killed mid-write leaves a store that opens and a
re-ingest that completes without duplicates."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

import agent_search.cli  # noqa: F401  (registers the sub-commands)
from agent_search import Context, Request, SearchConfig
from agent_search.cli.app import app
from agent_search.kb import close_stores, create_handler, ingest_paths, list_collections
from agent_search.kb._store import (
    ACL_OWNER,
    ACL_SHARE,
    ACL_TEAM,
    PointData,
    edge_root,
    get_store,
    scroll_all,
)
from agent_search.kb._store._server import ServerStore
from agent_search.kb.settings import KBSettings

runner = CliRunner()


def _legacy_home(source_home: Path, target: Path) -> dict[str, dict[str, object]]:
    """``target`` holding, in local mode (``qdrant/``), the collections of ``source_home``
    as an earlier version wrote them (no access record); returns the points by id."""
    from qdrant_client import QdrantClient

    target.mkdir()
    (target / "models").symlink_to((source_home / "models").resolve(),
                                   target_is_directory=True)
    edge = get_store(KBSettings(), source_home)
    legacy = ServerStore(QdrantClient(path=str(target / "qdrant")), location="old", local=True)
    points: dict[str, dict[str, object]] = {}
    for name in edge.collections():
        info = edge.info(name)
        legacy.create(name, int(info.meta["dimensions"]), info.meta, {})
        records = list(scroll_all(edge, name, vectors=True))
        for r in records:
            for key in (ACL_OWNER, ACL_TEAM, ACL_SHARE):
                r.payload.pop(key)
            points[r.id] = {"payload": r.payload, "dense": r.dense, "sparse": r.sparse}
        legacy.upsert(name, [PointData(r.id, r.dense or [], r.sparse, r.payload)  # type: ignore[arg-type]
                             for r in records])
    legacy.close()
    close_stores()
    return points


def test_a_local_mode_home_is_migrated_without_loss(home: Path, docs: Path,
                                                    tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    config = SearchConfig(home=home)
    first = anyio.run(lambda: ingest_paths(config, [docs], "docs"))
    anyio.run(lambda: ingest_paths(config, [docs / "bees.html"], "bees"))
    old_home = tmp_path / "old-home"
    before = _legacy_home(home, old_home)
    old = SearchConfig(home=old_home)

    # detected: one clear line naming the command, from a search and from the CLI
    result = anyio.run(lambda: create_handler(old).search(
        Context(config=old), Request(type="kb", query="honey bees")))
    assert result.error is not None and "agent-search kb migrate" in result.error
    assert "\n" not in result.error
    monkeypatch.setenv("AGENT_SEARCH_HOME", str(old_home))
    listed = runner.invoke(app, ["kb", "list"])
    assert listed.exit_code == 1 and "agent-search kb migrate" in listed.output

    migrated = runner.invoke(app, ["kb", "migrate", "--json"])
    assert migrated.exit_code == 0, migrated.output
    report = json.loads(migrated.stdout)
    assert report["collections"]["docs"] == first.chunks
    assert sum(report["collections"].values()) == len(before)
    assert Path(report["backup"]).is_dir() and not (old_home / "qdrant").exists()

    store = get_store(KBSettings(), old_home)
    after = {r.id: r for name in ("docs", "bees") for r in scroll_all(store, name,
                                                                      vectors=True)}
    assert set(after) == set(before)
    for pid, was in before.items():
        now = after[pid]
        assert now.dense == pytest.approx(was["dense"], abs=1e-6)  # copied, not re-embedded
        assert now.sparse == was["sparse"]
        assert {k: v for k, v in now.payload.items() if not k.startswith("acl_")} \
            == was["payload"]
        assert now.payload[ACL_SHARE] == "public"  # readable by all, as before
    found = anyio.run(lambda: create_handler(old).search(
        Context(config=old), Request(type="kb", query="waggle dance of honey bees")))
    assert found.error is None and found.items[0].metadata["source"].endswith("bees.html")
    assert {i.collection for i in found.items} == {"docs", "bees"}
    again = anyio.run(lambda: ingest_paths(old, [docs], "docs"))
    assert again.unchanged == first.chunks and again.added == again.removed == 0
    assert runner.invoke(app, ["kb", "migrate"]).output.strip() == "nothing to migrate"


def test_a_killed_ingest_leaves_a_store_that_opens_and_reingests_cleanly(
        home: Path, tmp_path: Path) -> None:
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    (config_dir / "search.yao").write_text(json.dumps(
        {"kb": {"chunk_tokens": 32, "chunk_overlap": 0}}))
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "seed.md").write_text("# Seed\n\nThe first note.\n")
    for i in range(24):
        (notes / f"n{i:02}.md").write_text("\n\n".join(
            f"Note {i} paragraph {j}: the colony of honey bees number {i * 100 + j} "
            f"forages for nectar far from the hive in spring." for j in range(25)))
    config = SearchConfig(home=home, kb={"chunk_tokens": 32, "chunk_overlap": 0})
    seed = anyio.run(lambda: ingest_paths(config, [notes / "seed.md"], "notes"))
    assert seed.added == 1
    close_stores()

    env = {**os.environ, "AGENT_SEARCH_HOME": str(home),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    ingest = subprocess.Popen(
        [sys.executable, "-m", "agent_search", "kb", "ingest", str(notes), "-c", "notes",
         "--config", str(config_dir)], env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    stats_dir = edge_root(home) / "notes" / "stats"
    deadline = time.monotonic() + 120
    while not any(stats_dir.glob("writing-*")) and ingest.poll() is None \
            and time.monotonic() < deadline:
        time.sleep(0.01)
    ingest.send_signal(signal.SIGKILL)
    assert ingest.wait(timeout=30) == -signal.SIGKILL  # killed mid-ingest, not finished

    store = get_store(KBSettings(), home)  # the store opens
    torn = store.count("notes")
    assert torn >= 1
    report = anyio.run(lambda: ingest_paths(config, [notes], "notes"))
    total = report.chunks
    assert torn < total  # the kill came before the ingest had written everything
    assert report.added + report.unchanged == total and report.removed == 0
    assert store.count("notes") == total  # every chunk once
    keys = [(r.payload["source"], r.payload["chunk_index"])
            for r in scroll_all(store, "notes", payload=["source", "chunk_index"])]
    assert len(keys) == len(set(keys)) == total
    stats = store.stats("notes")  # the statistics were recomputed, not left torn
    assert stats is not None and stats.points == total
    assert not any(stats_dir.glob("writing-*"))
    rows = {r["name"]: r["points"] for r in anyio.run(lambda: list_collections(config))}
    assert rows == {"notes": total}
