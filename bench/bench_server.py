"""Benchmark of the HTTP service against calling the library in-process, in the same run.

Run: ``.venv/bin/python -m bench.bench_server [--streams 200] [--rounds 40]
[--http auto|h11|httptools] [--loop auto|asyncio|uvloop]``

The server is ``agent-search serve``'s app in its own process (uvicorn, one worker) on
127.0.0.1, with search handlers of our own that sleep a fixed time (web 30 ms, kb 20 ms,
db 10 ms for the chat; three 50 ms handlers for search), so both sides do the same work.
``--http`` / ``--loop`` are uvicorn's options for both servers; ``auto`` (the default, as
``agent-search serve``) takes httptools and uvloop when they are installed, else h11 and
asyncio. The first line printed says which ran.

Every HTTP figure is taken with two clients: ``lean_http.LeanClient`` (a minimal
keep-alive HTTP/1.1 client, ~0.3 ms a request) and httpx (~1.3 ms a request, ~3 ms a
streamed one): with httpx alone, a good part of "what HTTP adds" is the client's. The
floor table is the same uvicorn serving a trivial ASGI app: what sockets, uvicorn and
each client cost with no application at all. CPU milliseconds per call (of the process
doing the work: the bench process in-process, the server over HTTP) are reported next
to the times, because they do not grow when other programs share the machine.

1. **Chat TTFT, one at a time** (``--rounds``): a streaming chat completion over HTTP
   (first content chunk) against ``assistant.stream()`` in-process (first ``text``
   event); the offline responder, then the local OpenAI-compatible LLM server
   (``agent_search.testing.chat_server``, 20 tokens). Goal: HTTP adds ≤ 5 ms at p50.
2. **POST /v1/search** with three 50 ms handlers (one request of three searches) against
   ``search_many`` in-process: p50/p95. Goal: ≤ +3 ms at p50.
3. **The floor** (above).
4. **200 concurrent streaming chat completions** (``--streams``), both ways, the lean
   client with one connection per stream: errors, TTFT p50/p95, wall time, streams/s,
   CPU per stream of the server and of the client, server RSS.

Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[1]

from agent_search.agent import Assistant, Options  # noqa: E402
from agent_search.events import TextDelta  # noqa: E402
from agent_search.searcher import Searcher  # noqa: E402
from agent_search.types import Request  # noqa: E402
from bench.bench_agent import pct, sleep_handler  # noqa: E402
from bench.lean_http import LeanClient  # noqa: E402

CHAT_DELAYS = {"web": 0.030, "kb": 0.020, "db": 0.010}
SEARCH_DELAY = 0.050
QUESTION = "Which wireless headphones under 100 dollars have the best battery life?"
KEY = "sk-bench-key"


def write_project(root: Path, llm_url: str) -> tuple[Path, Path]:
    import hashlib

    cdir, adir = root / "config", root / "assistants"
    cdir.mkdir(parents=True, exist_ok=True)
    (cdir / "agent.yml").write_text(json.dumps({
        "connectors": {"local": {"base_url": llm_url, "model": "bench"}},
        "server": {"api_keys": [{"sha256": hashlib.sha256(KEY.encode()).hexdigest(),
                                 "user_id": "bench"}],
                   "rate_limit": {"per_minute": 1e6, "burst": 100_000},
                   "max_streams": 1000}}))
    for name, connector in (("offline", None), ("llm", "local")):
        (adir / name).mkdir(parents=True, exist_ok=True)
        package: dict[str, Any] = {"name": name, "search": {"web": True, "kb": True, "db": True}}
        if connector:
            package["connector"] = connector
        (adir / name / "package.yao").write_text(json.dumps(package))
    return cdir, adir


def register_handlers(searchers: list[Searcher], chat: bool) -> None:
    for searcher in searchers:
        for t, d in CHAT_DELAYS.items():
            searcher.registry.register(sleep_handler(t, d if chat else SEARCH_DELAY))


# -- the server process ----------------------------------------------------------------

def serve(root: Path, port: int, http: str, loop: str) -> None:
    import uvicorn

    from agent_search.server import Service, ServiceOptions, create_app

    service = Service.load(ServiceOptions(config_dir=root / "config",
                                          assistants_dir=root / "assistants",
                                          builtin_handlers=False))
    register_handlers([a.searcher for a in service.assistants.values()], chat=True)
    register_handlers([service.searcher], chat=False)
    uvicorn.run(create_app(service, own_process=True), host="127.0.0.1", port=port,
                log_level="warning", http=http, loop=loop)  # type: ignore[arg-type]


def start(cmd: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)


# -- the floor: a trivial ASGI app on the same uvicorn ---------------------------------

async def floor_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Answers every POST at once: JSON for /v1/search, two SSE frames otherwise. What a
    client measures against it is uvicorn, the sockets and the client itself."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    while (await receive()).get("more_body"):
        pass
    if scope["path"] == "/v1/search":
        body = b'{"type": "merged", "items": []}'
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]})
        await send({"type": "http.response.body", "body": body})
        return
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/event-stream")]})
    await send({"type": "http.response.body", "more_body": True,
                "body": b'data: {"choices": [{"delta": {"content": "Hi"}}]}\n\n'})
    await send({"type": "http.response.body", "body": b"data: [DONE]\n\n"})


def serve_floor(port: int, http: str, loop: str) -> None:
    import uvicorn

    uvicorn.run(floor_app, host="127.0.0.1", port=port, log_level="warning", http=http,
                loop=loop)  # type: ignore[arg-type]


def resolved(http: str, loop: str) -> str:
    """What uvicorn's ``auto`` picks here: httptools / uvloop when importable."""
    import importlib.util

    if http == "auto":
        http = "httptools" if importlib.util.find_spec("httptools") else "h11"
    if loop == "auto":
        loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    return f"uvicorn --http {http} --loop {loop}"


