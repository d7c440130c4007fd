"""A long-lived MCP client session for the web handler.

An MCP session is an async context (task groups inside the SDK) that must be entered and
left by one task; a search handler has no task that outlives a search. So a kept-open
session lives in a small daemon thread running its own event loop (an anyio
:class:`~anyio.from_thread.BlockingPortal`), and searches call into it from worker
threads. For a stdio server this means one server process for the provider's lifetime
instead of one per search. Daemon, so a process that never closes it still exits (the
stdio server then sees end-of-input and stops).
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from functools import partial
from typing import Any

import anyio
from anyio.from_thread import BlockingPortal


def _run_portal(ready: queue.Queue[BlockingPortal | BaseException]) -> None:
    async def main() -> None:
        async with BlockingPortal() as portal:
            ready.put(portal)
            await portal.sleep_until_stopped()

    try:
        anyio.run(main)
    except BaseException as exc:  # pragma: no cover - reported to the opener
        ready.put(exc)


class KeptConnection:
    """An entered MCP ``Client`` owned by a portal thread. Every method blocks: call
    them through :func:`anyio.to_thread.run_sync`."""

    def __init__(self, make_client: Callable[[], Any], name: str,
                 on_close: Callable[[], None] | None = None) -> None:
        self._on_close = on_close
        ready: queue.Queue[BlockingPortal | BaseException] = queue.Queue()
        self._thread = threading.Thread(target=_run_portal, args=(ready,), name=name,
                                        daemon=True)
        self._thread.start()
        got = ready.get()
        if isinstance(got, BaseException):  # pragma: no cover
            raise got
        self.portal = got
        self._client_cm: AbstractContextManager[Any] | None = None
        try:
            cm = self.portal.wrap_async_context_manager(make_client())
            self.client = cm.__enter__()
            self._client_cm = cm
        except BaseException:
            self.portal.call(self.portal.stop)
            if on_close is not None:
                on_close()
            raise

    def call_tool(self, tool: str, args: dict[str, Any], timeout: float) -> Any:
        return self.portal.call(partial(self.client.call_tool, tool, args,
                                        read_timeout_seconds=timeout))

    def close(self) -> None:
        cm, self._client_cm = self._client_cm, None
        try:
            if cm is not None:
                cm.__exit__(None, None, None)
        finally:
            with contextlib.suppress(RuntimeError):  # the portal may be gone already
                self.portal.call(self.portal.stop)
            if self._on_close is not None:
                self._on_close()
                self._on_close = None
