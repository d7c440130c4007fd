"""Provider fallback (``web.providers``) with the first provider failing on every call.

A provider server of our own (its own process on 127.0.0.1) answers by the first part of
the path, so each provider's ``base_url`` picks a behaviour: ``/429``, ``/402``, ``/503``
(the first provider, Tavily's wire format), ``/slow`` (answers after 1 s; the first
provider's timeout is 0.2 s), and ``/ok`` (the second provider, Brave's wire format,
its recorded answer). A missing key (an unset ``api_key_env``) and an open circuit
(threshold 1, reset after an hour) are the other two ways.

For each way, 1,000 searches (50 at a time) with a 3 s request timeout: the share that
succeeds (no error, answered by the second provider) within the deadline. Then the cost
of an open circuit: p50 of a search whose first provider's circuit is open minus p50 of
a search configured with the second provider alone, interleaved call by call in the
same run (the goal: ≤ 50 ms).

Run: ``.venv/bin/python -m bench.bench_fallback`` (or ``make bench-fallback``).
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import statistics
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

from agent_search import SearchConfig, Searcher  # noqa: E402
from agent_search.web import create_handler  # noqa: E402

BRAVE = (ROOT / "tests" / "data" / "web-search-api-responses"
         / "brave_what_is_the_semantic_kernel.json").read_bytes()
SEARCHES = int(os.environ.get("BENCH_FALLBACK_SEARCHES", "1000"))
AT_ONCE = 50
TIMEOUT = 3.0
LATENCY_ROUNDS = 200


def _serve(port_out: Any) -> None:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # no 40 ms delayed-ACK stalls on keep-alive

        def log_message(self, *args: Any) -> None:
            return None

        def _reply(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            if length:
                self.rfile.read(length)
            way = self.path.split("/")[1]
            status, body = 200, BRAVE
            if way in ("429", "402", "503"):
                status, body = int(way), b'{"detail": "no"}'
            elif way == "slow":
                time.sleep(1.0)
                body = b'{"results": []}'
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up on a slow answer, as it should

        do_GET = do_POST = _reply

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.request_queue_size = 256
    port_out.put(httpd.server_address[1])
    httpd.serve_forever()


def _searcher(url: str, first: dict[str, Any] | None) -> Searcher:
    second = {"provider": "brave", "base_url": f"{url}/ok"}
    providers = [second] if first is None else [{"provider": "tavily", **first}, second]
    config = SearchConfig().merged({
        "web": {"providers": providers, "timeout": TIMEOUT},
        "options": {"timeout": TIMEOUT}})
    return Searcher(config, handlers=[create_handler(config)])


def _ways(url: str) -> dict[str, dict[str, Any]]:
    return {
        "429 rate limited": {"base_url": f"{url}/429"},
        "402 payment required": {"base_url": f"{url}/402"},
        "503 server error": {"base_url": f"{url}/503"},
        "timeout (0.2 s)": {"base_url": f"{url}/slow", "timeout": 0.2},
        "missing key": {"base_url": f"{url}/429", "api_key_env": "BENCH_NO_SUCH_KEY"},
        "open circuit": {"base_url": f"{url}/503",
                         "breaker": {"failure_threshold": 1, "reset_after": 3600}},
    }


async def _run_way(searcher: Searcher) -> tuple[int, float]:
    ok = 0
    worst = 0.0
    for start in range(0, SEARCHES, AT_ONCE):
        batch = range(start, min(SEARCHES, start + AT_ONCE))

        async def one(i: int) -> tuple[bool, float]:
            began = time.perf_counter()
            result = await searcher.search({"type": "web", "query": f"semantic kernel {i}"})
            took = time.perf_counter() - began
            return result.error is None and result.provider == "brave" and took <= TIMEOUT, took

        outcomes = await asyncio.gather(*(one(i) for i in batch))
        ok += sum(good for good, _ in outcomes)
        worst = max([worst, *(took for _, took in outcomes)])
    return ok, worst


async def _latency(url: str) -> tuple[float, float]:
    """p50 ms with the first provider's circuit open, and with the second alone."""
    opened = _searcher(url, _ways(url)["open circuit"])
    alone = _searcher(url, None)
    await opened.search({"type": "web", "query": "warm up"})  # opens the circuit
    await alone.search({"type": "web", "query": "warm up"})
    times: dict[str, list[float]] = {"open": [], "alone": []}
    for i in range(LATENCY_ROUNDS):
        for name, searcher in (("open", opened), ("alone", alone)):
            began = time.perf_counter()
            result = await searcher.search({"type": "web", "query": f"q {i}"})
            assert result.error is None, result.error
            times[name].append((time.perf_counter() - began) * 1000)
    return statistics.median(times["open"]), statistics.median(times["alone"])


async def main() -> None:
    import logging

    logging.getLogger("agent_search.web").setLevel(logging.ERROR)  # "circuit opened"
    os.environ.setdefault("TAVILY_API_KEY", "bench-key")
    os.environ.setdefault("BRAVE_API_KEY", "bench-key")
    os.environ.pop("BENCH_NO_SUCH_KEY", None)
    ports: Any = multiprocessing.Queue()
    server = multiprocessing.Process(target=_serve, args=(ports,), daemon=True)
    server.start()
    url = f"http://127.0.0.1:{ports.get(timeout=10)}"
    try:
        rows = []
        for way, first in _ways(url).items():
            searcher = _searcher(url, first)
            ok, worst = await _run_way(searcher)
            await searcher.aclose()
            rows.append((way, ok, worst))
        open_p50, alone_p50 = await _latency(url)
    finally:
        server.terminate()
    print(f"### Provider fallback ({SEARCHES} searches per way, {AT_ONCE} at a time, "
          f"{TIMEOUT:g} s timeout)\n")
    print("| first provider fails by | succeeded via the second | share | slowest (s) |")
    print("|---|---:|---:|---:|")
    for way, ok, worst in rows:
        print(f"| {way} | {ok} / {SEARCHES} | {ok / SEARCHES:.3f} | {worst:.2f} |")
    print(f"\nOpen circuit: p50 {open_p50:.2f} ms vs {alone_p50:.2f} ms with the second "
          f"provider alone: +{open_p50 - alone_p50:.2f} ms (goal ≤ 50 ms)")
    print(json.dumps({"ways": {w: ok / SEARCHES for w, ok, _ in rows},
                      "open_circuit_added_ms": round(open_p50 - alone_p50, 3)}))


if __name__ == "__main__":
    asyncio.run(main())
