"""``kb list`` and ``ask`` while ``agent-search serve`` runs (it holds the data home's
knowledge base): ``kb list --server URL`` lists the collections the key can read (it
failed: "give COLLECTION"), ``ask --server URL`` asks the service, and a local command
that finds the store held says exactly which command to run instead."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agent_search.cli import main
from agent_search.kb import Access, close_stores
from agent_search.kb._store import BASE_INDEXES, PointData, SparseVec, edge_root, point_id
from agent_search.kb._store._edge import EdgeStore
from tests.support.http_service import write_project

ROOT = Path(__file__).resolve().parents[2]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(args)
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A real ``agent-search serve`` process (no API keys: loopback) on a data home
    holding 'notes' (one public chunk) and 'private' (one of another user's)."""
    root = tmp_path_factory.mktemp("serving")
    home = root / "home"
    store = EdgeStore(edge_root(home))
    for name, access in (("notes", Access.of()), ("private", Access.of("carol"))):
        store.create(name, 3, {"dimensions": 3}, BASE_INDEXES)
        store.upsert(name, [PointData(point_id(name, "n.md", "doc", 0, kind="u64"),
                                      [1.0, 0.0, 0.0], SparseVec([1], [1.0]),
                                      {"source": "n.md", "document_id": "doc",
                                       "chunk_index": 0, **access.payload()})])
    store.close()
    cdir, adir = write_project(root, server={})
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    env = {**os.environ, "AGENT_SEARCH_HOME": str(home), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "agent_search", "serve", "--port",
                             str(port), "--config", str(cdir), "--assistants", str(adir)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "serve did not start"
            time.sleep(0.3)
        yield url, home
    finally:
        proc.terminate()
        proc.wait(30)
        close_stores()


@pytest.fixture
def serving(served: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The server's URL, with this process pointed at the data home it holds."""
    monkeypatch.setenv("AGENT_SEARCH_HOME", str(served[1]))
    yield served[0]
    close_stores()


def test_kb_list_works_through_the_server_and_says_so_locally(
        serving: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["kb", "list", "--server", serving], capsys)
    assert code == 0, err
    assert out.split()[:2] == ["notes", "1"] and "private" not in out  # carol's only
    code, out, _ = run(["kb", "list", "--server", serving, "--json"], capsys)
    assert [r["name"] for r in json.loads(out)] == ["notes"]
    code, out, err = run(["kb", "list"], capsys)  # the service holds the store now
    assert code == 1 and "open in another process" in err
    assert "it is held by a running 'agent-search serve' (pid " in err
    assert f"--server {serving}" in err


def test_ask_works_through_the_server_and_says_so_locally(
        serving: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["ask", "what is in my notes?", "--server", serving,
                          "--assistant", "offline", "--json"], capsys)
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    assert events[-1]["event"] == "done" and any(e["event"] == "text" for e in events)
    code, out, err = run(["ask", "what is in my notes?", "--server", serving,
                          "--assistant", "ofline"], capsys)
    assert code == 1 and "did you mean 'offline'?" in err
    code, out, err = run(["ask", "what is in my notes?", "--collection", "notes",
                          "--connector", "offline"], capsys)
    assert "open in another process" in out + err
    assert "hint: the knowledge base is open in another process; it is held by a " \
           "running 'agent-search serve'" in err and f"ask it with --server {serving}" in err
