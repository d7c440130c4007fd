"""The async iterator ``Assistant.stream()`` returns, and the event sink feeding it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from agent_search.events import Event


class SendSink:
    """Event sink writing into the stream's channel; never blocks, drops after close."""

    def __init__(self, send: MemoryObjectSendStream[Event]) -> None:
        self._send = send

    def emit(self, event: Event) -> None:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._send.send_nowait(event)


_RUNNING: set[asyncio.Task[None]] = set()
"""Pipelines in flight (asyncio keeps only weak references to tasks)."""


class AgentStream:
    """The async iterator ``stream()`` returns.

    The pipeline runs in its own task and writes events into a channel this object reads.
    Closing the stream (``aclose()``, ``async with``, or simply dropping it after
    ``break``) cancels the pipeline: searches and the LLM call in flight are cancelled and
    no task is left behind. Because the pipeline has its own task, a consumer may stop at
    any point, from any task, without cancel-scope errors.
    """

    def __init__(self, pipeline: Coroutine[Any, Any, None],
                 receive: MemoryObjectReceiveStream[Event]) -> None:
        self._pipeline: Coroutine[Any, Any, None] | None = pipeline
        self._receive = receive
        self._task: asyncio.Task[None] | None = None

    def __aiter__(self) -> AgentStream:
        return self

    async def __anext__(self) -> Event:
        if self._task is None:
            self._start()
        try:
            return await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            await self.aclose()
            raise StopAsyncIteration from None

    def _start(self) -> None:
        if self._pipeline is None:
            raise RuntimeError("this stream was closed")
        task = asyncio.get_running_loop().create_task(self._pipeline)
        self._pipeline = None
        _RUNNING.add(task)
        task.add_done_callback(_RUNNING.discard)
        self._task = task

    async def aclose(self) -> None:
        """Stop: cancel the pipeline if it still runs and wait for it to unwind."""
        self._receive.close()
        if self._pipeline is not None:  # never started
            self._pipeline.close()
            self._pipeline = None
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task})

    async def __aenter__(self) -> AgentStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __del__(self) -> None:
        # dropped without aclose (e.g. ``break`` out of ``async for``): cancel the work
        if self._pipeline is not None:
            self._pipeline.close()
        if self._task is not None and not self._task.done():
            self._task.cancel()
