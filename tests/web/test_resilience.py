"""Retries (429/5xx, Retry-After, the deadline) and the per-provider circuit breaker."""

from __future__ import annotations

import email.utils
import re
import time
from typing import Any

import anyio
import pytest

from agent_search import Request, SearchConfig, Searcher
from agent_search.web import (
    BreakerSettings,
    CircuitOpenError,
    ProviderError,
    WebSettings,
    create_handler,
    create_provider,
)
from agent_search.web._resilience import CircuitBreaker
from agent_search.web.providers._base import parse_retry_after

from ..support.local_http import SECRET, LocalServer, Reply, recorded

pytestmark = pytest.mark.anyio

OK_BING = Reply(body=recorded("bing_what_is_the_semantic_kernel.json"))


def bing(server: LocalServer, **extra: Any) -> Any:
    return create_provider(WebSettings(provider="bing", base_url=server.url, **extra),
                           api_key=SECRET)


async def test_429_retry_after_is_honoured(server: LocalServer) -> None:
    server.route("GET", "/v7.0/search", [Reply(429, {"error": "slow down"}, {"Retry-After": "0.3"}),
                                         OK_BING])
    async with bing(server) as provider:
        started = time.perf_counter()
        items = await provider.search("q")
        elapsed = time.perf_counter() - started
    assert len(items) == 10
    assert len(server.requests) == 2
    assert elapsed >= 0.3


async def test_5xx_retried_with_backoff_then_success(server: LocalServer) -> None:
    server.route("GET", "/v7.0/search", [Reply(503), Reply(502), OK_BING])
    async with bing(server, retry={"attempts": 3, "initial_wait": 0.01}) as provider:
        assert len(await provider.search("q")) == 10
    assert len(server.requests) == 3


async def test_attempts_exhausted_error_says_so(server: LocalServer) -> None:
    server.route("GET", "/v7.0/search", Reply(500))
    async with bing(server, retry={"attempts": 2, "initial_wait": 0.0}) as provider:
        with pytest.raises(ProviderError,
                           match=r"bing: HTTP 500 server error \(after 2 attempts\)"):
            await provider.search("q")
    assert len(server.requests) == 2


async def test_client_errors_are_not_retried(server: LocalServer) -> None:
    server.route("GET", "/v7.0/search", Reply(400, {"error": {"message": "bad q"}}))
    async with bing(server) as provider:
        with pytest.raises(ProviderError, match=r"bing: HTTP 400: bad q"):
            await provider.search("q")
    assert len(server.requests) == 1


async def test_retry_after_beyond_the_deadline_is_not_waited_for(server: LocalServer) -> None:
    server.route("GET", "/v7.0/search", [Reply(429, headers={"Retry-After": "5"}), OK_BING])
    async with bing(server) as provider:
        started = time.perf_counter()
        with anyio.move_on_after(4.0), pytest.raises(ProviderError) as info:
            await provider.search("q")
        elapsed = time.perf_counter() - started
    # the error itself proves the provider gave up rather than being cut by the scope;
    # the clock only shows it did not wait the 5 s it was told to
    assert "would pass the deadline" in str(info.value)
    assert elapsed < 4.0
    assert len(server.requests) == 1


async def test_retry_after_longer_than_the_cap_is_not_waited_for(server: LocalServer) -> None:
    server.route("GET", "/v7.0/search", [Reply(429, headers={"Retry-After": "120"}), OK_BING])
    async with bing(server) as provider:
        with pytest.raises(ProviderError, match=r"longer than retry.max_retry_after"):
            await provider.search("q")


