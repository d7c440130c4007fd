"""``web.providers``: the next provider answers when one fails, with servers on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agent_search import SearchConfig, Searcher
from agent_search.errors import ConfigError
from agent_search.web import create_handler

from ..support.local_http import SECRET, LocalServer, Reply, recorded

pytestmark = pytest.mark.anyio

TAVILY = "/search"
BRAVE = "/res/v1/web/search"


@pytest.fixture
def second() -> Iterator[LocalServer]:
    """The fallback: Brave's wire format with its recorded answer."""
    s = LocalServer().start()
    s.route("GET", BRAVE, Reply(body=recorded("brave_what_is_the_semantic_kernel.json")))
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", SECRET)
    monkeypatch.setenv("BRAVE_API_KEY", SECRET)


def searcher_for(one: LocalServer, two: LocalServer, *, first: dict[str, Any] | None = None,
                 **web: Any) -> Searcher:
    first_entry = {"provider": "tavily", "base_url": one.url, **(first or {})}
    config = SearchConfig().merged({"web": {
        "providers": [first_entry, {"provider": "brave", "base_url": two.url}],
        "timeout": 2, **web}})
    return Searcher(config, handlers=[create_handler(config)])


QUERY = {"type": "web", "query": "what is the semantic kernel"}


@pytest.mark.parametrize(("reply", "reason"), [
    (Reply(429, {"detail": "slow down"}), "HTTP 429 rate limited"),
    (Reply(402, {"detail": "plan exhausted"}), "HTTP 402"),
    (Reply(503, {"detail": "down"}), "HTTP 503 server error"),
    (Reply(500, b"oops"), "HTTP 500 server error"),
    (Reply(401, {"detail": "who"}), "HTTP 401: API key rejected"),
    (Reply(body={"results": []}, delay=6.0), "timed out"),
])
async def test_the_next_provider_answers(server: LocalServer, second: LocalServer,
                                         reply: Reply, reason: str) -> None:
    server.route("POST", TAVILY, reply)
    # 2 s: an error reply must come back within it on a loaded CI machine (at 0.5 s a 402
    # was once read as a timeout); the stalled reply waits past it
    searcher = searcher_for(server, second, first={"timeout": 2.0})
    result = await searcher.search(QUERY)
    assert result.error is None, result.error
    assert result.provider == "brave" and result.items
    assert result.fallback is not None and len(result.fallback) == 1
    assert result.fallback[0].startswith("tavily: ") and reason in result.fallback[0]
    assert len(server.seen(TAVILY)) == 1  # a provider with a next one is not retried
    assert len(second.seen(BRAVE)) == 1


async def test_the_first_answers_when_it_can(server: LocalServer, second: LocalServer) -> None:
    server.route("POST", TAVILY, Reply(body=recorded("tavily_what_is_the_semantic_kernel.json")))
    result = await searcher_for(server, second).search(QUERY)
    assert (result.provider, result.fallback) == ("tavily", None)
    assert second.seen(BRAVE) == []


async def test_a_missing_key_falls_back(server: LocalServer, second: LocalServer,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TAVILY_API_KEY")
    result = await searcher_for(server, second).search(QUERY)
    assert result.provider == "brave"
    assert result.fallback == ["tavily: API key not configured (set TAVILY_API_KEY)"]
    assert server.requests == []


async def test_an_open_circuit_falls_back_without_a_call(server: LocalServer,
                                                         second: LocalServer) -> None:
    server.route("POST", TAVILY, Reply(503, b"down"))
    searcher = searcher_for(server, second, breaker={"failure_threshold": 2})
    for _ in range(2):
        await searcher.search(QUERY)
    calls = len(server.seen(TAVILY))
    result = await searcher.search(QUERY)
    assert result.provider == "brave"
    assert result.fallback and "circuit open" in result.fallback[0]
    assert len(server.seen(TAVILY)) == calls  # not called while open


async def test_a_spent_budget_is_respected_before_the_call(server: LocalServer,
                                                           second: LocalServer) -> None:
    server.route("POST", TAVILY, Reply(body=recorded("tavily_what_is_the_semantic_kernel.json")))
    searcher = searcher_for(server, second, first={"budget": {"calls": 2, "per": 3600}})
    providers = [(await searcher.search({**QUERY, "query": f"q {i}"})).provider
                 for i in range(4)]
    assert providers == ["tavily", "tavily", "brave", "brave"]
    assert len(server.seen(TAVILY)) == 2
    last = await searcher.search(QUERY)
    assert last.fallback and "call budget spent (2 calls per 3600s" in last.fallback[0]


async def test_a_bad_request_does_not_fall_back(server: LocalServer,
                                                second: LocalServer) -> None:
    server.route("POST", TAVILY, Reply(400, {"detail": "bad query"}))
    result = await searcher_for(server, second).search(QUERY)
    assert result.error is not None and "HTTP 400" in result.error
    assert second.seen(BRAVE) == []


async def test_all_failing_says_why_each_did(server: LocalServer, second: LocalServer) -> None:
    server.route("POST", TAVILY, Reply(429, b"{}"))
    second.route("GET", BRAVE, Reply(503, b"{}"))
    result = await searcher_for(server, second, retry={"attempts": 1}).search(QUERY)
    assert result.error is not None
    assert result.error.startswith("web: all 2 providers failed: tavily: HTTP 429")
    assert "brave: HTTP 503" in result.error
    assert result.fallback is not None and len(result.fallback) == 2


async def test_a_hanging_provider_leaves_time_for_the_next(server: LocalServer,
                                                           second: LocalServer) -> None:
    server.route("POST", TAVILY, Reply(body={"results": []}, delay=3))
    searcher = searcher_for(server, second, timeout=10)
    result = await searcher.search({**QUERY, "timeout": 2})
    assert result.provider == "brave", result.error
    assert result.fallback and ("share of the deadline" in result.fallback[0]
                                or "timed out" in result.fallback[0])


def test_a_bad_entry_is_a_configuration_error() -> None:
    config = SearchConfig().merged({"web": {"providers": ["tavily", {"provider": "nope"}]}})
    with pytest.raises(ConfigError, match=r"providers\[1\]"):
        create_handler(config)
