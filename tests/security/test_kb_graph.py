"""Issue 21, item 2: graph nodes come only from chunks the caller may read.

The entity graph spans every tenant's chunks. Before the fix a node was shown when any
returned chunk mentioned it, but it was reached, described and counted through the whole
graph: bob's graph search for "Zebra Holdings" (two hops) returned "Falcon Ledger —
co-occurs with Project Nightingale in 1 chunk(s)", a relation written only in alice's
private memo, and counts that included chunks he cannot read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from agent_search import Context, Request, SearchConfig
from agent_search.kb import Access, create_handler
from agent_search.types import Result

from ..support.kb import ingested_home

DOCS = {
    "zebra.md": ("Zebra Holdings signed a supply deal with Project Nightingale last spring.",
                 Access.of()),
    "ledger.md": ("Falcon Ledger is a bookkeeping tool used by many small firms.",
                  Access.of()),
    "memo.md": ("Private memo: Project Nightingale will quietly buy Falcon Ledger. "
                "Zebra Holdings must not hear of Kestrel Ventures.",
                Access.of("alice", "red", share="private")),
}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from ingested_home(tmp_path_factory, "kb-graph", "memos", DOCS)


def _search(home: Path, user: str | None, team: str | None, query: str) -> Result:
    config = SearchConfig(home=home, kb={"graph_hops": 2})
    handler = create_handler(config)

    async def go() -> Result:
        return await handler.search(Context(user_id=user, team_id=team, config=config),
                                    Request(type="kb", query=query, graph=True, limit=10,
                                            threshold=0.0))

    result = anyio.run(go)
    assert result.error is None, result.error
    return result


def _nodes(result: Result) -> dict[str, str]:
    return {n.name: n.description or "" for n in result.graph_nodes or []}


@pytest.mark.parametrize("caller", [(None, None), ("bob", "blue"), ("dave", "red")])
def test_graph_nodes_come_only_from_readable_chunks(home: Path,
                                                    caller: tuple[str | None, str | None]
                                                    ) -> None:
    result = _search(home, *caller, "Zebra Holdings")
    nodes = _nodes(result)
    text = json.dumps(nodes)
    assert "Zebra Holdings" in nodes and "Project Nightingale" in nodes
    assert "Kestrel" not in text  # only in the private memo
    assert "Falcon Ledger" not in nodes  # related to the others only in the private memo
    assert nodes["Zebra Holdings"].startswith("mentioned in 1 chunk(s)")  # not 2


def test_the_owner_sees_her_memo_in_the_graph(home: Path) -> None:
    nodes = _nodes(_search(home, "alice", "red", "Zebra Holdings"))
    assert "Kestrel Ventures" in nodes and "Falcon Ledger" in nodes
    assert nodes["Zebra Holdings"].startswith("mentioned in 2 chunk(s)")


def test_a_private_co_occurrence_boosts_no_readable_chunk(home: Path) -> None:
    """Boosts are a side channel too: a public chunk must not rank higher because an
    entity it names co-occurs with the query's in a chunk the caller cannot read."""
    from agent_search.kb._retrieval import associate

    def nobody(collection: str, ids: list[str]) -> set[str]:
        return set()

    nodes, boosts = associate(home, ["memos"], "Project Nightingale", 2, nobody)
    assert nodes == [] and boosts == {}


def test_the_store_is_asked_about_a_bounded_number_of_chunks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A very common entity cannot make one graph search ask the store about every chunk
    of the collection; what is left unchecked counts as unreadable."""
    from agent_search.kb._retrieval import _graph

    monkeypatch.setattr(_graph, "MAX_CHUNKS_PER_ENTITY", 10)
    monkeypatch.setattr(_graph, "MAX_CHUNKS_CHECKED", 25)
    chunks = [(f"p{i}", "d", f"Alpha Works met Entity{i} Corp and Beta Labs.")
              for i in range(200)]
    _graph.update_graph(tmp_path, "c", chunks, removed=[])
    asked: list[int] = []

    def everyone(collection: str, ids: list[str]) -> set[str]:
        asked.append(len(ids))
        return set(ids)

    nodes, boosts = _graph.associate(tmp_path, ["c"], "Alpha Works", 2, everyone)
    assert sum(asked) <= 25 and len(boosts) <= 25
    names = {n.name: n.description for n in nodes}
    assert names["Alpha Works"] == "mentioned in 10+ chunk(s) of c"
