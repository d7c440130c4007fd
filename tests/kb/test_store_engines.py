"""Both stores on their real engines (Qdrant Edge, and qdrant-client's local mode as the
server's stand-in): the same filters select the same points, the same queries rank alike.
Small synthetic points: no model needed."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_search.kb import Access, visibility
from agent_search.kb._store import (
    DENSE,
    SPARSE,
    Condition,
    FusionQuery,
    Group,
    HasId,
    IsNull,
    KBStore,
    Match,
    MatchAny,
    PointData,
    Range,
    SparseVec,
    VectorQuery,
    to_filter,
)
from agent_search.kb._store._edge import EdgeStore
from agent_search.kb._store._filters import FilterError, IsEmpty, MatchExcept, MatchText
from agent_search.kb._store._server import ServerStore
from agent_search.types import QueryWhere

IDS = [str(uuid.UUID(int=i + 1)) for i in range(12)]


def _points() -> list[PointData]:
    out = []
    for i, pid in enumerate(IDS):
        access = (Access.of() if i % 3 == 0 else Access.of(f"u{i % 2}", "t1") if i % 3 == 1
                  else Access.of(f"u{i % 2}", "t2", share="private"))
        meta: dict[str, object] = {"type": "md" if i % 2 else "txt", "year": 2000 + i,
                                   "tags": ["a", "b"] if i < 4 else ["c"]}
        if i % 4 == 0:
            meta["lang"] = None
        out.append(PointData(pid, [1.0, float(i), 0.5, float(i % 3)],
                             SparseVec([1, 2 + i % 4], [1.0, 0.1 * (i + 1)]),
                             {"source": f"docs/{i}.md", "content": f"note number {i} on bees",
                              "meta": meta, **access.payload()}))
    return out


@pytest.fixture(params=["edge", "server"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KBStore]:
    from qdrant_client import QdrantClient

    s: KBStore = (EdgeStore(tmp_path / "edge") if request.param == "edge" else
                  ServerStore(QdrantClient(location=":memory:"), location="memory", local=True))
    s.create("c", 4, {"dimensions": 4}, {"source": "keyword", "acl_owner": "keyword"})
    s.upsert("c", _points())
    yield s
    s.close()


def _ids(store: KBStore, flt: Condition | None) -> set[int]:
    found = store.query_batch("c", [VectorQuery(DENSE, [1.0, 0.0, 0.0, 0.0], 50, flt
                                                if flt is None or isinstance(flt, Group)
                                                else Group(must=(flt,)))])[0]
    return {IDS.index(p.id) for p in found}


CASES: list[tuple[Condition, set[int]]] = [
    (Match("meta.type", "md"), {1, 3, 5, 7, 9, 11}),
    (Group(must_not=(Match("meta.type", "md"),)), {0, 2, 4, 6, 8, 10}),
    (Range("meta.year", gte=2003, lt=2006), {3, 4, 5}),
    (MatchAny("meta.tags", ("a",)), {0, 1, 2, 3}),
    (MatchExcept("meta.type", ("md",)), {0, 2, 4, 6, 8, 10}),
    (MatchText("content", "number 1"), {1}),  # words, not a substring
    (IsNull("meta.lang"), {0, 4, 8}),
    (IsEmpty("meta.lang"), {0, 4, 8} | {1, 2, 3, 5, 6, 7, 9, 10, 11}),
    (HasId((IDS[2], IDS[5])), {2, 5}),
    (Group(should=(Match("meta.year", 2001), Group(must=(Match("meta.type", "txt"),
                                                         Range("meta.year", gt=2009))))),
     {1, 10}),
    (visibility(None, None), {0, 3, 6, 9}),
    (visibility("u1", None), {0, 3, 6, 9} | {1, 5, 7, 11} | {1, 5, 11}),
    (visibility(None, "t1"), {0, 3, 6, 9} | {1, 4, 7, 10}),
    (visibility("u0", "t2"), {0, 3, 6, 9} | {2, 4, 8, 10}),
]


@pytest.mark.parametrize(("flt", "expected"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_filters_select_the_same_points(store: KBStore, flt: Condition,
                                        expected: set[int]) -> None:
    assert _ids(store, flt) == expected
    assert store.count("c", flt) == len(expected)


def test_where_clauses_run_in_the_engine(store: KBStore) -> None:
    flt = to_filter([QueryWhere(field="type", op="=", value="txt"),
                     QueryWhere(field="year", op=">=", value=2006)])
    store.ensure_indexes("c", {"meta.type": "keyword", "meta.year": "float"})
    assert _ids(store, flt) == {6, 8, 10}


def test_boolean_match_is_refused_on_edge_not_misread(tmp_path: Path) -> None:
    edge = EdgeStore(tmp_path / "e")
    edge.create("c", 4, {"dimensions": 4}, {})
    with pytest.raises(FilterError, match="cannot match a boolean"):
        edge.count("c", Match("meta.flag", True))
    edge.close()


def test_queries_rank_alike_on_both_engines(tmp_path: Path) -> None:
    from qdrant_client import QdrantClient

    stores = [EdgeStore(tmp_path / "edge"),
              ServerStore(QdrantClient(location=":memory:"), location="memory", local=True)]
    for s in stores:
        s.create("c", 4, {"dimensions": 4}, {})
        s.upsert("c", _points())
    queries = [VectorQuery(DENSE, [0.2, 1.0, 0.0, 0.3], 5),
               VectorQuery(SPARSE, SparseVec([2, 3], [1.0, 1.0]), 5),
               FusionQuery((VectorQuery(DENSE, [0.2, 1.0, 0.0, 0.3], 8),
                            VectorQuery(SPARSE, SparseVec([3], [1.0]), 8)), "rrf", 5, 60,
                           (0.75, 0.25)),
               FusionQuery((VectorQuery(DENSE, [0.2, 1.0, 0.0, 0.3], 8),
                            VectorQuery(SPARSE, SparseVec([3], [1.0]), 8)), "dbsf", 5)]
    edge, server = (s.query_batch("c", queries) for s in stores)
    for e, r in zip(edge, server, strict=True):
        assert [p.id for p in e] == [p.id for p in r]
        assert [round(p.score, 4) for p in e] == [round(p.score, 4) for p in r]
    for s in stores:
        s.close()
