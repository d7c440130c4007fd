"""Shutdown, seen from inside the app.

uvicorn tells an application about shutdown only after every connection has closed (the
lifespan event): too late to end streams cleanly. So while the app runs, SIGTERM and
SIGINT also start a drain (chained in front of uvicorn's own handler, which still stops
accepting connections and then waits for them): each service of this process refuses new
streams, lets those in flight finish for ``server.grace_seconds``, then ends them with
their final event. This works the same in every ``--workers`` process, as each installs
it in its own lifespan. Signals can only be caught on the main thread; elsewhere (an app
run in a thread, as tests do) call :meth:`Service.drain` directly.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

import anyio

from agent_search.server.service import Service

_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_TASKS: set[asyncio.Task[None]] = set()


def watch_signals(services: list[Service]) -> Callable[[], None]:
    """Chain a drain in front of the current SIGTERM/SIGINT handlers; returns the undo."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    loop = asyncio.get_running_loop()
    previous: dict[int, Any] = {}

    def start_drain() -> None:
        task = loop.create_task(drain_all(services))
        _TASKS.add(task)
        task.add_done_callback(_TASKS.discard)

    def handler(sig: int, frame: FrameType | None) -> None:
        if not any(s.draining for s in services):
            loop.call_soon_threadsafe(start_drain)
        before = previous.get(sig)
        if callable(before):
            before(sig, frame)
        elif before == signal.SIG_DFL and sig == signal.SIGINT:
            raise KeyboardInterrupt

    for sig in _SIGNALS:
        previous[sig] = signal.signal(sig, handler)

    def undo() -> None:
        for sig, before in previous.items():
            if signal.getsignal(sig) is handler:
                signal.signal(sig, before)

    return undo


async def drain_all(services: list[Service], grace: float | None = None) -> None:
    """Drain the services concurrently (see :meth:`Service.drain`)."""
    async with anyio.create_task_group() as tg:
        for service in services:
            tg.start_soon(service.drain, grace)
