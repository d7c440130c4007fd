"""/metrics says how late the event loop wakes (``agent_search_event_loop_lag_seconds``):
the figure that tells a load costing other clients on the loop (blocking work, a thread
holding the interpreter lock) from one costing CPU in threads only."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from agent_search.server._metrics import Metrics

pytestmark = pytest.mark.anyio


def _lag(metrics: Metrics) -> tuple[float, float]:
    count = total = 0.0
    for metric in metrics.registry.collect():
        for sample in metric.samples:
            if sample.name == "agent_search_event_loop_lag_seconds_count":
                count = sample.value
            elif sample.name == "agent_search_event_loop_lag_seconds_sum":
                total = sample.value
    return count, total


async def test_a_blocked_loop_shows_in_the_lag() -> None:
    metrics = Metrics([])
    async with anyio.create_task_group() as tg:
        tg.start_soon(metrics.watch_loop, 0.01)
        await anyio.sleep(0.05)
        quiet_count, quiet_sum = _lag(metrics)
        time.sleep(0.3)  # the loop held: the watcher's timer fires 0.3 s late
        await anyio.sleep(0.05)
        tg.cancel_scope.cancel()
    count, total = _lag(metrics)
    assert quiet_count >= 1 and count > quiet_count
    assert total - quiet_sum >= 0.25


def test_the_served_metrics_include_the_loop_lag(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from tests.support.http_service import auth, in_process_app

    app, _ = in_process_app(tmp_path)
    with TestClient(app) as http:
        time.sleep(0.2)  # the watcher samples every 50 ms
        text = http.get("/metrics", headers=auth("alice")).text
    line = next(x for x in text.splitlines()
                if x.startswith("agent_search_event_loop_lag_seconds_count"))
    assert float(line.split()[-1]) >= 1
