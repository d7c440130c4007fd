"""Load benchmark of the whole service: one tenant's chats and searches while another
floods uploads, then a crash in the middle of uploads.

Run: ``make bench-load`` or ``.venv/bin/python -m bench.bench_load [--chats 3]
[--searches 3] [--rounds 5] [--flood-passes 3] [--flood-clients 1 2 6] [--crash-files 16]
[--upload-concurrency 2]``

``agent-search serve`` runs as a user runs it (its own process, one worker, the embedded
kb with the real offline model, SQLite records) on 127.0.0.1, with two API keys: tenant A
(user ``a``, team ``ta``; a rate limit of its own, ``A_RATE_LIMIT``, above its load, so
that A's own 429s are not what is measured) and tenant B (user ``b``, team ``tb``; the
default rate limit: 600 requests a minute, bursts of 60). Both clients are httpx with its
default pool (connections kept 5 s idle), as the openai client is.

1. A uploads the 60 passages of ``tests/data/kb-sample`` (its own collection).
2. **A alone:** ``--chats`` workers stream chat completions (the offline responder,
   which searches A's kb) and ``--searches`` workers post kb searches, ``--rounds``
   requests each a pass: latency p50/p99 per kind (a chat: the whole stream, to
   ``[DONE]``), errors, requests/s.
3. **A while B floods**, for each N of ``--flood-clients``: B runs N clients, each
   posting five documents of ~4 KB (``POST /v1/kb/b-flood/documents``) in a loop with no
   pause and no back-off, admitted or refused (429 past the rate limit or its write
   share, 503 past the collection's queue), while A runs one pass: A's p50/p99 against
   step 2 (goals ≤ 1.5× and ≤ 3× at every N), B's posts/s, admitted, refused.
   Steps 2 and 3 are interleaved, ``--flood-passes`` rounds of one quiet pass and one
   pass per N: the machine is shared and its load drifts within a run, so each phase
   gets its share of every stretch of it (before, the quiet phase ran first, and a
   minute later the flood phases met another machine).
4. **Crash** (unless ``--crash-files 0``): B uploads ``--crash-files`` files; after half
   of them are acknowledged the server is killed (SIGKILL) and started again on the same
   data. Every acknowledged file must be listed with all its chunks and found by a
   search for the one word only it holds; no document may be listed with fewer chunks
   than a whole file has (goal: nothing lost, nothing half).

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

from agent_search.kb import prepare_model_dir  # noqa: E402

KEYS = {"a": "sk-load-tenant-a-0123456789", "b": "sk-load-tenant-b-9876543210"}
A_RATE_LIMIT = {"per_minute": 60_000, "burst": 6_000}
SAMPLE = ROOT / "tests" / "data" / "kb-sample" / "corpus.jsonl"
MODELS = ROOT / "bench" / "results" / "load_home"
QUIET_FLUSH_S = 13.0
"""The pause before each pass of A alone: the store's whole flush of B's collection (after
four flusher passes of 2 s without writes, one more to notice) falls within it."""
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
    keys: list[dict[str, Any]] = [
        {"sha256": hashlib.sha256(KEYS[t].encode()).hexdigest(), "user_id": t,
         "team_id": f"t{t}"} for t in KEYS]
    # B's key has the default rate limit (600 a minute, bursts of 60): what a flood meets.
    # A's key has a bucket of its own, larger than A's load (~30 requests a second at
    # most here), so A's latency is not its own 429s but what B's flood costs it
    keys[0]["rate_limit"] = A_RATE_LIMIT
    (cdir / "agent.yml").write_text(json.dumps({"server": {
        "api_keys": keys, "max_streams": 1000}}))
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
    # the server's counters (server_counters) before and after each pass of the phase
    counters: list[tuple[tuple[float, ...], tuple[float, ...]]] = field(default_factory=list)

    @property
    def server(self) -> Usage | None:
        """What the server process spent over the phase's passes."""
        if not self.counters:
            return None
        deltas = [tuple(b - a for a, b in zip(before, after, strict=True))
                  for before, after in self.counters]
        total = tuple(sum(column) for column in zip(*deltas, strict=True))
        return usage(tuple(0.0 for _ in total), total)


@dataclass
class Usage:
    """The server process over one phase: CPU seconds per wall second, and how late its
    event loop woke (``agent_search_event_loop_lag_seconds`` of /metrics, sampled every
    50 ms): the mean, and the share of samples later than 25 ms. A load that costs the
    other tenant on the loop (blocking work, the interpreter lock held by a thread) shows
    in the lag; one that costs only CPU shows in the CPU column alone."""

    cpu_per_s: float
    lag_mean_ms: float
    lag_over_25ms: float


LAG = "agent_search_event_loop_lag_seconds"