async def test_slow_provider_stays_inside_the_request_timeout(
        server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BING_API_KEY", SECRET)
    server.route("GET", "/v7.0/search", Reply(body={}, delay=2.0))
    config = SearchConfig().merged({"web": {"provider": "bing", "base_url": server.url}})
    searcher = Searcher(config)
    searcher.registry.register(create_handler(config))
    started = time.perf_counter()
    result = await searcher.search(Request(type="web", query="q", timeout=0.5))
    elapsed = time.perf_counter() - started
    # the provider gives up itself when a retry could not finish in time; if the machine
    # is slow the searcher's scope fires first: either way a timeout, never another error
    assert re.match(r"web: (bing: timed out after 0\.\d+s \(not retried|timed out after 0\.5s$)",
                    result.error or ""), result.error
    assert elapsed < 1.5  # the provider would take 2 s


async def test_tavily_429_retry_after_seen_through_the_official_client(
        server: LocalServer) -> None:
    server.route("POST", "/search", [
        Reply(429, {"detail": {"error": "rate"}}, {"Retry-After": "0.2"}),
        Reply(body=recorded("tavily_site_filter_devblogs_microsoft.com.json"))])
    settings = WebSettings(provider="tavily", base_url=server.url,
                           tavily={"include_answer": False})
    async with create_provider(settings, api_key=SECRET) as provider:
        started = time.perf_counter()
        items = await provider.search("q")
        assert time.perf_counter() - started >= 0.2
    assert len(items) == 4
    assert len(server.requests) == 2


def test_retry_after_forms() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(" 0.5 ") == 0.5
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None
    future = email.utils.formatdate(time.time() + 10, usegmt=True)
    seconds = parse_retry_after(future)
    assert seconds is not None and 8 <= seconds <= 11
    past = email.utils.formatdate(time.time() - 100, usegmt=True)
    assert parse_retry_after(past) == 0.0


# -- circuit breaker ------------------------------------------------------------------------


async def test_breaker_opens_fails_fast_then_recovers(server: LocalServer) -> None:
    server.route("GET", "/v7.0/search", [Reply(500), Reply(500), OK_BING])
    provider = bing(server, retry={"attempts": 1},
                    breaker={"failure_threshold": 2, "reset_after": 0.3})
    async with provider:
        for _ in range(2):
            with pytest.raises(ProviderError, match="HTTP 500"):
                await provider.search("q")
        with pytest.raises(CircuitOpenError, match=r"bing: circuit open after 2 consecutive"):
            await provider.search("q")
        assert len(server.requests) == 2  # failed fast: the server was not called
        assert provider.breaker.state == "open"
        await anyio.sleep(0.35)
        assert provider.breaker.state == "half-open"
        assert len(await provider.search("q")) == 10  # the trial call closes it
        assert provider.breaker.state == "closed"


async def test_breaker_trial_failure_reopens(server: LocalServer) -> None:
    server.route("GET", "/v7.0/search", Reply(503))
    provider = bing(server, retry={"attempts": 1},
                    breaker={"failure_threshold": 1, "reset_after": 0.1})
    async with provider:
        with pytest.raises(ProviderError, match="HTTP 503"):
            await provider.search("q")
        await anyio.sleep(0.15)
        with pytest.raises(ProviderError, match="HTTP 503"):
            await provider.search("q")  # the trial
        with pytest.raises(CircuitOpenError):
            await provider.search("q")
    assert len(server.requests) == 2


async def test_breaker_is_per_provider_in_the_handler(
        server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BING_API_KEY", SECRET)
    monkeypatch.setenv("BRAVE_API_KEY", SECRET)
    server.route("GET", "/v7.0/search", Reply(500))
    server.route("GET", "/res/v1/web/search",
                 Reply(body=recorded("brave_what_is_the_semantic_kernel.json")))
    web = {"provider": "bing", "base_url": server.url, "retry": {"attempts": 1},
           "breaker": {"failure_threshold": 1, "reset_after": 60}}
    config = SearchConfig().merged({"web": web})
    searcher = Searcher(config)
    searcher.registry.register(create_handler(config))
    first = await searcher.search({"type": "web", "query": "q"})
    second = await searcher.search({"type": "web", "query": "q"})
    assert first.error == "web: bing: HTTP 500 server error"
    assert second.error is not None and "circuit open" in second.error
    brave_ctx = searcher.context(config=config.merged({"web": {"provider": "brave"}}))
    third = await searcher.search({"type": "web", "query": "q"}, ctx=brave_ctx)
    assert third.error is None and len(third.items) == 10


def test_breaker_with_a_fake_clock() -> None:
    now = [0.0]
    breaker = CircuitBreaker("p", BreakerSettings(failure_threshold=3, reset_after=10),
                             clock=lambda: now[0])
    for _ in range(2):
        breaker.before_call()
        breaker.record_failure()
    assert breaker.state == "closed"
    breaker.record_success()
    assert breaker.failures == 0
    for _ in range(3):
        breaker.record_failure()
    with pytest.raises(CircuitOpenError) as info:
        breaker.before_call()
    assert info.value.retry_in == pytest.approx(10)
    now[0] = 10.0
    breaker.before_call()  # the single trial
    with pytest.raises(CircuitOpenError):
        breaker.before_call()  # concurrent callers still fail fast
    breaker.release_trial()
    breaker.before_call()
    breaker.record_success()
    assert breaker.state == "closed"
    disabled = CircuitBreaker("p", BreakerSettings(enabled=False, failure_threshold=1))
    disabled.record_failure()
    disabled.before_call()
