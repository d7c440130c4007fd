"""Server-sent events with the two endings a stream can have besides finishing:

* the client goes away — the producer is cancelled at once (its searches and the LLM
  call with it), not when the next write happens to fail;
* the server shuts down — after the grace period the producer is cancelled and the
  stream ends with a final event of the producer's choosing (``done`` with an error for
  the native stream, a finishing chunk and ``[DONE]`` for chat completions).

The producer is a coroutine ``produce(write)``; it owns its resources and releases
them when cancelled (both cases above). A producer that fails after the headers went
out is logged and the stream still ends with the final event ``on_error`` makes (a
``done`` with the error for the native stream), never by dropping the connection.
A quiet stream gets a keep-alive comment every ``keepalive`` seconds.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

log = logging.getLogger("agent_search.server")
Write = Callable[[bytes], Awaitable[None]]
Producer = Callable[[Write], Awaitable[None]]
KEEPALIVE_FRAME = b": keep-alive\n\n"
"""An SSE comment (clients ignore it): sent when a stream has been quiet for
``keepalive`` seconds, so proxies and load balancers do not close it as idle while a
slow search or model thinks."""


def sse(data: Any, event: str | None = None) -> bytes:
    """One SSE frame; ``data`` is JSON-encoded unless it is already a string."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False,
                                                            default=str)
    head = f"event: {event}\n" if event else ""
    # a lone surrogate (not text, e.g. from a provider's "\ud800") is written as its JSON
    # escape rather than failing the encoder in the middle of a stream
    return f"{head}data: {payload}\n\n".encode("utf-8", "backslashreplace")


class EventStreamResponse(Response):
    """An ASGI response running ``producer`` (see the module docstring)."""

    media_type = "text/event-stream"

    def __init__(self, producer: Producer, *, stop: anyio.Event,
                 on_stop: Callable[[], bytes], keepalive: float = 15.0,
                 headers: dict[str, str] | None = None,
                 on_error: Callable[[str], bytes] | None = None) -> None:
        super().__init__(status_code=200, media_type=self.media_type)
        self.producer = producer
        self.stop = stop
        self.on_stop = on_stop
        self.on_error = on_error
        self.keepalive = keepalive
        self.extra_headers = headers or {}
        self.disconnected = False
        self.stopped = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The producer runs in the request's own task, inside a cancel scope; the two
        watchers (client gone; shutdown and keep-alive) are bare asyncio tasks that cancel
        that scope. Not an anyio task group: spawning three tasks and cancelling the group
        at the end (anyio formats the current task into the cancel reason) cost ~0.2 ms
        per stream, part of it before the first token. uvicorn runs the app on asyncio."""
        headers = [(b"content-type", b"text/event-stream; charset=utf-8"),
                   (b"cache-control", b"no-cache"), (b"x-accel-buffering", b"no"),
                   *((k.lower().encode(), v.encode()) for k, v in self.extra_headers.items())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})

        loop = asyncio.get_running_loop()
        finished = False
        failed: str | None = None
        last_write = loop.time()  # the clock of anyio's deadlines on asyncio

        with anyio.CancelScope() as work:
            async def write(frame: bytes) -> None:
                # straight to the server's send: a task and a queue between the producer
                # and the socket cost more per token than the rest of the server does
                nonlocal last_write
                try:
                    await send({"type": "http.response.body", "body": frame,
                                "more_body": True})
                except OSError:  # the socket went away between two events
                    self.disconnected = True
                    work.cancel()
                    await anyio.lowlevel.checkpoint()  # in the producer: cancelled here
                    return
                last_write = loop.time()

            async def watch_client() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                self.disconnected = True
                work.cancel()

            async def watch_stop_and_keep_alive() -> None:
                while not self.disconnected:
                    with anyio.move_on_after(last_write + self.keepalive - loop.time()):
                        await self.stop.wait()
                        self.stopped = True
                        work.cancel()
                        return
                    if loop.time() - last_write >= self.keepalive:
                        await write(KEEPALIVE_FRAME)

            watchers = [loop.create_task(watch_client()),
                        loop.create_task(watch_stop_and_keep_alive())]
            try:
                await self.producer(write)
                finished = True
            except Exception as exc:  # the headers are sent: end the stream properly
                log.exception("stream failed")
                failed = f"internal error: {type(exc).__name__}"
            finally:
                for watcher in watchers:
                    watcher.cancel()
        if self.disconnected:
            return
        tail = self.on_stop() if self.stopped and not finished else b""
        if failed is not None and self.on_error is not None:
            tail = self.on_error(failed)
        try:
            await send({"type": "http.response.body", "body": tail, "more_body": False})
        except OSError:
            self.disconnected = True
