"""Text-search layer overhead: what TextSearch, tools and templates add to a search.

(a) In-process: a handler that returns 10 items at once, so every microsecond measured is
    overhead. Baseline: ``searcher.search(Request)`` directly. Compared: the three
    ``SearcherTextSearch`` methods, a search function's ``invoke`` (JSON-Schema argument
    validation + JSON-ready output), and argument validation alone.
(b) Over HTTP: Bing's recorded payload served by a local server on 127.0.0.1. Baseline:
    the web provider's ``search_response`` directly; compared: ``WebProviderTextSearch``
    text results and native records.

Median of N calls after warm-up; ratio = median ÷ baseline median (same run).
Run: ``.venv/bin/python -m bench.bench_textsearch``.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]

from agent_search import Context, Request, Result, ResultItem, SearchConfig, Searcher  # noqa: E402
from agent_search.textsearch import (  # noqa: E402
    SearcherTextSearch,
    WebProviderTextSearch,
    create_search_function,
)

RECORDED = ROOT.parent / "shared" / "data" / "web-search-api-responses"
N_LOCAL = 2000
N_HTTP = 200
QUERY = "What is the Semantic Kernel?"


class InstantHandler:
    type = "web"

    def can_handle(self, ctx: Context, request: Request) -> bool:
        return True

    async def search(self, ctx: Context, request: Request) -> Result:
        items = [ResultItem(title=f"t{i}", content="some text " * 20,
                            url=f"https://example.org/{i}", score=1 - i / 20)
                 for i in range(request.limit or 10)]
        return Result(type="web", query=request.query, items=items, total=len(items))


async def _median_us(fn: Callable[[], Awaitable[Any]], n: int) -> float:
    for _ in range(max(10, n // 20)):
        await fn()
    times = []
    for _ in range(n):
        started = time.perf_counter()
        await fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


def _serve_bing() -> tuple[ThreadingHTTPServer, str]:
    body = (RECORDED / "bing_what_is_the_semantic_kernel.json").read_bytes()

    class _H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        wbufsize = 1 << 16  # headers and body in one write: no Nagle/delayed-ACK stall

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _H)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


async def main() -> None:
    rows: list[tuple[str, float, float]] = []

    searcher = Searcher(SearchConfig(home=ROOT / ".agent_search"))
    searcher.registry.register(InstantHandler())
    ts = SearcherTextSearch(searcher, "web")
    fn = create_search_function(ts, output_type="text_search_result")
    request = Request(type="web", query=QUERY, limit=10)
    args = {"query": QUERY, "count": 10}

    base = await _median_us(lambda: searcher.search(request), N_LOCAL)
    rows.append(("searcher.search (baseline)", base, 1.0))
    for label, call in (
        ("TextSearch.get_search_results", lambda: ts.get_search_results(QUERY, {"top": 10})),
        ("TextSearch.get_text_search_results",
         lambda: ts.get_text_search_results(QUERY, {"top": 10})),
        ("TextSearch.search (strings)", lambda: ts.search(QUERY, {"top": 10})),
        ("SearchFunction.invoke (validate + run + JSON)", lambda: fn.invoke(args)),
    ):
        us = await _median_us(call, N_LOCAL)
        rows.append((label, us, us / base))

    async def validate_only() -> None:
        fn.validate_arguments(args)

    us = await _median_us(validate_only, N_LOCAL)
    rows.append(("argument validation alone", us, us / base))

    import os

    os.environ["BING_API_KEY"] = "bench"
    httpd, url = _serve_bing()
    try:
        web = WebProviderTextSearch.from_config(SearchConfig(
            home=ROOT / ".agent_search", web={"provider": "bing", "base_url": url}))
        provider = web.provider
        http_base = await _median_us(lambda: provider.search_response(QUERY, limit=10), N_HTTP)
        rows.append(("bing provider.search_response (baseline, HTTP)", http_base, 1.0))
        for label, call in (
            ("WebProviderTextSearch.get_text_search_results",
             lambda: web.get_text_search_results(QUERY, {"top": 10})),
            ("WebProviderTextSearch.get_search_results (BingWebPage)",
             lambda: web.get_search_results(QUERY, {"top": 10})),
        ):
            us = await _median_us(call, N_HTTP)
            rows.append((label, us, us / http_base))
        await web.aclose()
    finally:
        httpd.shutdown()

    print("| operation | median µs | × baseline |")
    print("|---|---:|---:|")
    for label, us, ratio in rows:
        print(f"| {label} | {us:,.0f} | {ratio:.2f} |")
    print(f"\n_{N_LOCAL} in-process calls, {N_HTTP} HTTP calls per row; 10 results each._")


if __name__ == "__main__":
    anyio.run(main)
