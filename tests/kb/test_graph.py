"""Entity graph: extraction, persistence next to the collection, association at query time."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_search import Request, SearchConfig, Searcher
from agent_search.kb import create_handler, drop_collection, ingest_paths
from agent_search.kb._retrieval import graph_path
from agent_search.kb._retrieval._graph import extract_entities, graph_stats

pytestmark = pytest.mark.anyio


def test_builtin_extractor() -> None:
    found = extract_entities("The Query API fuses results with RRF or DBSF in Qdrant. "
                             "It was written in Rust by the team in New York; see `query_points`.")
    assert found["rrf"] == ("acronym", "RRF") and found["dbsf"] == ("acronym", "DBSF")
    assert found["new york"] == ("name", "New York")
    assert found["query api"] == ("name", "Query API")
    assert found["qdrant"] == ("name", "Qdrant") and found["rust"] == ("name", "Rust")
    assert found["query_points"] == ("code", "query_points")
    assert "the" not in found and "it" not in found  # sentence starts are not names


async def test_graph_nodes_and_boost(config: SearchConfig, docs: Path) -> None:
    await ingest_paths(config, [docs], "docs", graph=True)
    assert graph_path(config.home, "docs").is_file()
    stats = graph_stats(config.home, "docs")
    assert stats["entities"] > 5 and stats["chunks"] > 0

    searcher = Searcher(config)
    searcher.registry.register(create_handler(config))
    ctx = searcher.context()
    plain = await searcher.search(Request(type="kb", query="what does DBSF fuse", limit=10,
                                          min_score=0),  # compare every score, no floor
                                  ctx=ctx)
    graphed = await searcher.search(Request(type="kb", query="what does DBSF fuse", limit=10,
                                            graph=True), ctx=ctx)
    assert plain.graph_nodes is None and graphed.error is None
    assert graphed.graph_nodes is not None
    by_name = {n.name: n for n in graphed.graph_nodes}
    assert by_name["DBSF"].relation == "query" and by_name["DBSF"].score == 1.0
    assert by_name["RRF"].relation == "co_occurs" and 0 < (by_name["RRF"].score or 0) < 1
    assert by_name["RRF"].id == "entity:rrf"
    top_plain = {i.content: i.score for i in plain.items}
    top_graph = graphed.items[0]
    assert "DBSF" in top_graph.content and top_graph.score > top_plain[top_graph.content]
    assert ctx.trace.find("graph_search")


async def test_two_hops_reach_further(config: SearchConfig, tmp_path: Path) -> None:
    folder = tmp_path / "chain"
    folder.mkdir()
    (folder / "a.txt").write_text("ALPHA works with BETA.")
    (folder / "b.txt").write_text("BETA works with GAMMA.")
    await ingest_paths(config, [folder], "chain", graph=True)
    one = await create_handler(config).search(
        _ctx(config), Request(type="kb", query="ALPHA", graph=True))
    names_one = {n.name for n in one.graph_nodes or []}
    assert names_one == {"ALPHA", "BETA"}
    two_config = SearchConfig(home=config.home, kb={"graph_hops": 2})
    two = await create_handler(two_config).search(
        _ctx(two_config), Request(type="kb", query="ALPHA", graph=True))
    assert {n.name for n in two.graph_nodes or []} == {"ALPHA", "BETA", "GAMMA"}


async def test_reingest_and_drop_update_the_graph(config: SearchConfig, tmp_path: Path) -> None:
    folder = tmp_path / "g"
    folder.mkdir()
    note = folder / "n.txt"
    note.write_text("NASA launched HUBBLE.")
    await ingest_paths(config, [folder], "g", graph=True)
    note.write_text("ESA launched GAIA.")
    await ingest_paths(config, [folder], "g", graph=True)
    result = await create_handler(config).search(
        _ctx(config), Request(type="kb", query="NASA and ESA", graph=True))
    assert {n.name for n in result.graph_nodes or []} == {"ESA", "GAIA"}
    assert await drop_collection(config, "g")
    assert not graph_path(config.home, "g").exists()


def _ctx(config: SearchConfig):  # type: ignore[no-untyped-def]
    from agent_search import Context

    return Context(config=config)
