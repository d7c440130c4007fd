"""The scripted chat server of :mod:`agent_search.testing.chat_server` runs on its own
(``python -m``), as the benchmarks start it, and speaks the OpenAI streaming format."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]


def _contents(stream: str) -> list[str]:
    frames = [line.removeprefix("data: ") for line in stream.splitlines()
              if line.startswith("data: ")]
    assert frames[-1] == "[DONE]"
    chunks = [json.loads(f) for f in frames[:-1]]
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    return [c["choices"][0]["delta"].get("content", "") for c in chunks]


def test_the_server_runs_as_a_module_and_answers_by_script() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen([sys.executable, "-m", "agent_search.testing.chat_server", "0"],
                            stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        assert proc.stdout is not None
        word, port = proc.stdout.readline().split()
        assert word == "ready"
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        task = {"task": "rerank", "documents": ["a", "b"]}
        with httpx.Client(timeout=10) as client:
            delegated = client.post(url, json={"model": "delegate", "stream": True, "messages": [
                {"role": "user", "content": json.dumps(task)}]})
            other = client.post(url, json={"model": "any-name", "stream": True,
                                           "messages": [{"role": "user", "content": "hi"}]})
            missing = client.post(url.replace("chat/completions", "models"), json={})
        assert delegated.headers["content-type"] == "text/event-stream"
        assert json.loads("".join(_contents(delegated.text))) == [
            {"index": 0, "score": 0.5}, {"index": 1, "score": 1.0}]
        assert "".join(_contents(other.text)) == "".join(f"tok{i} " for i in range(20))
        assert missing.status_code == 404
    finally:
        proc.kill()
        proc.wait(5)
