"""The rate limit holds across workers (issue 21).

Each uvicorn worker builds its own Service; the buckets were per process, so
``--workers N`` multiplied the configured limit by N. Now they live in the database the
workers share (the record store's). Two services on one project stand for two workers."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_search.server import Service, ServiceOptions, create_app
from agent_search.server._ratelimit import SharedRateLimiter
from agent_search.server._records import SharedRecordStore, records_url

from ..support.http_service import KEYS, sha256, write_project

ALICE = {"Authorization": f"Bearer {KEYS['alice']}"}
BOB = {"Authorization": f"Bearer {KEYS['bob']}"}


def _service(cdir: Path, adir: Path, workers: int) -> Service:
    return Service.load(ServiceOptions(config_dir=cdir, assistants_dir=adir,
                                       builtin_handlers=False, workers=workers))


@pytest.mark.parametrize(("shared", "workers"), [("auto", 2), (True, 1)])
def test_two_workers_share_one_bucket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      shared: object, workers: int) -> None:
    monkeypatch.setenv("AGENT_SEARCH_HOME", str(tmp_path / "home"))
    cdir, adir = write_project(tmp_path, server={
        "api_keys": [{"sha256": sha256(KEYS["alice"]), "user_id": "alice"},
                     {"sha256": sha256(KEYS["bob"]), "user_id": "bob"}],
        "rate_limit": {"per_minute": 0.01, "burst": 3, "shared": shared}})
    one = create_app(_service(cdir, adir, workers))
    two = create_app(_service(cdir, adir, workers))
    with TestClient(one) as a, TestClient(two) as b:
        codes = [c.get("/v1/models", headers=ALICE).status_code for c in (a, b, a, b, a, b)]
        assert codes == [200, 200, 200, 429, 429, 429]
        limited = b.get("/v1/models", headers=ALICE)
        assert int(limited.headers["retry-after"]) > 60  # a token in 100 minutes
        assert a.get("/v1/models", headers=BOB).status_code == 200  # buckets are per key


def test_one_process_keeps_its_buckets_in_memory(tmp_path: Path) -> None:
    """``auto`` with one worker on a local records file: no write per request."""
    store_url = records_url(None, None, tmp_path)
    limiter = SharedRateLimiter(60.0, 1, store_url, shared=False)

    async def go() -> list[float]:
        return [await limiter.take("k"), await limiter.take("k")]

    first, second = anyio.run(go)
    assert first == 0 and second > 0
    assert not (tmp_path / "records.sqlite").exists()


@settings(max_examples=20)
@given(st.lists(st.sampled_from(["k1", "k2"]), min_size=1, max_size=12),
       st.integers(1, 4))
def test_never_more_than_burst_without_refill(tmp_path_factory: pytest.TempPathFactory,
                                              keys: list[str], burst: int) -> None:
    """Whatever the interleaving of two limiters on one store, a key gets at most
    ``burst`` tokens when no time passes (property)."""
    home = tmp_path_factory.mktemp("rl")
    store = SharedRecordStore(records_url(None, None, home))
    limiters = [SharedRateLimiter(60.0, burst, store.url) for _ in range(2)]

    async def go() -> dict[str, int]:
        allowed: dict[str, int] = {}
        for i, key in enumerate(keys):
            wait = await limiters[i % 2].take(key, now=1000.0)
            allowed[key] = allowed.get(key, 0) + (wait == 0)
        await store.aclose()
        return allowed

    allowed = anyio.run(go)
    for key in set(keys):
        assert allowed[key] == min(burst, keys.count(key))


def test_tokens_come_back_with_time(tmp_path: Path) -> None:
    store = SharedRecordStore(records_url(None, None, tmp_path))
    limiter = SharedRateLimiter(60.0, 1, store.url)  # one token a second

    async def go() -> list[float]:
        waits = [await limiter.take("k", now=t) for t in (10.0, 10.5, 11.0, 11.2)]
        await store.aclose()
        return waits

    assert anyio.run(go) == [0.0, pytest.approx(0.5), 0.0, pytest.approx(0.8)]