# -- measurements ----------------------------------------------------------------------

def chat_body(model: str) -> dict[str, Any]:
    return {"model": model, "stream": True,
            "messages": [{"role": "user", "content": QUESTION}]}


async def httpx_ttft(client: httpx.AsyncClient, model: str) -> float:
    start = time.perf_counter()
    first = None
    async with client.stream("POST", "/v1/chat/completions", json=chat_body(model)) as r:
        r.raise_for_status()
        async for line in r.aiter_lines():
            if first is None and _has_text(line.encode()):
                first = time.perf_counter() - start
    if first is None:
        raise RuntimeError("no content")
    return first * 1000


async def lean_ttft(client: LeanClient, model: str) -> float:
    start = time.perf_counter()
    first = None
    async for chunk in client.stream("POST", "/v1/chat/completions", chat_body(model)):
        if first is None and _has_text(chunk):
            first = time.perf_counter() - start
    if first is None:
        raise RuntimeError("no content")
    return first * 1000


def _has_text(frame: bytes) -> bool:
    """A chunk with answer text (not the opening role chunk, whose content is empty)."""
    at = frame.find(b'"delta": {"content": "')
    return at >= 0 and frame[at + 22:at + 23] != b'"'


async def local_ttft(assistant: Assistant) -> float:
    start = time.perf_counter()
    first = None
    async for event in assistant.stream([{"role": "user", "content": QUESTION}], Options()):
        if first is None and isinstance(event, TextDelta):
            first = time.perf_counter() - start
    if first is None:
        raise RuntimeError("no text")
    return first * 1000


async def timed(work: Any) -> float:
    start = time.perf_counter()
    await work
    return (time.perf_counter() - start) * 1000


async def watch_rss(proc: psutil.Process, peak: list[float]) -> None:
    """Keep the highest RSS (MB) of ``proc`` in ``peak[0]`` until cancelled."""
    while True:
        peak[0] = max(peak[0], proc.memory_info().rss / 2**20)
        await asyncio.sleep(0.05)


