"""Server-sent events with the two endings a stream can have besides finishing:

* the client goes away — the producer is cancelled at once (its searches and the LLM
  call with it), not when the next write happens to fail;
* the server shuts down — after the grace period the producer is cancelled and the
  stream ends with a final event of the producer's choosing (``done`` with an error for
  the native stream, a finishing chunk and ``[DONE]`` for chat completions).

The producer is a coroutine ``produce(write)``; it owns its resources and must release
them in ``finally`` (shielded): it is cancelled in both cases above.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

Write = Callable[[bytes], Awaitable[None]]
_QUEUED_FRAMES = 256
"""Frames a producer may run ahead of a slow client before ``write`` waits."""
Producer = Callable[[Write], Awaitable[None]]


def sse(data: Any, event: str | None = None) -> bytes:
    """One SSE frame; ``data`` is JSON-encoded unless it is already a string."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False,
                                                            default=str)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


class EventStreamResponse(Response):
    """An ASGI response running ``producer`` (see the module docstring)."""

    media_type = "text/event-stream"

    def __init__(self, producer: Producer, *, stop: anyio.Event,
                 on_stop: Callable[[], bytes], headers: dict[str, str] | None = None) -> None:
        super().__init__(status_code=200, media_type=self.media_type)
        self.producer = producer
        self.stop = stop
        self.on_stop = on_stop
        self.extra_headers = headers or {}
        self.disconnected = False
        self.stopped = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"text/event-stream; charset=utf-8"),
                   (b"cache-control", b"no-cache"), (b"x-accel-buffering", b"no"),
                   *((k.lower().encode(), v.encode()) for k, v in self.extra_headers.items())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})

        finished = False
        produced = False
        frames_in, frames_out = anyio.create_memory_object_stream[bytes](_QUEUED_FRAMES)
        async with anyio.create_task_group() as tg:
            async def run() -> None:
                nonlocal produced
                async with frames_in:
                    await self.producer(frames_in.send)
                    produced = True  # before the close the sender will see

            async def sender() -> None:
                # one write per burst: frames queued while the last write was in flight
                # go out together, so a busy server makes fewer, larger writes
                nonlocal finished
                async with frames_out:
                    async for frame in frames_out:
                        burst = [frame]
                        while True:
                            try:
                                burst.append(frames_out.receive_nowait())
                            except (anyio.WouldBlock, anyio.EndOfStream):
                                break
                        try:
                            await send({"type": "http.response.body", "body": b"".join(burst),
                                        "more_body": True})
                        except OSError:  # the socket went away between two events
                            self.disconnected = True
                            tg.cancel_scope.cancel()
                            return
                finished = produced
                tg.cancel_scope.cancel()

            async def watch_client() -> None:
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        self.disconnected = True
                        tg.cancel_scope.cancel()
                        return

            async def watch_stop() -> None:
                await self.stop.wait()
                self.stopped = True
                tg.cancel_scope.cancel()

            tg.start_soon(watch_client)
            tg.start_soon(watch_stop)
            tg.start_soon(sender)
            tg.start_soon(run)
        if self.disconnected:
            return
        tail = self.on_stop() if self.stopped and not finished else b""
        try:
            await send({"type": "http.response.body", "body": tail, "more_body": False})
        except OSError:
            self.disconnected = True
