"""A real HTTP server on 127.0.0.1 for tests of clients at the network edge (web providers,
page fetching, OpenAI-compatible endpoints): it records each request and answers with
scripted replies (recorded provider payloads, errors, slow answers)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .data import RECORDED

SECRET = "sk-TESTSECRET-0123456789abcdef"
"""A distinctive API key: tests assert it never shows up in logs, events, traces, errors."""


def recorded(name: str) -> bytes:
    """A recorded provider payload, byte for byte (BOM included where it has one)."""
    return (RECORDED / name).read_bytes()


def recorded_json(name: str) -> Any:
    """A recorded provider payload, parsed (a BOM where it has one is dropped)."""
    return json.loads(recorded(name).decode("utf-8-sig"))


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def param(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None


@dataclass
class Reply:
    status: int = 200
    body: bytes | str | dict[str, Any] | list[Any] = b"{}"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    def payload(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode()
        return json.dumps(self.body).encode()


Responder = Callable[[Seen], Reply]


class LocalServer:
    """Routes ``(method, path)`` to a responder or a queue of replies (consumed in
    order; the last one repeats). Unknown routes get 404."""

    def __init__(self) -> None:
        self.requests: list[Seen] = []
        self.routes: dict[tuple[str, str], Responder | list[Reply]] = {}
        self._lock = threading.Lock()
        server = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return None

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                seen = Seen(self.command, parts.path, parse_qs(parts.query),
                            {k.lower(): v for k, v in self.headers.items()}, body)
                reply = server._reply(seen)
                if reply.delay:
                    time.sleep(reply.delay)
                data = reply.payload()
                try:
                    self.send_response(reply.status)
                    headers = {"content-type": "application/json", **reply.headers}
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = do_HEAD = _serve

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever,
                                        kwargs={"poll_interval": 0.02}, daemon=True)

    def _reply(self, seen: Seen) -> Reply:
        with self._lock:
            self.requests.append(seen)
            route = self.routes.get((seen.method, seen.path))
            if route is None:
                return Reply(404, {"error": f"no route {seen.method} {seen.path}"})
            if isinstance(route, list):
                return route.pop(0) if len(route) > 1 else route[0]
        return route(seen)

    def route(self, method: str, path: str, reply: Responder | Reply | list[Reply]) -> None:
        self.routes[(method, path)] = [reply] if isinstance(reply, Reply) else reply

    def start(self) -> LocalServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def seen(self, path: str) -> list[Seen]:
        """The requests received on ``path``, oldest first."""
        return [r for r in self.requests if r.path == path]
