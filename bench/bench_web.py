"""Web handler overhead over a local provider server.

A provider server of our own (a separate process on 127.0.0.1, so it does not share the
GIL with the client) answers with the recorded Bing (10 results, 33 KB) and Tavily
(4 results + answer, 49 KB) payloads. For each provider we time, interleaved call by
call so drift hits all alike:

- the baseline: a bare ``httpx`` request to the same URL, body read (+ ``json.loads``);
- the provider alone (``provider.search``), the handler (``handler.search``) and the
  whole searcher path (``searcher.search``: validation, stamping, citations, events).

Overhead = p50(handler) − p50(bare httpx); the goal is ≤ 2 ms. Keyword extraction cost
per message is reported too.

Run: ``.venv/bin/python -m bench.bench_web`` (or ``make bench``).
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

from agent_search import Request, SearchConfig, Searcher  # noqa: E402
from agent_search.query.keyword import extract_keywords  # noqa: E402
from agent_search.web import WebSettings, create_handler, create_provider  # noqa: E402

RECORDED = ROOT.parent / "shared" / "data" / "web-search-api-responses"
ROUNDS = int(os.environ.get("BENCH_WEB_ROUNDS", "400"))
WARMUP = 40
KEY = "bench-key-0000"


def _payloads() -> dict[str, bytes]:
    """The recorded payloads; synthetic ones of the same shape if the data is absent."""
    bing, tavily = RECORDED / "bing_what_is_the_semantic_kernel.json", \
        RECORDED / "tavily_what_is_the_semantic_kernel.json"
    if bing.is_file() and tavily.is_file():
        return {"/v7.0/search": bing.read_bytes(), "/search": tavily.read_bytes()}
    pages = [{"name": f"Result {i}", "url": f"https://example.com/{i}",
              "snippet": "Semantic Kernel is a lightweight SDK. " * 8} for i in range(10)]
    results = [{"title": f"R {i}", "url": f"https://example.com/{i}",
                "content": "Semantic Kernel is an SDK. " * 20, "score": 0.9 - i / 10}
               for i in range(4)]
    return {"/v7.0/search": json.dumps({"webPages": {"value": pages}}).encode(),
            "/search": json.dumps({"answer": "An SDK.", "results": results}).encode()}


def _serve(port_out: Any) -> None:
    payloads = _payloads()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def _reply(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            if length:
                self.rfile.read(length)
            body = payloads.get(self.path.split("?")[0], b"{}")
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _reply

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port_out.put(httpd.server_address[1])
    httpd.serve_forever()


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _measure(cases: dict[str, Callable[[], Awaitable[Any]]],
                   ) -> dict[str, tuple[list[float], list[float]]]:
    """Wall and CPU milliseconds per call of each case; cases run in a fresh random order
    each round so neither drift nor position favours one."""
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in cases}
    order = list(cases)
    rng = random.Random(7)
    for i in range(WARMUP + ROUNDS):
        rng.shuffle(order)
        for name in order:
            wall, cpu = time.perf_counter(), time.process_time()
            await cases[name]()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            if i >= WARMUP:
                times[name][0].append(wall * 1000)
                times[name][1].append(cpu * 1000)
    return times


Row = tuple[str, float, float, float]  # name, wall p50, wall p95, CPU p50 (ms)


async def _bench_provider(provider: str, base: str, path: str) -> list[Row]:
    import httpx

    os.environ[{"bing": "BING_API_KEY", "tavily": "TAVILY_API_KEY"}[provider]] = KEY
    web = {"provider": provider, "base_url": base, "breaker": {"enabled": True}}
    config = SearchConfig().merged({"web": web})
    handler = create_handler(config)
    searcher = Searcher(config)
    searcher.registry.register(handler)
    settings = WebSettings.from_section(config.web)
    direct = create_provider(settings, api_key=KEY)
    bare = httpx.AsyncClient(base_url=base, trust_env=False)
    request = Request(type="web", query="What is the Semantic Kernel?", limit=10)
    ctx = searcher.context()

    if provider == "tavily":
        async def bare_call() -> bytes:
            r = await bare.post(path, content=json.dumps({"query": request.query}),
                                headers={"Authorization": f"Bearer {KEY}"})
            return r.content
    else:
        async def bare_call() -> bytes:
            r = await bare.get(path, params={"q": request.query, "count": 10},
                               headers={"Ocp-Apim-Subscription-Key": KEY})
            return r.content

    async def bare_json() -> Any:
        return json.loads((await bare_call()).decode("utf-8-sig"))

    cases: dict[str, Callable[[], Awaitable[Any]]] = {
        "bare httpx (request + body)": bare_call,
        "bare httpx + json.loads": bare_json,
        "provider.search": lambda: direct.search(request.query, limit=10),
        "handler.search": lambda: handler.search(ctx, request),
        "searcher.search (full path)": lambda: searcher.search(request),
    }
    times = await _measure(cases)
    await bare.aclose()
    await direct.aclose()
    await handler.aclose()
    return [(f"{provider}: {name}", statistics.median(wall), _pct(wall, 0.95),
             statistics.median(cpu)) for name, (wall, cpu) in times.items()]


def _keyword_rows() -> list[tuple[str, float, float, float]]:
    rows = []
    for label, text in (("keywords (en)", "I want to find the best wireless headphones under $100"),
                        ("keywords (zh)", "我想找100元以下最好的无线耳机")):
        extract_keywords(text)  # warm (jieba dictionary)
        samples, cpu = [], []
        for _ in range(2000):
            wall, c = time.perf_counter(), time.process_time()
            extract_keywords(text)
            samples.append((time.perf_counter() - wall) * 1000)
            cpu.append((time.process_time() - c) * 1000)
        rows.append((label, statistics.median(samples), _pct(samples, 0.95),
                     statistics.median(cpu)))
    return rows


def main() -> None:
    queue: Any = multiprocessing.get_context("spawn").Queue()
    server = multiprocessing.get_context("spawn").Process(target=_serve, args=(queue,),
                                                          daemon=True)
    server.start()
    try:
        port = queue.get(timeout=30)
        base = f"http://127.0.0.1:{port}"

        async def run() -> list[Row]:
            rows = await _bench_provider("bing", base, "/v7.0/search")
            rows += await _bench_provider("tavily", base, "/search")
            return rows

        rows = asyncio.run(run())
    finally:
        server.terminate()
    rows += _keyword_rows()
    wall = {name: p50 for name, p50, _, _ in rows}
    cpu = {name: c for name, _, _, c in rows}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{ROUNDS} calls per case after {WARMUP} warm-up calls, interleaved in random "
          f"order; server in its own process on 127.0.0.1; load average {load:.2f} on "
          f"{os.cpu_count()} CPUs.\n")
    print("| case | wall p50 ms | wall p95 ms | CPU p50 ms |")
    print("|---|---:|---:|---:|")
    for name, p50, p95, c in rows:
        print(f"| {name} | {p50:.3f} | {p95:.3f} | {c:.3f} |")
    print("\nOverhead over the bare httpx call (request + body) to the same server:\n")
    print("| provider | handler − bare, wall p50 (ms) | handler − bare, CPU p50 (ms) "
          "| searcher − bare, wall p50 (ms) | goal ≤ 2 ms (wall) |")
    print("|---|---:|---:|---:|---|")
    for provider in ("bing", "tavily"):
        bare = f"{provider}: bare httpx (request + body)"
        handler = f"{provider}: handler.search"
        full = f"{provider}: searcher.search (full path)"
        over = wall[handler] - wall[bare]
        verdict = "met" if over <= 2.0 else "missed"
        print(f"| {provider} | {over:.3f} | {cpu[handler] - cpu[bare]:.3f} "
              f"| {wall[full] - wall[bare]:.3f} | {verdict} |")


if __name__ == "__main__":
    main()
