"""Per-tenant knowledge-base documents (issue 14 item 3): a caller never reads another
team's or user's private chunk, through any entry point — the kb handler, the Searcher,
the MCP tools, the agent's auto search — whatever the request asks for (modes, fusions,
filters, named collections, graph). Property: over arbitrary identities, every chunk the
store returns satisfies the visibility rule."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_search import Context, Request, SearchConfig, Searcher
from agent_search.kb import Access, create_handler, visibility
from agent_search.kb._store import DENSE, SPARSE, PointData, SparseVec, VectorQuery
from agent_search.kb._store._edge import EdgeStore

from ..support.kb import ingested_home

SECRETS = {"red": "ZEBRA-7", "blue": "ORCA-3", "carol": "KESTREL-9"}
DOCS = {
    "handbook.md": ("# Handbook\n\nProject Falcon is the company's new satellite programme. "
                    "Ask the office about launch dates.\n", Access.of()),
    "red.md": ("# Falcon red\n\nProject Falcon launch code for the red team is ZEBRA-7. "
               "Do not share the Falcon launch code.\n", Access.of("alice", "red")),
    "blue.md": ("# Falcon blue\n\nProject Falcon launch code for the blue team is ORCA-3. "
                "The Falcon budget is confidential.\n", Access.of("bob", "blue")),
    "carol.md": ("# Falcon notes\n\nCarol's own Project Falcon launch code note: KESTREL-9 "
                 "(private to Carol).\n", Access.of("carol", "red", share="private")),
}
# who may read which secret
CALLERS: dict[tuple[str | None, str | None], set[str]] = {
    (None, None): set(),
    ("alice", "red"): {"ZEBRA-7"},
    ("bob", "blue"): {"ORCA-3"},
    ("carol", "red"): {"ZEBRA-7", "KESTREL-9"},
    ("dave", "red"): {"ZEBRA-7"},
    ("mallory", None): set(),
    ("carol", None): {"KESTREL-9"},
    (None, "blue"): {"ORCA-3"},
}
QUESTION = "What is the Project Falcon launch code?"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from ingested_home(tmp_path_factory, "kb-tenancy", "team", DOCS)


def _secrets(items: list[dict[str, Any]] | list[Any]) -> set[str]:
    text = json.dumps([i if isinstance(i, dict) else i.model_dump(mode="json")
                       for i in items])
    return {s for s in SECRETS.values() if s in text}


REQUESTS: list[dict[str, Any]] = [
    {},
    {"options": {"mode": "dense"}}, {"options": {"mode": "sparse"}},
    {"options": {"fusion": "rrf"}}, {"options": {"fusion": "dbsf"}},
    {"options": {"fusion": "zscore", "prf_docs": 2}},
    {"collections": ["team"], "graph": True, "threshold": 0.0},
    {"wheres": [{"or": [{"field": "source", "op": "like", "value": "blue"},
                        {"field": "acl_owner", "op": "is null"},
                        {"field": "acl_share", "op": "=", "value": "public"}]}]},
]


@pytest.mark.parametrize("caller", list(CALLERS), ids=str)
def test_the_kb_handler_returns_only_what_the_caller_may_read(
        home: Path, caller: tuple[str | None, str | None]) -> None:
    config = SearchConfig(home=home)
    handler = create_handler(config)
    user, team = caller

    async def go() -> set[str]:
        seen: set[str] = set()
        for extra in REQUESTS:
            result = await handler.search(Context(user_id=user, team_id=team, config=config),
                                          Request(type="kb", query=QUESTION, limit=20,
                                                  **extra))
            assert result.error is None, result.error
            seen |= _secrets(result.items)
            names = json.dumps([n.model_dump(mode="json") for n in result.graph_nodes or []])
            assert {s for s in SECRETS.values() if s in names} <= CALLERS[caller]
        return seen

    assert anyio.run(go) == CALLERS[caller]


def test_the_searcher_and_the_mcp_tools_filter_by_the_session_identity(home: Path) -> None:
    from agent_search.mcp.server import SearchTools

    config = SearchConfig(home=home)
    searcher = Searcher(config)
    searcher.registry.register(create_handler(config))

    async def go() -> None:
        for (user, team), allowed in CALLERS.items():
            direct = await searcher.search(
                Request(type="kb", query=QUESTION, limit=20, min_score=0),
                ctx=searcher.context(user_id=user, team_id=team))
            assert _secrets(direct.items) == allowed
            tools = SearchTools(searcher, user_id=user, team_id=team)
            found = await tools.kb_search(QUESTION, limit=20, collections=["team"],
                                          threshold=0.0, graph=True)
            assert _secrets(found["items"]) == allowed
            merged = await tools.search(QUESTION, types=["kb"], limit=20)
            assert _secrets(merged["items"]) <= allowed

    anyio.run(go)


def test_the_agent_auto_search_injects_only_what_the_caller_may_read(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_search.agent import Assistant, Options
    from agent_search.events import Done

    monkeypatch.setenv("AGENT_SEARCH_HOME", str(home))
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    (config_dir / "search.yao").write_text(json.dumps({"kb": {"min_score": 0}}))
    assistant_dir = tmp_path / "assistant"
    assistant_dir.mkdir()
    (assistant_dir / "package.yao").write_text(json.dumps({
        "name": "tenancy", "connector": "offline",
        "search": {"web": False, "db": False, "kb": {"min_score": 0}},
        "kb": {"collections": ["team"]}}))

    async def go() -> None:
        assistant = Assistant.load(assistant_dir, config_dir=config_dir)
        try:
            for (user, team), allowed in CALLERS.items():
                cited: list[dict[str, Any]] = []
                request_id = None
                async for event in assistant.stream(
                        [{"role": "user", "content": QUESTION}],
                        Options(connector="offline", user_id=user, team_id=team)):
                    request_id = event.request_id
                    if isinstance(event, Done):
                        cited = list(event.references)
                record = await assistant.record(request_id) if request_id else None
                injected = list(record.references) if record is not None else []
                assert injected, (user, team)  # the public handbook at least
                assert _secrets(injected) <= allowed and _secrets(cited) <= allowed
        finally:
            await assistant.aclose()

    anyio.run(go)


# -- property: the rule holds in the store for any identity --------------------------------

_IDS = st.sampled_from(["alice", "bob", "red", "blue", "", "Alice", "alice ", "a\x00b",
                        "*", "%", "' OR 1=1 --", "null", "public", "team", "ü", "0"])
_OWNERS = [None, "alice", "bob", "public", "team", "0"]
_TEAMS = [None, "red", "blue", "public", "team"]


@pytest.fixture(scope="module")
def acl_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[EdgeStore, dict]]:
    store = EdgeStore(tmp_path_factory.mktemp("acl") / "kb")
    store.create("c", 2, {"dimensions": 2}, {"acl_owner": "keyword", "acl_team": "keyword",
                                             "acl_share": "keyword"})
    access: dict[str, Access] = {}
    points = []
    i = 0
    for owner in _OWNERS:
        for team in _TEAMS:
            for share in ("team", "private"):
                for public in (False, True):
                    a = Access.of(owner, team, public=public, share=share)  # type: ignore[arg-type]
                    pid = str(uuid.UUID(int=i + 1))
                    i += 1
                    access[pid] = a
                    points.append(PointData(pid, [1.0, 0.1 * (i % 7)], SparseVec([1], [1.0]),
                                            a.payload()))
    store.upsert("c", points)
    yield store, access
    store.close()


def _may_read(a: Access, user: str | None, team: str | None) -> bool:
    if a.public:
        return True
    if user and a.owner == user:
        return True
    return bool(team and a.team == team and a.share == "team")


@given(user=st.none() | _IDS, team=st.none() | _IDS)
def test_any_identity_reads_exactly_what_the_rule_allows(
        acl_store: tuple[EdgeStore, dict[str, Access]], user: str | None,
        team: str | None) -> None:
    store, access = acl_store
    flt = visibility(user, team)
    dense, sparse = store.query_batch("c", [VectorQuery(DENSE, [1.0, 0.0], 1000, flt),
                                            VectorQuery(SPARSE, SparseVec([1], [1.0]), 1000,
                                                        flt)])
    clean_user = user if user and "\x00" not in user else None
    clean_team = team if team and "\x00" not in team else None
    expected = {pid for pid, a in access.items() if _may_read(a, clean_user, clean_team)}
    assert {p.id for p in dense} == expected
    assert {p.id for p in sparse} == expected
    assert store.count("c", flt) == len(expected)


def test_a_kept_filter_translation_never_answers_for_an_equal_looking_one(
        acl_store: tuple[EdgeStore, dict[str, Access]]) -> None:
    """The Edge store keeps filter translations (the visibility recurs in every query);
    ``True == 1`` in Python, so a kept integer match must not stand in for a boolean one
    (which the embedded store cannot match and refuses), and one caller's visibility
    never for another's."""
    from agent_search.errors import FilterError
    from agent_search.kb._store import Group, Match

    store, access = acl_store
    assert store.count("c", Group(must=(Match("acl_owner", 1),))) == 0
    with pytest.raises(FilterError, match="boolean"):
        store.count("c", Group(must=(Match("acl_owner", True),)))
    for user, team in [("alice", "red"), ("bob", "blue"), ("alice", "red"), (None, None)]:
        expected = sum(_may_read(a, user, team) for a in access.values())
        assert store.count("c", visibility(user, team)) == expected
