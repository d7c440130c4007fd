"""A collection's documents page by page (issue 33 item 3), on both stores: the pages
together are exactly the whole listing — every document once, its chunks counted, only
what the filter lets through — and a page reads its documents, not the collection."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_search.kb import Access, check_offset, visibility
from agent_search.kb._manage import documents_in, documents_page
from agent_search.kb._store import BASE_INDEXES, Condition, KBStore, PointData, SparseVec, point_id
from agent_search.kb._store._edge import EdgeStore
from agent_search.kb._store._server import ServerStore


@pytest.fixture(params=["edge", "server"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KBStore]:
    from qdrant_client import QdrantClient

    s: KBStore = (EdgeStore(tmp_path / "edge") if request.param == "edge" else
                  ServerStore(QdrantClient(location=":memory:"), location="memory",
                              local=True))
    s.create("c", 3, {"dimensions": 3}, BASE_INDEXES)
    points = []
    for d in range(23):
        access = (Access.of() if d % 3 == 0 else Access.of("u1", "t1") if d % 3 == 1
                  else Access.of("u2", "t2", share="private"))
        for chunk in range(1 + d % 4):
            source = f"docs/{d:02}.md"
            points.append(PointData(
                point_id("c", source, f"doc{d}", chunk, access, kind="u64"),
                [1.0, float(d), float(chunk)], SparseVec([d], [1.0]),
                {"source": source, "document_id": f"doc{d}", "title": f"D{d}",
                 "chunk_index": chunk, **access.payload()}))
    s.upsert("c", points)
    yield s
    s.close()


def _all_pages(store: KBStore, flt: Condition | None, limit: int) -> list[list[Any]]:
    pages, offset = [], None
    while True:
        page, offset = documents_page(store, "c", flt, limit=limit, offset=offset)
        pages.append(page)
        if offset is None:
            return pages
        assert len(pages) < 30


@pytest.mark.parametrize("limit", [1, 4, 23, 100])
@pytest.mark.parametrize("who", [None, ("u1", "t1"), ("u2", None)])
def test_pages_make_the_whole_listing(store: KBStore, limit: int,
                                      who: tuple[str, str | None] | None) -> None:
    flt = visibility(*who) if who else None
    pages = _all_pages(store, flt, limit)
    whole = documents_in(store, "c", flt)
    assert all(len(p) <= limit for p in pages) and all(pages[:-1])
    listed = [d for p in pages for d in p]
    key = lambda d: (d["source"], d["document_id"])  # noqa: E731
    assert sorted(listed, key=key) == whole  # the same documents, chunks and readers
    assert len({key(d) for d in listed}) == len(listed)


@pytest.mark.parametrize("bad", ["", "x", "1" * 20, str(1 << 63), "12 ", "-1",
                                 "00000000-0000-0000-0000-00000000000g"])
def test_an_offset_from_outside_is_checked(bad: str) -> None:
    with pytest.raises(ValueError, match="cursor"):
        check_offset(bad)
    assert check_offset("123") == "123"


def test_kb_list_pages_through_a_collection(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``kb list C --limit N`` prints N documents and ``more: --cursor X``; the pages it
    leads to hold every document once; a cursor of another collection is refused."""
    from typer.testing import CliRunner

    import agent_search.cli  # noqa: F401  (registers the sub-commands)
    from agent_search.cli.app import app
    from agent_search.kb import close_stores
    from agent_search.kb._store import edge_root

    home = tmp_path / "home"
    store = EdgeStore(edge_root(home))
    for name, count in (("c", 9), ("d", 3)):
        store.create(name, 3, {"dimensions": 3}, BASE_INDEXES)
        store.upsert(name, [PointData(point_id(name, f"n{i}.md", f"doc{i}", 0, kind="u64"),
                                      [1.0, float(i), 0.0], SparseVec([i], [1.0]),
                                      {"source": f"n{i}.md", "document_id": f"doc{i}",
                                       "chunk_index": 0, **Access.of().payload()})
                            for i in range(count)])
    store.close()
    monkeypatch.setenv("AGENT_SEARCH_HOME", str(home))
    runner = CliRunner()
    seen: list[str] = []
    args = ["kb", "list", "c", "--limit", "4"]
    for _ in range(5):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        seen += [line.split()[0] for line in result.stdout.splitlines()]
        more = [line for line in result.stderr.splitlines() if line.startswith("more: ")]
        if not more:
            break
        cursor = more[0].removeprefix("more: --cursor ")
        args = ["kb", "list", "c", "--limit", "4", "--cursor", cursor]
    assert sorted(seen) == sorted(f"n{i}.md" for i in range(9))
    whole = runner.invoke(app, ["kb", "list", "c"])
    assert sorted(line.split()[0] for line in whole.stdout.splitlines()) == sorted(seen)
    first = runner.invoke(app, ["kb", "list", "c", "--limit", "2"])
    cursor = first.stderr.strip().removeprefix("more: --cursor ")
    other = runner.invoke(app, ["kb", "list", "d", "--limit", "2", "--cursor", cursor])
    assert other.exit_code == 2 and "not a cursor of this listing" in other.output
    assert "Traceback" not in other.output
    close_stores()


def test_cli_repair_rebuilds_and_names_a_missing_collection(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``kb repair C`` rebuilds C's statistics from its points; an unknown collection is
    one error line and exit 2 (the store's own error, said by the command)."""
    from typer.testing import CliRunner

    import agent_search.cli  # noqa: F401  (registers the sub-commands)
    from agent_search.cli.app import app
    from agent_search.kb import close_stores
    from agent_search.kb._store import edge_root

    home = tmp_path / "home"
    store = EdgeStore(edge_root(home))
    store.create("c", 3, {"dimensions": 3}, BASE_INDEXES)
    store.upsert("c", [PointData(point_id("c", f"n{i}.md", f"doc{i}", 0, kind="u64"),
                                 [1.0, float(i), 0.0], SparseVec([i], [1.0]),
                                 {"source": f"n{i}.md", "document_id": f"doc{i}",
                                  "chunk_index": 0, **Access.of().payload()})
                       for i in range(3)])
    store.close()
    monkeypatch.setenv("AGENT_SEARCH_HOME", str(home))
    runner = CliRunner()
    try:
        done = runner.invoke(app, ["kb", "repair", "c"])
        assert done.exit_code == 0, done.output
        assert "statistics rebuilt from 3 chunks" in done.stdout
        # made without the chunker's version (older rules): repair says how to re-chunk
        assert "ingest its files again to re-chunk" in " ".join(done.stdout.split())
        missing = runner.invoke(app, ["kb", "repair", "nope"])
        assert missing.exit_code == 2
        assert "nope" in missing.stderr and "Traceback" not in missing.output
    finally:
        close_stores()
