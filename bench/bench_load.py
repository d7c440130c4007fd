"""Load benchmark of the whole service (issue 33 item 5): one tenant's chats and searches
while another uploads, then a crash in the middle of the uploads.

Run: ``make bench-load`` or ``.venv/bin/python bench/bench_load.py [--chats 6]
[--searches 6] [--rounds 5] [--files 24] [--crash-files 16] [--upload-concurrency 2]``

``agent-search serve`` runs as a user runs it (its own process, one worker, the embedded
kb with the real offline model, SQLite records) on 127.0.0.1, with two API keys: tenant
A (user ``a``, team ``ta``) and tenant B (user ``b``, team ``tb``). Both clients are
httpx with its default pool (connections kept 5 s idle), as the openai client is.

1. A uploads the 60 passages of ``tests/data/kb-sample`` (its own collection).
2. **A alone:** ``--chats`` workers stream chat completions (the offline responder,
   which searches A's kb) and ``--searches`` workers post kb searches, ``--rounds``
   requests each: latency p50/p99 per kind (a chat: the whole stream, to ``[DONE]``),
   errors, requests/s.
3. **A while B uploads:** the same load, repeated until B's ``--files`` generated files
   (one multipart upload each, ``--upload-concurrency`` at a time) are in: A's p50/p99
   against step 2 (goals ≤ 1.5× and ≤ 3×), errors (goal 0), A's requests/s, B's files/s.
4. **Crash:** B uploads ``--crash-files`` more; after half of them are acknowledged the
   server is killed (SIGKILL) and started again on the same data. Every acknowledged
   file must be listed with all its chunks and found by a search for the one word only
   it holds; no document may be listed with fewer chunks than a whole file has (goal:
   nothing lost, nothing half).

The server's RSS is sampled every 0.5 s throughout and printed as a series. Prints
Markdown tables. The machine is shared and noisy: the ratios of step 3 to step 2, both
measured in this run, are what carries.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_search.kb import prepare_model_dir  # noqa: E402

KEYS = {"a": "sk-load-tenant-a-0123456789", "b": "sk-load-tenant-b-9876543210"}
SAMPLE = ROOT / "tests" / "data" / "kb-sample" / "corpus.jsonl"
MODELS = ROOT / "bench" / "results" / "load_home"
WORDS = ["river", "stone", "garden", "window", "paper", "orange", "signal", "market",
         "winter", "lantern", "harbor", "copper", "meadow", "engine", "ribbon", "valley",
         "thunder", "pocket", "silver", "mirror", "candle", "forest", "bridge", "rocket",
         "planet", "button", "circle", "island", "jacket", "ladder", "monkey", "needle"]


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# -- the project and the server ----------------------------------------------------------

def write_project(root: Path) -> tuple[Path, Path]:
    cdir, adir = root / "config", root / "assistants"
    cdir.mkdir(parents=True)
    keys = [{"sha256": hashlib.sha256(KEYS[t].encode()).hexdigest(), "user_id": t,
             "team_id": f"t{t}"} for t in KEYS]
    (cdir / "agent.yml").write_text(json.dumps({"server": {
        "api_keys": keys, "rate_limit": {"per_minute": 1e6, "burst": 100_000},
        "max_streams": 1000}}))
    (cdir / "search.yao").write_text(json.dumps({
        "web": {"enabled": False}, "db": {"enabled": False}, "kb": {"enabled": True},
        "options": {"timeout": 30, "deadline": 60}}))
    (adir / "offline").mkdir(parents=True)
    (adir / "offline" / "package.yao").write_text(json.dumps({"name": "Offline"}))
    return cdir, adir


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    root: Path
    port: int
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> psutil.Process:
        env = {**os.environ, "AGENT_SEARCH_HOME": str(self.root / "home")}
        log = (self.root / "server.log").open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agent_search", "serve", "--port", str(self.port),
             "--config", str(self.root / "config"),
             "--assistants", str(self.root / "assistants")],
            stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited; see {self.root / 'server.log'}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return psutil.Process(self.proc.pid)
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError("the server did not answer /healthz within 120 s")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()  # SIGKILL: no drain, no flush
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()


def client(server: Server, tenant: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=server.url, timeout=120,
                             headers={"Authorization": f"Bearer {KEYS[tenant]}"})


# -- tenant A: chats and searches --------------------------------------------------------

def questions() -> list[str]:
    rows = [json.loads(line) for line in
            (ROOT / "tests" / "data" / "kb-sample" / "queries.jsonl").open(encoding="utf-8")]
    return [r["text"] for r in rows]


@dataclass
class Load:
    times: dict[str, list[float]] = field(default_factory=lambda: {"chat": [], "search": []})
    errors: list[str] = field(default_factory=list)
    requests: int = 0
    seconds: float = 0.0


async def one_chat(http: httpx.AsyncClient, question: str) -> None:
    body = {"model": "offline", "stream": True,
            "messages": [{"role": "user", "content": question}]}
    done = False
    async with http.stream("POST", "/v1/chat/completions", json=body) as r:
        if r.status_code != 200:
            raise RuntimeError(f"chat HTTP {r.status_code}")
        async for line in r.aiter_lines():
            done = done or line.strip() == "data: [DONE]"
    if not done:
        raise RuntimeError("chat stream ended without [DONE]")


async def one_search(http: httpx.AsyncClient, question: str) -> None:
    r = await http.post("/v1/search", json={"type": "kb", "query": question,
                                            "collections": ["a-docs"], "limit": 10})
    if r.status_code != 200 or r.json().get("error"):
        raise RuntimeError(f"search HTTP {r.status_code}: {r.text[:200]}")


async def worker(http: httpx.AsyncClient, kind: str, rounds: int, load: Load,
                 qs: list[str], rng: random.Random) -> None:
    for _ in range(rounds):
        q = rng.choice(qs)
        start = time.perf_counter()
        try:
            await (one_chat(http, q) if kind == "chat" else one_search(http, q))
            load.times[kind].append((time.perf_counter() - start) * 1000)
        except Exception as exc:  # a bench counts every failure, whatever it is
            load.errors.append(f"{kind}: {type(exc).__name__}: {exc}"[:200])
        load.requests += 1


async def a_load(server: Server, args: argparse.Namespace, load: Load, seed: int) -> None:
    qs, rng = questions(), random.Random(seed)
    started = time.perf_counter()
    async with client(server, "a") as http:
        await asyncio.gather(
            *(worker(http, "chat", args.rounds, load, qs, rng) for _ in range(args.chats)),
            *(worker(http, "search", args.rounds, load, qs, rng)
              for _ in range(args.searches)))
    load.seconds += time.perf_counter() - started


# -- tenant B: uploads -------------------------------------------------------------------

def b_file(n: int, tag: str) -> tuple[str, bytes, str]:
    """A generated Markdown note: a few sections of common words, and one word only this
    file holds (``<tag>n<n>``), to find it by afterwards."""
    rng = random.Random(f"{tag}-{n}")
    own = f"{tag}n{n:04d}"
    parts = [f"# Note {n} of {tag}\n"]
    for s in range(4):
        sentences = [" ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + "."
                     for _ in range(8)]
        if s == 2:
            sentences.insert(3, f"The marker of this note is {own}.")
        parts.append(f"## Part {s + 1}\n\n" + " ".join(sentences) + "\n")
    return f"{tag}-{n:04d}.md", "\n".join(parts).encode(), own


@dataclass
class Uploads:
    acked: dict[str, int] = field(default_factory=dict)  # source -> chunks
    own_word: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0


async def b_uploads(server: Server, collection: str, count: int, concurrency: int,
                    up: Uploads, tag: str, stop_after: int | None = None,
                    on_stop: Any = None) -> None:
    queue = list(range(count))
    started = time.perf_counter()

    async def one(http: httpx.AsyncClient) -> None:
        while queue:
            name, data, own = b_file(queue.pop(0), tag)
            source = f"upload:{name}"
            up.own_word[source] = own
            try:
                r = await http.post(f"/v1/kb/{collection}/files",
                                    files=[("file", (name, data, "text/markdown"))])
                if r.status_code == 200 and not r.json().get("skipped"):
                    up.acked[source] = int(r.json()["chunks"])
                else:
                    up.errors.append(f"{name}: HTTP {r.status_code} {r.text[:120]}")
            except httpx.HTTPError as exc:
                up.errors.append(f"{name}: {type(exc).__name__}")
            if stop_after is not None and len(up.acked) >= stop_after and on_stop:
                on_stop()
                return

    async with client(server, "b") as http:
        await asyncio.gather(*(one(http) for _ in range(concurrency)))
    up.seconds = time.perf_counter() - started


# -- RSS ---------------------------------------------------------------------------------

@dataclass
class RssLog:
    t0: float = field(default_factory=time.perf_counter)
    samples: list[tuple[float, str, float]] = field(default_factory=list)
    proc: psutil.Process | None = None
    phase: str = ""

    async def run(self) -> None:
        while True:
            proc = self.proc
            if proc is not None:
                with contextlib.suppress(psutil.Error):
                    self.samples.append((time.perf_counter() - self.t0, self.phase,
                                         proc.memory_info().rss / 2**20))
            await asyncio.sleep(0.5)


# -- the phases --------------------------------------------------------------------------

def row(name: str, load: Load, base: Load | None) -> list[str]:
    out = [name]
    for kind in ("chat", "search"):
        t = load.times[kind]
        p50, p99 = pct(t, 0.5), pct(t, 0.99)
        if base is None:
            out += [f"{p50:.0f}", f"{p99:.0f}"]
        else:
            b50, b99 = pct(base.times[kind], 0.5), pct(base.times[kind], 0.99)
            out += [f"{p50:.0f} ({p50 / b50:.2f}×)", f"{p99:.0f} ({p99 / b99:.2f}×)"]
    rate = load.requests / load.seconds if load.seconds else 0.0
    return [*out, str(load.requests), str(len(load.errors)), f"{rate:.1f}"]


async def seed_a(server: Server) -> None:
    docs = [json.loads(line) for line in SAMPLE.open(encoding="utf-8")]
    async with client(server, "a") as http:
        r = await http.post("/v1/kb/a-docs/documents", json={"documents": [
            {"name": f"{d['_id']}.md", "text": f"# {d['title']}\n\n{d['text']}\n"}
            for d in docs]})
        r.raise_for_status()


async def mixed(server: Server, args: argparse.Namespace, rss: RssLog
                ) -> tuple[Load, Uploads]:
    """A's load, repeated until B's uploads are in (at most ``--max-seconds``)."""
    load, up = Load(), Uploads()
    uploads = asyncio.create_task(b_uploads(server, "b-files", args.files,
                                            args.upload_concurrency, up, "load"))
    started, seed = time.perf_counter(), 1
    while True:
        rss.phase = "A+B"
        await a_load(server, args, load, seed)
        seed += 1
        if uploads.done() or time.perf_counter() - started > args.max_seconds:
            break
    await uploads
    return load, up


async def crash(server: Server, args: argparse.Namespace, rss: RssLog) -> dict[str, Any]:
    up = Uploads()
    half = max(1, args.crash_files // 2)
    rss.phase = "crash"
    await b_uploads(server, "b-crash", args.crash_files, args.upload_concurrency, up, "crash",
                    stop_after=half, on_stop=server.kill)
    server.kill()
    acked_at_kill = dict(up.acked)
    started = time.perf_counter()
    rss.proc = server.start()
    restart_s = time.perf_counter() - started
    rss.phase = "restarted"
    async with client(server, "b") as http:
        r = await http.get("/v1/kb/b-crash/documents")
        r.raise_for_status()
        listed = {d["source"]: int(d["chunks"]) for d in r.json()["documents"]}
        whole = set(acked_at_kill.values())
        lost = [s for s in acked_at_kill if listed.get(s) != acked_at_kill[s]]
        half_docs = [s for s, n in listed.items() if n not in whole]
        unfound = []
        for source in acked_at_kill:
            # the word only this file holds, by keyword; no relevance floor: the question
            # is whether the chunks are there and indexed, not how a lone word scores
            r = await http.post("/v1/search", json={
                "type": "kb", "query": up.own_word[source], "collections": ["b-crash"],
                "limit": 3, "min_score": 0, "options": {"mode": "sparse"}})
            items = r.json().get("items", []) if r.status_code == 200 else []
            if not items or items[0].get("metadata", {}).get("source") != source:
                unfound.append(source)
    return {"sent": len(up.own_word), "acked": len(acked_at_kill), "listed": len(listed),
            "unacked_listed": len(set(listed) - set(acked_at_kill)), "lost": lost,
            "half": half_docs, "unfound": unfound, "chunks_per_file": sorted(whole),
            "restart_s": restart_s, "errors": len(up.errors)}


def print_rss(rss: RssLog) -> None:
    print("\n**Server RSS over time** (MB, every ~10th sample of 0.5 s; the phase at it)\n")
    step = max(1, len(rss.samples) // 16)
    print("| t (s) | phase | RSS MB |\n| --- | --- | --- |")
    for t, phase, mb in rss.samples[::step]:
        print(f"| {t:.0f} | {phase} | {mb:.0f} |")
    by_phase: dict[str, list[float]] = {}
    for _, phase, mb in rss.samples:
        by_phase.setdefault(phase, []).append(mb)
    print("\n" + "; ".join(f"{p}: peak {max(v):.0f} MB, median {statistics.median(v):.0f} MB"
                           for p, v in by_phase.items()))


async def run(args: argparse.Namespace) -> int:
    prepare_model_dir(MODELS, 256)  # once per checkout; linked into the run's home
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        root = Path(tmp)
        write_project(root)
        (root / "home").mkdir()
        (root / "home" / "models").symlink_to(MODELS / "models", target_is_directory=True)
        server = Server(root, free_port())
        rss = RssLog()
        sampler = asyncio.create_task(rss.run())
        try:
            rss.proc = server.start()
            rss.phase = "seed"
            await seed_a(server)
            rss.phase = "warm-up"
            await a_load(server, args, Load(), 0)  # warm-up: models, caches, connections
            rss.phase = "A alone"
            alone = Load()
            await a_load(server, args, alone, 0)
            both, up = await mixed(server, args, rss)
            report = await crash(server, args, rss)
        finally:
            sampler.cancel()
            server.stop()
        print(f"load average {os.getloadavg()[0]:.1f} (2 cores shared); "
              f"A: {args.chats} streaming chats + {args.searches} kb searches at once, "
              f"{args.rounds} each per pass; B: {args.files} uploads, "
              f"{args.upload_concurrency} at a time\n")
        print("| phase | chat p50 ms | chat p99 ms | search p50 ms | search p99 ms | "
              "requests | errors | req/s |\n| --- | --- | --- | --- | --- | --- | --- | --- |")
        print("| " + " | ".join(row("A alone", alone, None)) + " |")
        print("| " + " | ".join(row("A while B uploads", both, alone)) + " |")
        files_s = len(up.acked) / up.seconds if up.seconds else 0.0
        print(f"\nB: {len(up.acked)}/{args.files} uploads acknowledged in {up.seconds:.1f} s "
              f"({files_s:.2f} files/s, {sum(up.acked.values())} chunks), "
              f"{len(up.errors)} errors")
        for e in (alone.errors + both.errors + up.errors)[:5]:
            print(f"  error: {e}")
        print_rss(rss)
        print(f"\n**Crash:** {report['sent']} uploads started, {report['acked']} acknowledged "
              f"when the server was killed (SIGKILL); restarted in {report['restart_s']:.1f} s. "
              f"Listed after restart: {report['listed']} documents "
              f"({report['unacked_listed']} not acknowledged but whole); "
              f"lost {len(report['lost'])}, half {len(report['half'])}, acknowledged but not "
              f"found by search {len(report['unfound'])} (a whole file has "
              f"{report['chunks_per_file']} chunks).")
        worst = [pct(both.times[k], q) / pct(alone.times[k], q)
                 for k in ("chat", "search") for q in (0.5, 0.99)]
        ok = (not both.errors and not alone.errors and not report["lost"]
              and not report["half"] and not report["unfound"])
        print(f"\ngoals: p50 ≤ 1.5× ({max(worst[0], worst[2]):.2f}×), p99 ≤ 3× "
              f"({max(worst[1], worst[3]):.2f}×), errors 0, nothing lost or half: "
              f"{'met' if ok else 'NOT met'} for errors and the crash")
        return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chats", type=int, default=6, help="A's concurrent streaming chats")
    ap.add_argument("--searches", type=int, default=6, help="A's concurrent kb searches")
    ap.add_argument("--rounds", type=int, default=5, help="requests per A worker per pass")
    ap.add_argument("--files", type=int, default=24, help="B's uploads during A's load")
    ap.add_argument("--crash-files", type=int, default=16,
                    help="B's uploads in the crash step (killed after half are in)")
    ap.add_argument("--upload-concurrency", type=int, default=2)
    ap.add_argument("--max-seconds", type=float, default=240,
                    help="bound on the mixed phase")
    args = ap.parse_args()
    for name in ("chats", "searches", "rounds", "files", "crash_files", "upload_concurrency"):
        if not 1 <= getattr(args, name) <= 500:
            ap.error(f"--{name.replace('_', '-')} must be 1..500")
    sys.exit(asyncio.run(run(args)))


if __name__ == "__main__":
    main()
