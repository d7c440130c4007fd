"""The result cache, with a counting provider on 127.0.0.1 and a real kb."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_search import Request, Result, SearchConfig, Searcher
from agent_search.kb import create_handler as create_kb_handler
from agent_search.kb import ingest_paths
from agent_search.web import create_handler

from ..support.kb import linked_home, prepared_model_home
from ..support.local_http import SECRET, LocalServer, Reply, recorded

pytestmark = pytest.mark.anyio

TAVILY = recorded("tavily_what_is_the_semantic_kernel.json")


def web_searcher(server: LocalServer, **cache: Any) -> Searcher:
    config = SearchConfig().merged({
        "web": {"provider": "tavily", "base_url": server.url},
        "cache": {"enabled": True, **cache}})
    return Searcher(config, handlers=[create_handler(config)])


@pytest.fixture
def tavily(server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> LocalServer:
    monkeypatch.setenv("TAVILY_API_KEY", SECRET)
    server.route("POST", "/search", Reply(body=TAVILY, delay=0.05))
    return server


async def test_concurrent_identical_searches_make_one_call(tavily: LocalServer) -> None:
    searcher = web_searcher(tavily)
    results: list[Result] = []

    async def one() -> None:
        results.append(await searcher.search({"type": "web", "query": "semantic kernel"}))

    async with anyio.create_task_group() as tg:
        for _ in range(100):
            tg.start_soon(one)
    assert len(tavily.seen("/search")) == 1
    assert all(r.error is None and r.items for r in results)
    assert sorted(r.cache or "" for r in results).count("miss") == 1
    stats = searcher.cache.stats["web"]
    assert (stats.hits, stats.misses) == (99, 1)

    again = await searcher.search({"type": "web", "query": "  Semantic   KERNEL "})
    assert again.cache == "hit" and len(tavily.seen("/search")) == 1
    assert [i.title for i in again.items] == [i.title for i in results[0].items]


async def test_a_hit_gets_the_citation_ids_of_its_own_request(tavily: LocalServer) -> None:
    searcher = web_searcher(tavily)
    ctx = searcher.context()
    first = await searcher.search({"type": "web", "query": "semantic kernel"}, ctx=ctx)
    second = await searcher.search({"type": "web", "query": "semantic kernel"}, ctx=ctx)
    assert second.cache == "hit"
    ids = [i.citation_id for i in first.items + second.items]
    assert len(ids) == len(set(ids))  # unique across the request, as without the cache


async def test_tenants_never_share_an_entry(tavily: LocalServer) -> None:
    searcher = web_searcher(tavily)
    req = {"type": "web", "query": "semantic kernel"}
    await searcher.search(req, ctx=searcher.context(user_id="alice", team_id="t1"))
    other = await searcher.search(req, ctx=searcher.context(user_id="bob", team_id="t1"))
    team = await searcher.search(req, ctx=searcher.context(user_id="alice", team_id="t2"))
    assert (other.cache, team.cache) == ("miss", "miss")
    assert len(tavily.seen("/search")) == 3
    same = await searcher.search(req, ctx=searcher.context(user_id="alice", team_id="t1"))
    assert same.cache == "hit" and len(tavily.seen("/search")) == 3


async def test_options_and_limits_are_part_of_the_key(tavily: LocalServer) -> None:
    searcher = web_searcher(tavily)
    await searcher.search({"type": "web", "query": "semantic kernel", "limit": 3})
    other = await searcher.search({"type": "web", "query": "semantic kernel", "limit": 2})
    sites = await searcher.search({"type": "web", "query": "semantic kernel", "limit": 3,
                                   "sites": ["learn.microsoft.com"]})
    assert (other.cache, sites.cache) == ("miss", "miss")
    assert len(tavily.seen("/search")) == 3


async def test_errors_are_never_kept(server: LocalServer,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", SECRET)
    server.route("POST", "/search", [Reply(400, {"detail": "bad"}), Reply(body=TAVILY)])
    searcher = web_searcher(server)
    failed = await searcher.search({"type": "web", "query": "semantic kernel"})
    assert failed.error is not None
    ok = await searcher.search({"type": "web", "query": "semantic kernel"})
    assert ok.error is None and ok.cache == "miss"
    assert len(server.seen("/search")) == 2


async def test_the_ttl_ends_an_entry(tavily: LocalServer) -> None:
    searcher = web_searcher(tavily)
    now = [1000.0]
    searcher.cache._clock = lambda: now[0]
    await searcher.search({"type": "web", "query": "semantic kernel"})
    now[0] += 301
    late = await searcher.search({"type": "web", "query": "semantic kernel"})
    assert late.cache == "miss" and len(tavily.seen("/search")) == 2


async def test_the_cache_is_bounded(tavily: LocalServer) -> None:
    searcher = web_searcher(tavily, max_entries=2)
    for q in ("a one", "b two", "c three"):
        await searcher.search({"type": "web", "query": q})
    assert len(searcher.cache) == 2
    first = await searcher.search({"type": "web", "query": "a one"})
    assert first.cache == "miss"  # the least recently used went first


async def test_a_type_can_be_switched_off(tavily: LocalServer) -> None:
    searcher = web_searcher(tavily, types={"web": False})
    for _ in range(2):
        result = await searcher.search({"type": "web", "query": "semantic kernel"})
        assert result.cache is None
    assert len(tavily.seen("/search")) == 2


async def test_off_by_default(tavily: LocalServer) -> None:
    config = SearchConfig().merged({"web": {"provider": "tavily", "base_url": tavily.url}})
    searcher = Searcher(config, handlers=[create_handler(config)])
    for _ in range(2):
        assert (await searcher.search({"type": "web", "query": "x y"})).cache is None
    assert len(tavily.seen("/search")) == 2


class _Counting:
    """A custom handler without ``cache_version``: never cached."""

    type = "notes"

    def __init__(self) -> None:
        self.calls = 0

    def can_handle(self, ctx: Any, request: Request) -> bool:
        return True

    async def search(self, ctx: Any, request: Request) -> Result:
        self.calls += 1
        return Result(type="notes", query=request.query)


async def test_a_handler_without_a_version_is_not_cached() -> None:
    handler = _Counting()
    searcher = Searcher(SearchConfig().merged({"cache": {"enabled": True}}), handlers=[handler])
    for _ in range(2):
        await searcher.search({"type": "notes", "query": "q"})
    assert handler.calls == 2


# -- kb: an ingest is seen at once ----------------------------------------------------------

@pytest.fixture(scope="module")
def model_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return prepared_model_home(tmp_path_factory, "cache-model")


@pytest.fixture
def home(tmp_path: Path, model_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield from linked_home(tmp_path, model_home, monkeypatch)


async def test_a_kb_search_after_an_ingest_is_never_stale(home: Path, tmp_path: Path) -> None:
    config = SearchConfig(home=home).merged({"cache": {"enabled": True}})
    searcher = Searcher(config, handlers=[create_kb_handler(config)])
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("The harbour ferry leaves at seven every morning.\n")
    await ingest_paths(config, [docs / "a.md"], "notes")
    req = {"type": "kb", "query": "when does the ferry leave", "collections": ["notes"]}
    first = await searcher.search(req)
    again = await searcher.search(req)
    assert (first.cache, again.cache) == ("miss", "hit")
    assert len(first.items) == 1

    (docs / "b.md").write_text("The ferry also leaves at nine on Sundays.\n")
    await ingest_paths(config, [docs / "b.md"], "notes")
    after = await searcher.search(req)
    assert after.cache == "miss"
    assert len(after.items) == 2


async def test_hits_and_misses_reach_the_metrics(tavily: LocalServer) -> None:
    from agent_search.server._metrics import Metrics

    searcher = web_searcher(tavily)
    for _ in range(3):
        await searcher.search({"type": "web", "query": "semantic kernel"})
    metrics = Metrics(["web"])
    metrics.watch_caches([searcher.cache])
    text = metrics.render().decode()
    assert 'agent_search_cache_hits_total{type="web"} 2.0' in text
    assert 'agent_search_cache_misses_total{type="web"} 1.0' in text


async def test_a_db_search_after_a_write_is_never_stale(tmp_path: Path) -> None:
    import sqlite3

    from agent_search.db import create_handler as create_db_handler

    db = tmp_path / "sky.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE planet (id INTEGER PRIMARY KEY, name TEXT, moons INT)")
        conn.executemany("INSERT INTO planet (name, moons) VALUES (?, ?)",
                         [("Mars", 2), ("Jupiter", 95)])
    config = SearchConfig(home=tmp_path / "home").merged(
        {"db": {"url": f"sqlite:///{db}"}, "cache": {"enabled": True}})
    handler = create_db_handler(config)
    searcher = Searcher(config, handlers=[handler])
    req = {"type": "db", "query": "planets with more than 1 moons", "models": ["planet"]}
    try:
        first = await searcher.search(req)
        again = await searcher.search(req)
        assert (first.cache, again.cache) == ("miss", "hit")
        with sqlite3.connect(db) as conn:
            conn.execute("INSERT INTO planet (name, moons) VALUES ('Saturn', 146)")
        after = await searcher.search(req)
    finally:
        await searcher.aclose()
    assert after.cache == "miss"
    assert len(after.items) == len(first.items) + 1
