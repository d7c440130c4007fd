"""Benchmark of the HTTP service against calling the library in-process, in the same run.

Run: ``.venv/bin/python bench/bench_server.py [--streams 200] [--rounds 40]``

The server is ``agent-search serve``'s app in its own process (uvicorn, one worker) on
127.0.0.1, with search handlers of our own that sleep a fixed time (web 30 ms, kb 20 ms,
db 10 ms for the chat; three 50 ms handlers for search), so both sides do the same work.

1. **Chat TTFT, one at a time** (``--rounds``): a streaming chat completion over HTTP
   (first content chunk) against ``assistant.stream()`` in-process (first ``text``
   event); the offline responder, then the local OpenAI-compatible LLM server
   (``tests/agent/agent_llm_server.py``, 20 tokens). Goal: HTTP adds ≤ 5 ms at p50.
2. **200 concurrent streaming chat completions** (``--streams``), both ways: errors,
   TTFT p50/p95, wall time, streams/s, server RSS.
3. **POST /v1/search** with three 50 ms handlers (one request of three searches) against
   ``search_many`` in-process: p50/p95. Goal: ≤ +3 ms at p50.

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
sys.path.insert(0, str(ROOT))

from bench_agent import pct, sleep_handler  # noqa: E402  (bench/ is the script's folder)

from agent_search.agent import Assistant, Options  # noqa: E402
from agent_search.events import TextDelta  # noqa: E402
from agent_search.searcher import Searcher  # noqa: E402
from agent_search.types import Request  # noqa: E402

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

def serve(root: Path, port: int) -> None:
    import uvicorn

    from agent_search.server import Service, ServiceOptions, create_app

    service = Service.load(ServiceOptions(config_dir=root / "config",
                                          assistants_dir=root / "assistants",
                                          builtin_handlers=False))
    register_handlers([a.searcher for a in service.assistants.values()], chat=True)
    register_handlers([service.searcher], chat=False)
    uvicorn.run(create_app(service), host="127.0.0.1", port=port, log_level="warning")


def start(cmd: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)


# -- measurements ----------------------------------------------------------------------

async def http_ttft(client: httpx.AsyncClient, model: str) -> float:
    start = time.perf_counter()
    body = {"model": model, "stream": True, "messages": [{"role": "user", "content": QUESTION}]}
    first = None
    async with client.stream("POST", "/v1/chat/completions", json=body) as r:
        r.raise_for_status()
        async for line in r.aiter_lines():
            if first is None and line.startswith("data: {") and '"content": "' in line \
                    and '"content": ""' not in line:
                first = time.perf_counter() - start
    if first is None:
        raise RuntimeError("no content")
    return first * 1000


async def local_ttft(assistant: Assistant) -> float:
    start = time.perf_counter()
    first = None
    async for event in assistant.stream([{"role": "user", "content": QUESTION}], Options()):
        if first is None and isinstance(event, TextDelta):
            first = time.perf_counter() - start
    if first is None:
        raise RuntimeError("no text")
    return first * 1000


async def watch_rss(proc: psutil.Process, peak: list[float]) -> None:
    """Keep the highest RSS (MB) of ``proc`` in ``peak[0]`` until cancelled."""
    while True:
        peak[0] = max(peak[0], proc.memory_info().rss / 2**20)
        await asyncio.sleep(0.05)


async def concurrent(n: int, one: Any) -> tuple[list[float], int, float]:
    start = time.perf_counter()
    outcomes = await asyncio.gather(*(one() for _ in range(n)), return_exceptions=True)
    wall = time.perf_counter() - start
    ok = [o for o in outcomes if isinstance(o, float)]
    return ok, n - len(ok), wall


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--serve", nargs=2, metavar=("ROOT", "PORT"), help=argparse.SUPPRESS)
    args = parser.parse_args()

    llm = start([sys.executable, str(ROOT / "tests/agent/agent_llm_server.py"), "0"],
                dict(os.environ))
    assert llm.stdout is not None
    ready = llm.stdout.readline().split()
    llm_url = f"http://127.0.0.1:{ready[1]}/v1"
    tmp = tempfile.TemporaryDirectory()
    root = Path(tmp.name)
    write_project(root, llm_url)
    env = {**os.environ, "AGENT_SEARCH_HOME": str(root / "server-home"),
           "PYTHONPATH": str(ROOT)}
    port = 18000 + os.getpid() % 1000
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(root), str(port)],
                              env=env)
    os.environ["AGENT_SEARCH_HOME"] = str(root / "local-home")
    assistants = {name: Assistant.load(root / "assistants" / name, config_dir=root / "config",
                                       builtin_handlers=False) for name in ("offline", "llm")}
    register_handlers([a.searcher for a in assistants.values()], chat=True)
    searcher = Searcher()
    register_handlers([searcher], chat=False)
    limits = httpx.Limits(max_connections=args.streams + 10,
                          max_keepalive_connections=args.streams + 10)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", limits=limits,
                                     headers={"Authorization": f"Bearer {KEY}"},
                                     timeout=120) as client:
            for _ in range(600):
                try:
                    if (await client.get("/healthz")).status_code == 200:
                        break
                except httpx.HTTPError:
                    await asyncio.sleep(0.1)
            proc = psutil.Process(server.pid)
            rss_idle = proc.memory_info().rss / 2**20
            rows = []
            for model in ("offline", "llm"):
                for _ in range(3):  # warm up both paths
                    await http_ttft(client, model)
                    await local_ttft(assistants[model])
                http, local = [], []
                for _ in range(args.rounds):
                    http.append(await http_ttft(client, model))
                    local.append(await local_ttft(assistants[model]))
                rows.append((model, local, http))

            print(f"## Chat time to first token, one stream at a time ({args.rounds} rounds; "
                  "searches 30/20/10 ms in parallel)\n")
            print("| responder | in-process p50 (ms) | HTTP p50 (ms) | HTTP adds p50 (ms) | "
                  "in-process p95 (ms) | HTTP p95 (ms) |")
            print("|---|---:|---:|---:|---:|---:|")
            for model, local, http in rows:
                name = "offline" if model == "offline" else "local LLM server"
                print(f"| {name} | {statistics.median(local):.2f} | "
                      f"{statistics.median(http):.2f} | "
                      f"{statistics.median(http) - statistics.median(local):+.2f} | "
                      f"{pct(local, 0.95):.2f} | {pct(http, 0.95):.2f} |")

            requests = [{"type": t, "query": QUESTION} for t in ("web", "kb", "db")]
            http_s, local_s = [], []
            for i in range(args.rounds + 3):
                t = time.perf_counter()
                r = await client.post("/v1/search", json=requests)
                r.raise_for_status()
                h = (time.perf_counter() - t) * 1000
                t = time.perf_counter()
                await searcher.search_many([Request(**q) for q in requests])
                loc = (time.perf_counter() - t) * 1000
                if i >= 3:
                    http_s.append(h)
                    local_s.append(loc)
            print(f"\n## POST /v1/search, three 50 ms searches in parallel ({args.rounds} "
                  "rounds)\n")
            print("| path | p50 (ms) | p95 (ms) |")
            print("|---|---:|---:|")
            print(f"| in-process search_many | {pct(local_s, .5):.2f} | {pct(local_s, .95):.2f} |")
            print(f"| HTTP POST /v1/search | {pct(http_s, .5):.2f} | {pct(http_s, .95):.2f} |")
            print(f"\nHTTP adds {pct(http_s, .5) - pct(local_s, .5):+.2f} ms at p50.")
            print(f"\n## {args.streams} concurrent streaming chat completions\n")
            print("| responder | path | errors | TTFT p50 (ms) | TTFT p95 (ms) | wall (s) | "
                  "streams/s | server RSS (MB) |")
            print("|---|---|---:|---:|---:|---:|---:|---:|")
            for model in ("offline", "llm"):
                name = "offline" if model == "offline" else "local LLM server"
                ok, errors, wall = await concurrent(args.streams,
                                                    lambda m=model: local_ttft(assistants[m]))
                print(f"| {name} | in-process | {errors} | {pct(ok, .5):.1f} | "
                      f"{pct(ok, .95):.1f} | {wall:.2f} | {args.streams / wall:.0f} | — |")
                peak = [0.0]
                watcher = asyncio.create_task(watch_rss(proc, peak))
                ok, errors, wall = await concurrent(args.streams,
                                                    lambda m=model: http_ttft(client, m))
                watcher.cancel()
                print(f"| {name} | HTTP | {errors} | {pct(ok, .5):.1f} | {pct(ok, .95):.1f} | "
                      f"{wall:.2f} | {args.streams / wall:.0f} | {peak[0]:.0f} "
                      f"(idle {rss_idle:.0f}) |")

    finally:
        server.terminate()
        server.wait(30)
        llm.terminate()
        llm.wait(10)
        for a in assistants.values():
            await a.aclose()
        tmp.cleanup()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--serve":
        serve(Path(sys.argv[2]), int(sys.argv[3]))
    else:
        asyncio.run(main())
