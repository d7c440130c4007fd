"""Disconnects, rate limits, shutdown and the serve command's refusals."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from agent_search.cli import main as cli_main
from agent_search.errors import ConfigError
from agent_search.server import Service, ServiceOptions, create_app
from tests.support.http_service import (
    KEYS,
    ThreadedServer,
    WatchedHandler,
    register,
    sha256,
    write_project,
)
from tests.support.service_api import Running

ROOT = Path(__file__).resolve().parents[2]


def wait_for(predicate: object, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def test_disconnect_cancels_the_searches(running: Running) -> None:
    handler = running.handler
    before = handler.cancelled
    with httpx.stream("POST", f"{running.url}/v1/assistants/offline/stream",
                      headers=running.headers(), timeout=30,
                      json={"messages": [{"role": "user", "content": "a slow question"}]}
                      ) as r:
        for line in r.iter_lines():
            if line.startswith("event: search_start"):
                break
    assert wait_for(lambda: handler.cancelled == before + 1), "the handler saw no cancellation"
    assert wait_for(lambda: running.service.streams == 0)


def test_disconnect_cancels_the_llm_call(running: Running) -> None:
    """The stall model sends one chunk and then nothing for 30 s: only cancellation
    ends the stream (and the connection to the model) this early."""
    with httpx.stream("POST", f"{running.url}/v1/chat/completions", headers=running.headers(),
                      json={"model": "stall", "stream": True,
                            "messages": [{"role": "user", "content": "think hard"}]},
                      timeout=30) as r:
        for line in r.iter_lines():
            if "Thinking" in line:
                break
    assert wait_for(lambda: running.service.streams == 0), "the LLM call was not cancelled"


def test_disconnect_cancels_a_non_streaming_search(running: Running) -> None:
    handler = running.handler
    before = handler.cancelled
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{running.url}/v1/search", headers=running.headers(),
                   json={"type": "kb", "query": "slow one"}, timeout=0.5)
    assert wait_for(lambda: handler.cancelled == before + 1)


def test_rate_limit(tmp_path: Path) -> None:
    cdir, adir = write_project(tmp_path, server={
        "api_keys": [{"sha256": sha256(KEYS["alice"]), "user_id": "alice"},
                     {"sha256": sha256(KEYS["bob"]), "user_id": "bob"}],
        "rate_limit": {"per_minute": 6, "burst": 2}})
    service = Service.load(ServiceOptions(config_dir=cdir, assistants_dir=adir,
                                          builtin_handlers=False))
    register(WatchedHandler(), [service.searcher])
    server = ThreadedServer(create_app(service)).start()
    try:
        alice = {"Authorization": f"Bearer {KEYS['alice']}"}
        codes = [httpx.get(f"{server.url}/v1/models", headers=alice).status_code
                 for _ in range(3)]
        assert codes == [200, 200, 429]
        limited = httpx.post(f"{server.url}/v1/search", headers=alice,
                             json={"type": "kb", "query": "q"})
        assert limited.status_code == 429
        assert limited.json()["error"]["type"] == "rate_limit_error"
        assert 1 <= int(limited.headers["retry-after"]) <= 10
        bob = {"Authorization": f"Bearer {KEYS['bob']}"}  # another key, its own bucket
        assert httpx.get(f"{server.url}/v1/models", headers=bob).status_code == 200
        metrics = httpx.get(f"{server.url}/metrics").text
        assert "agent_search_rate_limited_requests_total 2.0" in metrics
    finally:
        server.stop()


def test_a_key_with_its_own_rate_limit_has_its_own_bucket(tmp_path: Path) -> None:
    """alice's key sets a bucket of 4; bob's keeps the default of 2."""
    cdir, adir = write_project(tmp_path, server={
        "api_keys": [{"sha256": sha256(KEYS["alice"]), "user_id": "alice",
                      "rate_limit": {"per_minute": 6, "burst": 4}},
                     {"sha256": sha256(KEYS["bob"]), "user_id": "bob"}],
        "rate_limit": {"per_minute": 6, "burst": 2}})
    service = Service.load(ServiceOptions(config_dir=cdir, assistants_dir=adir,
                                          builtin_handlers=False))
    server = ThreadedServer(create_app(service)).start()
    try:
        codes = {who: [httpx.get(f"{server.url}/v1/models", headers={
            "Authorization": f"Bearer {KEYS[who]}"}).status_code for _ in range(5)]
            for who in ("alice", "bob")}
        assert codes == {"alice": [200, 200, 200, 200, 429],
                         "bob": [200, 200, 429, 429, 429]}
    finally:
        server.stop()


def test_a_key_rate_limit_needs_both_numbers(tmp_path: Path) -> None:
    cdir, adir = write_project(tmp_path, server={"api_keys": [
        {"sha256": sha256(KEYS["alice"]), "user_id": "alice",
         "rate_limit": {"per_minute": 6}}]})
    with pytest.raises(ConfigError, match="burst"):
        Service.load(ServiceOptions(config_dir=cdir, assistants_dir=adir,
                                    builtin_handlers=False))


def test_a_quiet_stream_gets_keep_alive_comments(tmp_path: Path, llm: object) -> None:
    """The stall model sends one chunk, then nothing for 30 s: the stream stays alive
    for proxies with an SSE comment every keepalive_seconds."""
    cdir, adir = write_project(tmp_path, llm_url=llm.base_url,  # type: ignore[attr-defined]
                               server={"keepalive_seconds": 0.2},
                               assistants={"stall": {"name": "s", "connector": "stall"}})
    service = Service.load(ServiceOptions(config_dir=cdir, assistants_dir=adir,
                                          builtin_handlers=False))
    server = ThreadedServer(create_app(service)).start()
    try:
        started = time.monotonic()
        lines: list[str] = []
        with httpx.stream("POST", f"{server.url}/v1/chat/completions", timeout=10,
                          json={"model": "stall", "stream": True,
                                "messages": [{"role": "user", "content": "think"}]}) as r:
            for line in r.iter_lines():
                lines.append(line)
                if lines.count(": keep-alive") == 3:
                    break
        assert time.monotonic() - started < 5
        assert any("Thinking" in line for line in lines)
        first = lines.index(": keep-alive")
        assert "Thinking" in "".join(lines[:first]), "no comment while tokens flow"
    finally:
        server.stop()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_sigterm_lets_streams_finish_then_ends_them(tmp_path: Path, llm: object) -> None:
    """A real `agent-search serve` process: SIGTERM while two streams (native and chat
    completion) wait on a stalled model → after the grace period each ends cleanly, the
    native one with a `done` event, the chat one with a finishing chunk and [DONE]; new
    connections are refused; the process exits."""
    base_url = llm.base_url  # type: ignore[attr-defined]
    cdir, adir = write_project(tmp_path, llm_url=base_url, server={"grace_seconds": 1},
                               assistants={"stall": {"name": "s", "connector": "stall"}})
    port = _free_port()
    env = {**os.environ, "AGENT_SEARCH_HOME": str(tmp_path / "home"),
           "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_search", "serve", "--port", str(port),
         "--config", str(cdir), "--assistants", str(adir)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    chat_lines: list[str] = []

    def chat() -> None:
        with httpx.stream("POST", f"{url}/v1/chat/completions", timeout=30,
                          json={"model": "stall", "stream": True,
                                "messages": [{"role": "user", "content": "think"}]}) as r:
            chat_lines.extend(line for line in r.iter_lines() if line.startswith("data: "))

    try:
        assert wait_for(lambda: _up(url), 60), "the server did not start"
        chatting = threading.Thread(target=chat)
        chatting.start()
        assert wait_for(lambda: any("Thinking" in line for line in chat_lines), 20)
        events: list[str] = []
        started = time.monotonic()
        with httpx.stream("POST", f"{url}/v1/assistants/stall/stream", timeout=30,
                          json={"messages": [{"role": "user", "content": "think"}]}) as r:
            for line in r.iter_lines():
                if line.startswith("data: "):
                    events.append(line[6:])
                    if json.loads(line[6:])["event"] == "text" and len(events) < 99:
                        proc.send_signal(signal.SIGTERM)
                        events.append("<sigterm>")
        elapsed = time.monotonic() - started
        chatting.join(10)
        done = json.loads(events[-1])
        assert done["event"] == "done" and "shutting down" in done["error"]
        assert elapsed < 10, "the stream should end after the 1 s grace, not the 30 s stall"
        assert chat_lines[-1] == "data: [DONE]"
        final = json.loads(chat_lines[-2][6:])
        assert final["choices"][0]["finish_reason"] == "stop"
        assert "shutting down" in final["warning"]
        # uvicorn re-raises the signal it handled once it has shut down cleanly
        assert proc.wait(15) in (0, -signal.SIGTERM)
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{url}/healthz", timeout=2)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


def _up(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def test_serve_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cdir, adir = write_project(tmp_path, server={})
    with pytest.raises(SystemExit) as exc:
        cli_main(["serve", "--host", "0.0.0.0", "--config", str(cdir),
                  "--assistants", str(adir)])
    assert exc.value.code == 2
    assert "no API keys are configured" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        cli_main(["serve", "--workers", "2", "--config", str(cdir), "--assistants", str(adir)])
    assert exc.value.code == 2
    assert "the knowledge base is embedded (no kb.url)" in capsys.readouterr().err
    keyed, _ = write_project(tmp_path / "k", server={
        "api_keys": [{"env": "AGENT_SEARCH_TEST_UNSET_KEY", "user_id": "u"}]})
    with pytest.raises(SystemExit) as exc:
        cli_main(["serve", "--config", str(keyed), "--assistants", str(adir)])
    assert "AGENT_SEARCH_TEST_UNSET_KEY" in capsys.readouterr().err


@pytest.mark.slow
def test_workers_with_a_kb_server_share_records(tmp_path: Path) -> None:
    """`--workers 2` starts when the kb is a server (kb.url; never contacted here), and a
    record made through one worker is read through whichever answers next."""
    cdir, adir = write_project(tmp_path, server={
        "api_keys": [{"sha256": sha256(KEYS["alice"]), "user_id": "alice"}]})
    search = json.loads((cdir / "search.yao").read_text())
    (cdir / "search.yao").write_text(json.dumps({**search, "kb": {"enabled": True,
                                                                  "url": "http://127.0.0.1:9"}}))
    port = _free_port()
    env = {**os.environ, "AGENT_SEARCH_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_search", "serve", "--port", str(port), "--workers", "2",
         "--config", str(cdir), "--assistants", str(adir)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url, h = f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {KEYS['alice']}"}
    try:
        assert wait_for(lambda: _up(url), 90), "the workers did not start"
        ids = []
        for _ in range(6):
            r = httpx.post(f"{url}/v1/assistants/offline/stream", headers=h, timeout=30,
                           json={"messages": [{"role": "user", "content": "shared?"}]})
            assert r.status_code == 200 and '"event": "done"' in r.text
            ids.append(r.headers["x-request-id"])
        for rid in ids:  # new connections: spread over the workers
            got = httpx.get(f"{url}/v1/records/{rid}", headers=h, timeout=10)
            assert got.status_code == 200 and got.json()["request_id"] == rid
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
