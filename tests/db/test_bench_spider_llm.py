"""The LLM column of ``bench/bench_spider.py`` (issue 23): the same questions through an
OpenAI-compatible endpoint configured as the ``uses.query`` generator, here a real
chat server on 127.0.0.1 answering one fixed DSL. The bench runs as a user runs it (a
subprocess), on the smallest Spider database."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.data import BENCH_DATA
from tests.support.llm_server import ChatServer, ThreadedChatServer, sse_chunk

ROOT = Path(__file__).parents[2]
DATA = BENCH_DATA / "spider-dev-public"
FIXED = {"model": "singer"}  # every singer: right for "how many singers", some records

pytestmark = pytest.mark.bench_data("spider-dev-public")


class _FixedDSL(ChatServer):
    """Answers every chat request with the same DSL, streamed as OpenAI does."""

    async def _respond(self, request_line: str, raw: bytes, writer: Any) -> None:
        self.requests.append(json.loads(raw or b"{}"))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")
        for data in (sse_chunk(json.dumps(FIXED)), sse_chunk(finish="stop"), b"data: [DONE]\n\n",
                     b""):
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        await writer.drain()


@pytest.fixture
def fixed_llm() -> Iterator[ThreadedChatServer]:
    server = ThreadedChatServer()
    server.server = _FixedDSL()
    server.start()
    yield server
    server.stop()


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bench.bench_spider", "--db", "singer", *args],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def _row(out: str, measure: str) -> list[str]:
    line = next(ln for ln in out.splitlines() if ln.startswith(f"| {measure} |"))
    return [c.strip() for c in line.strip("|").split("|")][1:]


def test_llm_column_is_scored_beside_builtin(fixed_llm: ThreadedChatServer) -> None:
    done = _bench("--llm-url", fixed_llm.base_url, "--llm-model", "fixed")
    assert done.returncode == 0, done.stderr
    header = next(ln for ln in done.stdout.splitlines() if ln.startswith("| measure |"))
    assert "builtin" in header and "LLM (fixed)" in header
    # the fixed DSL lists every singer: its total answers "how many singers" (the
    # database's count questions), a record question without a condition is right and
    # one with a condition is not; it computes no aggregate
    assert int(_row(done.stdout, "how many questions")[1]) >= 1
    assert float(_row(done.stdout, "how many right")[1]) == 1.0
    assert 0 < float(_row(done.stdout, "record F1")[1]) < 1
    assert float(_row(done.stdout, "aggregate right")[1]) == 0.0
    assert float(_row(done.stdout, "p50 ms")[1]) > 0
    asked = len(json.loads((DATA / "questions.json").read_text()))
    questions = int(_row(done.stdout, "questions")[1])
    assert 0 < questions < asked
    # the probe, then one generation per question (the DSL is valid: no retries), each
    # with the schemas of the database and the generator's system prompt
    assert len(fixed_llm.requests) == 1 + questions
    assert all(r["model"] == "fixed" for r in fixed_llm.requests)
    for request in fixed_llm.requests[1:]:
        system, user = request["messages"][0], request["messages"][-1]
        assert system["role"] == "system" and "QueryDSL" in system["content"]
        task = json.loads(user["content"])
        assert task["task"] == "query" and task["text"]
        assert {s["id"] for s in task["schemas"]} >= {"singer", "song"}
    assert "failed" not in done.stdout


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def chat_server() -> Iterator[ThreadedChatServer]:
    server = ThreadedChatServer().start()
    yield server
    server.stop()


def _failed_lines(out: str) -> list[re.Match[str]]:
    errors = [ln for ln in out.splitlines() if ln.startswith("LLM ")]
    found = [re.fullmatch(r"LLM (\w+): (\d+) of (\d+) questions failed: (.+)", ln)
             for ln in errors]
    assert errors and all(found), errors
    return [m for m in found if m]


@pytest.mark.parametrize(("model", "why"), [
    (None, "LLM endpoint: ConnectError"),                         # nothing listens
    ("error500", "LLM endpoint: HTTP 500: the model is overloaded"),  # refuses
])
def test_failing_endpoint_is_one_line_per_question_kind(chat_server: ThreadedChatServer,
                                                        model: str | None, why: str) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1" if model is None else chat_server.base_url
    done = _bench("--llm-url", url, "--llm-model", model or "m")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    lines = _failed_lines(done.stdout)
    assert {m.group(1) for m in lines} >= {"record", "count", "aggregate"}
    assert all(m.group(2) == m.group(3) for m in lines)  # every question failed
    assert all(m.group(4).startswith(f"not asked: {why}") for m in lines), lines
    assert len(chat_server.requests) == (0 if model is None else 1)  # the probe only
    # the builtin column is untouched; the LLM one scores nothing
    builtin, llm, _goal = _row(done.stdout, "how many right")
    assert float(builtin) > 0 and float(llm) == 0


def test_endpoint_answering_no_dsl_is_not_asked_after_three_questions(
        chat_server: ThreadedChatServer) -> None:
    done = _bench("--llm-url", chat_server.base_url, "--llm-model", "bench")  # prose only
    assert done.returncode == 0, done.stderr
    lines = _failed_lines(done.stdout)
    assert all(m.group(2) == m.group(3) for m in lines)
    assert any("answer contains no JSON" in m.group(4) for m in lines), lines
    assert any("failed the first 3 questions" in m.group(4) for m in lines), lines
    # the probe, then 3 questions asked once each (an answer without JSON is a failure
    # of the delegate, not an invalid DSL to ask again about), then none
    assert len(chat_server.requests) == 1 + 3


@pytest.mark.parametrize(("args", "message"), [
    (["--llm-url", "ftp://example.org", "--llm-model", "m"], "--llm-url"),
    (["--llm-url", "http://127.0.0.1:9/v1"], "--llm-model"),
    (["--llm-url", "http://127.0.0.1:9/v1", "--llm-model", "m",
      "--llm-key-env", "BENCH_SPIDER_NO_SUCH_KEY"], "BENCH_SPIDER_NO_SUCH_KEY"),
])
def test_bad_llm_options_are_refused_before_anything_runs(args: list[str],
                                                          message: str) -> None:
    done = _bench(*args)
    assert done.returncode == 2 and message in done.stderr
    assert "Traceback" not in done.stderr and not done.stdout