def cpu_seconds(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return float(times.user + times.system)


async def concurrent(n: int, one: Any) -> tuple[list[float], int, float]:
    start = time.perf_counter()
    outcomes = await asyncio.gather(*(one(i) for i in range(n)), return_exceptions=True)
    wall = time.perf_counter() - start
    ok = [o for o in outcomes if isinstance(o, float)]
    return ok, n - len(ok), wall


async def rounds(n: int, cases: dict[str, Any], meter: dict[str, psutil.Process],
                 warmup: int = 3) -> tuple[dict[str, list[float]], dict[str, float]]:
    """``n`` rounds of every case, interleaved (so a busy moment of the machine hits all
    of them alike), after ``warmup`` rounds: the times, and the CPU milliseconds per call
    of the process ``meter`` names for the case (the one doing the work). CPU time does
    not grow when other programs share the machine; wall time does."""
    out: dict[str, list[float]] = {name: [] for name in cases}
    cpu = dict.fromkeys(cases, 0.0)
    for i in range(warmup + n):
        for name, case in cases.items():
            before = cpu_seconds(meter[name])
            value = await case()
            if i >= warmup:
                out[name].append(value)
                cpu[name] += cpu_seconds(meter[name]) - before
    return out, {name: total * 1000 / n for name, total in cpu.items()}


def p50(values: list[float]) -> float:
    return statistics.median(values)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--http", choices=("auto", "h11", "httptools"), default="auto")
    parser.add_argument("--loop", choices=("auto", "asyncio", "uvloop"), default="auto")
    args = parser.parse_args()
    print(f"server: {resolved(args.http, args.loop)}; load average "
          f"{os.getloadavg()[0]:.1f} at the start\n")

    llm = start([sys.executable, "-m", "agent_search.testing.chat_server", "0"],
                dict(os.environ))
    assert llm.stdout is not None
    ready = llm.stdout.readline().split()
    llm_url = f"http://127.0.0.1:{ready[1]}/v1"
    tmp = tempfile.TemporaryDirectory()
    root = Path(tmp.name)
    write_project(root, llm_url)
    env = {**os.environ, "AGENT_SEARCH_HOME": str(root / "server-home"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    port = 18000 + os.getpid() % 1000
    floor_port = port + 1
    uv = [args.http, args.loop]
    this = [sys.executable, "-m", "bench.bench_server"]
    server = subprocess.Popen([*this, "--serve", str(root), str(port), *uv], env=env)
    floor = subprocess.Popen([*this, "--floor", str(floor_port), *uv], env=env)
    os.environ["AGENT_SEARCH_HOME"] = str(root / "local-home")
    assistants = {name: Assistant.load(root / "assistants" / name, config_dir=root / "config",
                                       builtin_handlers=False) for name in ("offline", "llm")}
    register_handlers([a.searcher for a in assistants.values()], chat=True)
    searcher = Searcher()
    register_handlers([searcher], chat=False)
    auth = {"Authorization": f"Bearer {KEY}"}
    limits = httpx.Limits(max_connections=args.streams + 10,
                          max_keepalive_connections=args.streams + 10)
    lean = LeanClient("127.0.0.1", port, auth)
    lean_floor = LeanClient("127.0.0.1", floor_port)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", limits=limits,
                                     headers=auth, timeout=120) as client, \
                httpx.AsyncClient(base_url=f"http://127.0.0.1:{floor_port}") as httpx_floor:
            for url in (f"http://127.0.0.1:{port}/healthz", f"http://127.0.0.1:{floor_port}/"):
                for _ in range(600):
                    try:
                        await client.get(url)
                        break
                    except httpx.HTTPError:
                        await asyncio.sleep(0.1)
            proc = psutil.Process(server.pid)
            rss_idle = proc.memory_info().rss / 2**20

            me, floor_proc = psutil.Process(), psutil.Process(floor.pid)
            meter = {"local": me, "lean": proc, "httpx": proc}
            chat, chat_cpu = {}, {}
            for model in ("offline", "llm"):
                chat[model], chat_cpu[model] = await rounds(args.rounds, {
                    "local": lambda m=model: local_ttft(assistants[m]),
                    "lean": lambda m=model: lean_ttft(lean, m),
                    "httpx": lambda m=model: httpx_ttft(client, m)}, meter)
            requests = [{"type": t, "query": QUESTION} for t in ("web", "kb", "db")]
            search, search_cpu = await rounds(args.rounds, {
                "local": lambda: timed(searcher.search_many([Request(**q) for q in requests])),
                "lean": lambda: timed(lean.request("POST", "/v1/search", requests)),
                "httpx": lambda: timed(client.post("/v1/search", json=requests))}, meter)
            floors, floor_cpu = await rounds(args.rounds * 2, {
                "lean json": lambda: timed(lean_floor.request("POST", "/v1/search", requests)),
                "httpx json": lambda: timed(httpx_floor.post("/v1/search", json=requests)),
                "lean sse": lambda: lean_ttft(lean_floor, "x"),
                "httpx sse": lambda: httpx_ttft(httpx_floor, "x")},
                dict.fromkeys(("lean json", "httpx json", "lean sse", "httpx sse"), floor_proc))

            print(f"## Chat time to first token, one stream at a time ({args.rounds} rounds; "
                  "searches 30/20/10 ms in parallel)\n")
            print("| responder | in-process p50 (ms) | HTTP p50, lean client (ms) | adds | "
                  "HTTP p50, httpx (ms) | adds | in-process p95 | HTTP p95, lean | "
                  "CPU per stream: in-process / server (ms) |")
            print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
            for model, m in chat.items():
                name = "offline" if model == "offline" else "local LLM server"
                cpu = chat_cpu[model]
                print(f"| {name} | {p50(m['local']):.2f} | {p50(m['lean']):.2f} | "
                      f"{p50(m['lean']) - p50(m['local']):+.2f} | {p50(m['httpx']):.2f} | "
                      f"{p50(m['httpx']) - p50(m['local']):+.2f} | "
                      f"{pct(m['local'], .95):.2f} | {pct(m['lean'], .95):.2f} | "
                      f"{cpu['local']:.1f} / {(cpu['lean'] + cpu['httpx']) / 2:.1f} |")
            print(f"\n## POST /v1/search, three 50 ms searches in parallel ({args.rounds} "
                  "rounds)\n")
            print("| path | p50 (ms) | adds p50 (ms) | p95 (ms) | CPU per call (ms) |")
            print("|---|---:|---:|---:|---:|")
            for key, name in (("local", "in-process search_many"),
                              ("lean", "HTTP, lean client"), ("httpx", "HTTP, httpx")):
                where = "in-process" if key == "local" else "server"
                print(f"| {name} | {p50(search[key]):.2f} | "
                      f"{p50(search[key]) - p50(search['local']):+.2f} | "
                      f"{pct(search[key], .95):.2f} | {search_cpu[key]:.2f} ({where}) |")
            print(f"\n## Floor: the same uvicorn serving a trivial ASGI app ({args.rounds * 2} "
                  "rounds)\n")
            print("| client | POST → JSON p50 (ms) | POST → first SSE frame p50 (ms) | "
                  "server CPU per call (ms) |")
            print("|---|---:|---:|---:|")
            for c in ("lean", "httpx"):
                print(f"| {c} | {p50(floors[f'{c} json']):.2f} | {p50(floors[f'{c} sse']):.2f} | "
                      f"{(floor_cpu[f'{c} json'] + floor_cpu[f'{c} sse']) / 2:.2f} |")

            print(f"\n## {args.streams} concurrent streaming chat completions (lean client, "
                  "one connection each)\n")
            print("| responder | path | errors | TTFT p50 (ms) | TTFT p95 (ms) | wall (s) | "
                  "streams/s | server CPU ms/stream | client CPU ms/stream | "
                  "server RSS (MB) |")
            print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
            for model in ("offline", "llm"):
                name = "offline" if model == "offline" else "local LLM server"
                c0 = cpu_seconds(me)
                ok, errors, wall = await concurrent(
                    args.streams, lambda _i, m=model: local_ttft(assistants[m]))
                local_cpu = (cpu_seconds(me) - c0) * 1000 / args.streams
                print(f"| {name} | in-process | {errors} | {pct(ok, .5):.1f} | "
                      f"{pct(ok, .95):.1f} | {wall:.2f} | {args.streams / wall:.0f} | — | "
                      f"{local_cpu:.1f} | — |")
                leans = [LeanClient("127.0.0.1", port, auth) for _ in range(args.streams)]
                peak = [0.0]
                watcher = asyncio.create_task(watch_rss(proc, peak))
                c0, s0 = cpu_seconds(me), cpu_seconds(proc)
                ok, errors, wall = await concurrent(
                    args.streams, lambda i, m=model, c=leans: lean_ttft(c[i], m))
                client_cpu = (cpu_seconds(me) - c0) * 1000 / args.streams
                server_cpu = (cpu_seconds(proc) - s0) * 1000 / args.streams
                watcher.cancel()
                for one in leans:
                    await one.aclose()
                print(f"| {name} | HTTP | {errors} | {pct(ok, .5):.1f} | {pct(ok, .95):.1f} | "
                      f"{wall:.2f} | {args.streams / wall:.0f} | {server_cpu:.1f} | "
                      f"{client_cpu:.1f} | {peak[0]:.0f} (idle {rss_idle:.0f}) |")
    finally:
        await lean.aclose()
        await lean_floor.aclose()
        for proc_ in (server, floor, llm):
            proc_.terminate()
            proc_.wait(30)
        for a in assistants.values():
            await a.aclose()
        tmp.cleanup()


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--serve":
        serve(Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5])
    elif len(sys.argv) == 5 and sys.argv[1] == "--floor":
        serve_floor(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    else:
        asyncio.run(main())