async def server_counters(server: Server) -> tuple[float, float, float, float, float]:
    """(wall clock, CPU seconds, lag samples, lag sum, lag samples ≤ 25 ms) now."""
    assert server.proc is not None
    cpu = psutil.Process(server.proc.pid).cpu_times()
    got = {"count": 0.0, "sum": 0.0, "le25": 0.0}
    async with client(server, "a") as http:
        text = (await http.get("/metrics")).text
    for line in text.splitlines():
        if line.startswith(LAG + "_count"):
            got["count"] = float(line.split()[-1])
        elif line.startswith(LAG + "_sum"):
            got["sum"] = float(line.split()[-1])
        elif line.startswith(LAG + '_bucket{le="0.025"}'):
            got["le25"] = float(line.split()[-1])
    return (time.perf_counter(), cpu.user + cpu.system + cpu.children_user
            + cpu.children_system, got["count"], got["sum"], got["le25"])


def usage(before: tuple[float, ...], after: tuple[float, ...]) -> Usage:
    wall, cpu, count, total, le25 = (b - a for a, b in zip(before, after, strict=True))
    return Usage(cpu_per_s=cpu / wall if wall else 0.0,
                 lag_mean_ms=1000 * total / count if count else 0.0,
                 lag_over_25ms=(count - le25) / count if count else 0.0)


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


# -- tenant B: an upload flood -----------------------------------------------------------

@dataclass
class Flood:
    clients: int
    admitted: int = 0
    refused: dict[int, int] = field(default_factory=dict)  # status -> count
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    last_posts: int = 0  # in its last pass

    @property
    def posts(self) -> int:
        return self.admitted + sum(self.refused.values())

    def add(self, other: Flood) -> None:
        """Count ``other``'s pass in this phase."""
        self.admitted += other.admitted
        for code, n in other.refused.items():
            self.refused[code] = self.refused.get(code, 0) + n
        self.errors += other.errors
        self.seconds += other.seconds
        self.last_posts = other.posts


def flood_documents(client_no: int, n: int) -> list[dict[str, str]]:
    """Five documents of about 4 KB each (a generated note each)."""
    docs = []
    for k in range(5):
        name, data, _ = b_file(client_no * 100_000 + n * 5 + k, "flood")
        text = (data.decode() + "\n") * 2
        docs.append({"name": name, "text": text[:4096]})
    return docs


async def b_flood(server: Server, flood: Flood, stop: asyncio.Event) -> None:
    """``flood.clients`` clients, each posting five ~4 KB documents in a loop (no pause,
    no back-off: the next post as soon as the answer came) until ``stop``."""
    started = time.perf_counter()

    async def one(http: httpx.AsyncClient, client_no: int) -> None:
        n = 0
        while not stop.is_set():
            n += 1
            try:
                r = await http.post("/v1/kb/b-flood/documents",
                                    json={"documents": flood_documents(client_no, n % 50)})
                if r.status_code == 200:
                    flood.admitted += 1
                else:
                    flood.refused[r.status_code] = flood.refused.get(r.status_code, 0) + 1
            except httpx.HTTPError as exc:
                flood.errors.append(type(exc).__name__)

    clients = [client(server, "b") for _ in range(flood.clients)]
    try:
        await asyncio.gather(*(one(http, i) for i, http in enumerate(clients)))
    finally:
        for http in clients:
            await http.aclose()
    flood.seconds = time.perf_counter() - started


async def flooded(server: Server, args: argparse.Namespace, load: Load, flood: Flood,
                  rss: RssLog, seed: int) -> None:
    """One pass of A's load while B floods with ``flood.clients`` clients (started a
    second before A, stopped when A's pass ends), added to ``load`` and ``flood``."""
    stop = asyncio.Event()
    rss.phase = f"flood {flood.clients}"
    this = Flood(flood.clients)
    task = asyncio.create_task(b_flood(server, this, stop))
    await asyncio.sleep(1.0)
    before = await server_counters(server)
    await a_load(server, args, load, seed)
    load.counters.append((before, await server_counters(server)))
    stop.set()
    await task
    flood.add(this)


async def quiet(server: Server, args: argparse.Namespace, load: Load, rss: RssLog,
                seed: int) -> None:
    """One pass of A's load alone, added to ``load``."""
    rss.phase = "A alone"
    before = await server_counters(server)
    await a_load(server, args, load, seed)
    load.counters.append((before, await server_counters(server)))


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
    u = load.server
    spent = [f"{u.cpu_per_s:.2f}", f"{u.lag_mean_ms:.1f} / {100 * u.lag_over_25ms:.0f}%"] \
        if u is not None else ["", ""]
    return [*out, str(load.requests), str(len(load.errors)), f"{rate:.1f}", *spent]


