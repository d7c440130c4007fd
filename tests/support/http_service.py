"""A real uvicorn server on 127.0.0.1 in a thread of the test process (so tests can
register handlers on its searchers and watch them), and a project folder to serve."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
import uvicorn
import yaml
from fastapi import FastAPI

from agent_search import Context, Request, Result, ResultItem
from agent_search.kb import CollectionNotFound, close_stores, list_documents, prepare_model_dir
from agent_search.server import Service, ServiceOptions, create_app

KEYS = {"alice": "sk-alice-0123456789", "bob": "sk-bob-9876543210"}


def sha256(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def auth(who: str) -> dict[str, str]:
    """The bearer header of test user ``who`` (a key of :data:`KEYS`)."""
    return {"Authorization": f"Bearer {KEYS[who]}"}


def sources_of(service: Service, collection: str) -> set[str]:
    """``source@owner`` of every document in ``collection`` (none when it does not exist),
    read past the service's API: what a test checks the API did."""
    try:
        docs = anyio.run(lambda: list_documents(service.searcher.config, collection))
    except CollectionNotFound:
        return set()
    return {f"{d['source']}@{d['owner']}" for d in docs}


def two_tenant_keys() -> list[dict[str, str]]:
    """``server.api_keys`` for alice (team t1) and bob (team t2)."""
    return [{"sha256": sha256(KEYS["alice"]), "user_id": "alice", "team_id": "t1"},
            {"sha256": sha256(KEYS["bob"]), "user_id": "bob", "team_id": "t2"}]


def write_project(root: Path, *, llm_url: str | None = None,
                  server: dict[str, Any] | None = None,
                  assistants: dict[str, dict[str, Any]] | None = None,
                  hooks: dict[str, str] | None = None) -> tuple[Path, Path]:
    """``config/`` and ``assistants/`` under ``root``; returns both folders."""
    cdir, adir = root / "config", root / "assistants"
    cdir.mkdir(parents=True, exist_ok=True)
    agent: dict[str, Any] = {"records": True}
    if llm_url:
        agent["connectors"] = {m: {"base_url": llm_url, "model": m, "timeout": 60,
                                   "idle_timeout": 60}
                               for m in ("cite", "tools", "stall", "bench", "error500")}
    agent["server"] = server if server is not None else {
        "api_keys": [{"sha256": sha256(KEYS["alice"]), "user_id": "alice", "team_id": "t1"},
                     {"sha256": sha256(KEYS["bob"]), "user_id": "bob", "team_id": "t2"}]}
    (cdir / "agent.yml").write_text(yaml.safe_dump(agent))
    (cdir / "search.yao").write_text(json.dumps({"kb": {"enabled": True},
                                                 "options": {"timeout": 30}}))
    for name, package in (assistants or {"offline": {"name": "Offline"}}).items():
        (adir / name).mkdir(parents=True, exist_ok=True)
        (adir / name / "package.yao").write_text(json.dumps(package))
        if hooks and name in hooks:
            (adir / name / "hooks.py").write_text(hooks[name])
    return cdir, adir


@dataclass
class WatchedHandler:
    """A real kb handler of our own: fixed items, an optional delay; remembers who asked
    and whether it was cancelled."""

    type: str = "kb"
    delay: float = 0.0
    items: int = 3
    callers: list[tuple[str | None, str | None]] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    started: int = 0
    cancelled: int = 0

    def can_handle(self, ctx: Context, request: Request) -> bool:
        return True

    async def search(self, ctx: Context, request: Request) -> Result:
        self.callers.append((ctx.user_id, ctx.team_id))
        self.queries.append(request.query)
        self.started += 1
        try:
            if self.delay or "slow" in request.query:
                await anyio.sleep(self.delay or 30)
        except anyio.get_cancelled_exc_class():
            self.cancelled += 1
            raise
        items = [ResultItem(title=f"Doc {i} about {request.query[:30]}",
                            content=f"Fact {i}: agent-search answers from references.",
                            url=f"https://example.com/doc/{i}", score=1.0 - i / 10)
                 for i in range(self.items)]
        return Result(type=request.type, query=request.query, items=items, total=len(items))


class ThreadedServer:
    """uvicorn serving ``app`` on a free 127.0.0.1 port in a daemon thread."""

    def __init__(self, app: FastAPI, **options: Any) -> None:
        """``options``: more of uvicorn's settings (those ``agent-search serve`` passes)."""
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        config = uvicorn.Config(app, log_level="warning", lifespan="on",
                                **{"timeout_graceful_shutdown": 5, **options})
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run,
                                       kwargs={"sockets": [self.sock]}, daemon=True)

    def start(self) -> ThreadedServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(15)


def register(handler: Any, searchers: Sequence[Any]) -> None:
    for searcher in searchers:
        searcher.registry.register(handler)


def in_process_app(root: Path, server: dict[str, Any] | None = None
                   ) -> tuple[FastAPI, WatchedHandler]:
    """The app of a project written under ``root`` (``server`` its server settings), for
    Starlette's TestClient, with a :class:`WatchedHandler` on every searcher."""
    cdir, adir = write_project(root, server=server)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENT_SEARCH_HOME", str(root / "home"))
        service = Service.load(ServiceOptions(config_dir=cdir, assistants_dir=adir,
                                              builtin_handlers=False))
    handler = WatchedHandler()
    register(handler, [service.searcher, *(a.searcher for a in service.assistants.values())])
    return create_app(service), handler


def serve_with_kb(root: Path, cdir: Path, adir: Path) -> Iterator[tuple[str, Service]]:
    """The project in ``cdir``/``adir`` served on 127.0.0.1 with a data home under
    ``root`` that holds the offline model, so ingest over HTTP embeds for real; yields
    the base URL and the service, then stops the server and closes the kb stores."""
    home = root / "home"
    prepare_model_dir(home, 256)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENT_SEARCH_HOME", str(home))
        service = Service.load(ServiceOptions(config_dir=cdir, assistants_dir=adir,
                                              builtin_handlers=False))
    server = ThreadedServer(create_app(service)).start()
    try:
        yield server.url, service
    finally:
        server.stop()
        close_stores()
