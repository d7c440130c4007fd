"""A local HTTP rerank server for tests: Cohere/Jina shape on ``/v1/rerank``, TEI shape on
``/rerank``, plus ``/slow`` (sleeps) and ``/error`` (HTTP 500).

Relevance is the share of query words found in the document, so tests can predict the
order.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _relevance(query: str, doc: str) -> float:
    q = set(re.findall(r"\w+", query.lower()))
    d = set(re.findall(r"\w+", doc.lower()))
    return len(q & d) / len(q) if q else 0.0


class _Handler(BaseHTTPRequestHandler):
    server: RerankServer

    def log_message(self, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        self.server.requests.append({"path": self.path, "body": body,
                                     "auth": self.headers.get("Authorization")})
        if self.path == "/slow":
            time.sleep(5)
        if self.path == "/error":
            self._send(500, {"message": "reranker crashed"})
            return
        if self.path == "/rerank":  # TEI
            texts = body["texts"]
            out: Any = sorted(({"index": i, "score": _relevance(body["query"], t)}
                               for i, t in enumerate(texts)), key=lambda r: -r["score"])
        else:  # Cohere / Jina
            docs = body["documents"]
            out = {"results": sorted(({"index": i,
                                       "relevance_score": _relevance(body["query"], d)}
                                      for i, d in enumerate(docs)),
                                     key=lambda r: -r["relevance_score"])}
        self._send(200, out)

    def _send(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class RerankServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def start(self) -> RerankServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
