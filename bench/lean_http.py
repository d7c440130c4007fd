"""A minimal HTTP/1.1 client for the server benchmark: one keep-alive connection, JSON
requests, ``Content-Length`` and chunked responses, nothing else.

Why not httpx: its per-request cost (~1.3 ms for a small POST, ~3 ms for a streamed one
on the bench machine, measured against a trivial ASGI app) is larger than what the
benchmark tries to see. This client costs ~0.3 ms, so what remains is the server's
(bench_server.py reports both clients and the floor of each against a trivial app).
It is a measuring tool, not a general client: no redirects, no TLS, no retries.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any


class LeanClient:
    def __init__(self, host: str, port: int, headers: dict[str, str] | None = None) -> None:
        self.host, self.port = host, port
        self.headers = {"Host": f"{host}:{port}", **(headers or {})}
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def _send(self, method: str, path: str, body: Any) -> asyncio.StreamReader:
        if self._writer is None or self._writer.is_closing():
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        assert self._reader is not None
        data = b"" if body is None else json.dumps(body).encode()
        head = f"{method} {path} HTTP/1.1\r\n" + "".join(
            f"{k}: {v}\r\n" for k, v in self.headers.items())
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
        self._writer.write(head.encode() + b"\r\n" + data)
        return self._reader

    async def _head(self, reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
        status = int((await reader.readline()).split()[1])
        headers: dict[str, str] = {}
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        return status, headers

    async def request(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        """Status and whole body."""
        reader = await self._send(method, path, body)
        status, headers = await self._head(reader)
        if "content-length" in headers:
            return status, await reader.readexactly(int(headers["content-length"]))
        return status, b"".join([chunk async for chunk in self._chunks(reader)])

    async def stream(self, method: str, path: str, body: Any = None) -> AsyncIterator[bytes]:
        """The body of a chunked response, chunk by chunk, as the server wrote it; read
        it to the end (the connection is reused)."""
        reader = await self._send(method, path, body)
        status, _ = await self._head(reader)
        if status != 200:
            raise RuntimeError(f"HTTP {status}")
        async for chunk in self._chunks(reader):
            yield chunk

    @staticmethod
    async def _chunks(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
        while size := int((await reader.readline()).strip(), 16):
            yield await reader.readexactly(size)
            await reader.readexactly(2)
        await reader.readline()

    async def aclose(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
