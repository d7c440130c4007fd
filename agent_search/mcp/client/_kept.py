"""A long-lived MCP session that outlives the task that opened it.

An MCP session is an async context (task groups inside the SDK) that must be entered and
left by one task; a search handler has no task that outlives a search. So a kept-open
session lives in a small daemon thread running its own event loop (an anyio
:class:`~anyio.from_thread.BlockingPortal`), and calls reach it from worker threads. For
a stdio server this means one server process for the connection's lifetime instead of
one per call. Daemon, so a process that never closes it still exits (the stdio server
then sees end-of-input and stops).
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import Any, TypeVar

import anyio
from anyio.from_thread import BlockingPortal

T = TypeVar("T")


def _run_portal(ready: queue.Queue[BlockingPortal | BaseException]) -> None:
    async def main() -> None:
        async with BlockingPortal() as portal:
            ready.put(portal)
            await portal.sleep_until_stopped()

    try:
        anyio.run(main)
    except BaseException as exc:  # pragma: no cover - reported to the opener
        ready.put(exc)


class KeptSession:
    """An entered MCP session (``open_session()``'s context) owned by a portal thread.
    Every method blocks: call them through :func:`anyio.to_thread.run_sync`."""

    def __init__(self, open_session: Callable[[], AbstractAsyncContextManager[Any]],
                 name: str) -> None:
        ready: queue.Queue[BlockingPortal | BaseException] = queue.Queue()
        self._thread = threading.Thread(target=_run_portal, args=(ready,), name=name,
                                        daemon=True)
        self._thread.start()
        got = ready.get()
        if isinstance(got, BaseException):  # pragma: no cover
            raise got
        self.portal = got
        self._session_cm: AbstractContextManager[Any] | None = None
        try:
            cm = self.portal.wrap_async_context_manager(open_session())
            self.client = cm.__enter__()
            self._session_cm = cm
        except BaseException:
            self.portal.call(self.portal.stop)
            raise

    def run(self, call: Callable[[Any], Awaitable[T]]) -> T:
        """``await call(client)`` on the portal's event loop."""
        return self.portal.call(call, self.client)

    def close(self) -> None:
        cm, self._session_cm = self._session_cm, None
        try:
            if cm is not None:
                cm.__exit__(None, None, None)
        finally:
            with contextlib.suppress(RuntimeError):  # the portal may be gone already
                self.portal.call(self.portal.stop)