async def seed_a(server: Server) -> None:
    docs = [json.loads(line) for line in SAMPLE.open(encoding="utf-8")]
    async with client(server, "a") as http:
        r = await http.post("/v1/kb/a-docs/documents", json={"documents": [
            {"name": f"{d['_id']}.md", "text": f"# {d['title']}\n\n{d['text']}\n"}
            for d in docs]})
        r.raise_for_status()


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
            await asyncio.sleep(2)  # the warm-up's last answers out of the way
            alone = Load()
            floods = [(Load(), Flood(n)) for n in args.flood_clients]
            for round_ in range(args.flood_passes):
                if round_:
                    # the store's flusher syncs the log at its next pass (within 2 s) and
                    # flushes the shard whole after four passes without writes (8 s):
                    # past both, that flush (~100 ms holding the interpreter lock) is not
                    # counted as A alone's
                    await asyncio.sleep(QUIET_FLUSH_S)
                await quiet(server, args, alone, rss, round_)
                for load, flood in floods:
                    # B's bucket full again (it refills at 10 tokens a second): each
                    # flood pass starts alike
                    await asyncio.sleep(min(6.0, 1.0 + flood.last_posts / 10))
                    await flooded(server, args, load, flood, rss,
                                  1000 * flood.clients + round_)
            report = await crash(server, args, rss) if args.crash_files else None
        finally:
            sampler.cancel()
            server.stop()
        print(f"load average {os.getloadavg()[0]:.1f} (2 cores shared); "
              f"A: {args.chats} streaming chats + {args.searches} kb searches at once, "
              f"{args.rounds} each per pass, {args.flood_passes} passes a phase, the "
              "phases' passes interleaved; B: N clients "
              "each posting 5 documents of ~4 KB in a loop (POST /v1/kb/b-flood/documents), "
              "B's rate limit the default (600/min, burst 60), A's its own (60,000/min, "
              "burst 6,000)\n")
        print("| phase | chat p50 ms | chat p99 ms | search p50 ms | search p99 ms | "
              "requests | errors | req/s | server CPU s/s | loop lag mean ms / > 25 ms | "
              "B posts/s | B admitted | B refused |\n"
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
              "| --- |")
        print("| " + " | ".join(row("A alone", alone, None)) + " | | | |")
        worst50 = worst99 = 0.0
        for load, flood in floods:
            rate = flood.posts / flood.seconds if flood.seconds else 0.0
            refused = ", ".join(f"{n}×{code}" for code, n in sorted(flood.refused.items()))
            print("| " + " | ".join(row(f"A while B floods, N = {flood.clients}", load, alone))
                  + f" | {rate:.0f} | {flood.admitted} | {refused or 0} |")
            for kind in ("chat", "search"):
                worst50 = max(worst50, pct(load.times[kind], 0.5) / pct(alone.times[kind], 0.5))
                worst99 = max(worst99, pct(load.times[kind], 0.99)
                              / pct(alone.times[kind], 0.99))
        errors = alone.errors + [e for load, _ in floods for e in load.errors]
        for e in errors[:5]:
            print(f"  error: {e}")
        print_rss(rss)
        if report is not None:
            print(f"\n**Crash:** {report['sent']} uploads started, {report['acked']} "
                  f"acknowledged when the server was killed (SIGKILL); restarted in "
                  f"{report['restart_s']:.1f} s. Listed after restart: {report['listed']} "
                  f"documents ({report['unacked_listed']} not acknowledged but whole); "
                  f"lost {len(report['lost'])}, half {len(report['half'])}, acknowledged but "
                  f"not found by search {len(report['unfound'])} (a whole file has "
                  f"{report['chunks_per_file']} chunks).")
        crash_ok = report is None or not (report["lost"] or report["half"] or report["unfound"])
        met = worst50 <= 1.5 and worst99 <= 3.0
        print(f"\ngoals under the flood: A's p50 ≤ 1.5× ({worst50:.2f}×), p99 ≤ 3× "
              f"({worst99:.2f}×): {'met' if met else 'NOT met'}; A's errors "
              f"{len(errors)}; crash: {'nothing lost or half' if crash_ok else 'NOT met'}")
        return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chats", type=int, default=3, help="A's concurrent streaming chats")
    ap.add_argument("--searches", type=int, default=3, help="A's concurrent kb searches")
    ap.add_argument("--rounds", type=int, default=5, help="requests per A worker per pass")
    ap.add_argument("--flood-passes", type=int, default=3,
                    help="passes of A's load in each phase")
    ap.add_argument("--flood-clients", type=int, nargs="+", default=[1, 2, 6],
                    help="B's flooding clients, one phase each")
    ap.add_argument("--crash-files", type=int, default=16,
                    help="B's uploads in the crash step (killed after half are in; 0: none)")
    ap.add_argument("--upload-concurrency", type=int, default=2)
    args = ap.parse_args()
    for name in ("chats", "searches", "rounds", "flood_passes", "upload_concurrency"):
        if not 1 <= getattr(args, name) <= 500:
            ap.error(f"--{name.replace('_', '-')} must be 1..500")
    if not 0 <= args.crash_files <= 500 or not all(1 <= n <= 64 for n in args.flood_clients):
        ap.error("--crash-files must be 0..500, --flood-clients 1..64 each")
    sys.exit(asyncio.run(run(args)))


if __name__ == "__main__":
    main()
