"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests and benchmarks of code
that has an LLM step (no LLM needed).

It speaks the real wire format (``POST /v1/chat/completions`` with ``stream: true`` →
``text/event-stream`` of ``chat.completion.chunk`` objects, ending with ``[DONE]``) and
behaves according to the requested ``model`` (one script per name, :data:`SCRIPTS`):

* ``cite`` — answers citing the first two reference ids it finds in the system prompt and
  one unknown id (``999``), in 3-character chunks so markers are split across chunks;
* ``malformed`` — like ``cite`` with a chunk that is not JSON and a keep-alive comment;
* ``error500`` — HTTP 500 with an OpenAI-style error body;
* ``stall`` — one chunk, then silence for 30 s;
* ``tools`` — a ``search`` tool call streamed in fragments; once the request ends with
  the tool's answer, a reply citing the first two references in it (``tools2``: two
  calls in one turn);
* ``delegate`` — reads a JSON task from the user message (keywords / query / rerank /
  research's plan and gaps) and answers JSON (``query`` answers an invalid DSL first
  when the text says ``bad_first``);
* ``echo`` — answers the user's text, ``{ref0}``, ``{ref1}``... replaced by the reference
  ids of the system prompt in order, in 3-character chunks;
* ``verify`` / ``verify-no`` — a grounding verifier's verdict: ``SUPPORTED.`` /
  ``CONTRADICTED``;
* ``bench`` (and any other name) — 20 short tokens, no delay;
* ``long`` — :func:`long_answer`: ~24 KB in 600 chunks, 200 of its 600 sentences citing
  the reference ids of the system prompt in turn;
* any name in ``server.replies`` — that text, in 3-character chunks (a scripted answer).

Every request body is kept in ``server.requests``. In a test on any event loop, use
:class:`ThreadedChatServer` (its own loop in a daemon thread)::

    llm = ThreadedChatServer().start()
    llm.replies["short"] = "An answer #ref:1."
    ...  # point a connector at llm.base_url with model "short"
    llm.stop()

Run standalone with ``python -m agent_search.testing.chat_server [PORT]`` (prints
``ready PORT`` when listening), as the benchmarks do.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["SCRIPTS", "ChatServer", "ThreadedChatServer", "long_answer", "sse_chunk"]

_REF = re.compile(r'"ref": "#ref:([A-Za-z0-9_-]+)"')
_TOOL_REF = re.compile(r'"ref":\s*"#ref:([A-Za-z0-9_-]+)"')

Send = Callable[[bytes], Awaitable[None]]
"""Writes one piece of the chunked response body."""


def sse_chunk(content: str | None = None, *, tool_calls: list[dict[str, Any]] | None = None,
              finish: str | None = None) -> bytes:
    """One ``data:`` frame of a ``chat.completion.chunk`` with this delta."""
    delta: dict[str, Any] = {}
    if content is not None:
        delta["content"] = content
    if tool_calls is not None:
        delta["tool_calls"] = tool_calls
    body = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "model": "test",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(body)}\n\n".encode()


def _user_text(body: dict[str, Any]) -> str:
    for m in reversed(body.get("messages", [])):
        if m.get("role") == "user":
            c = m.get("content")
            return c if isinstance(c, str) else json.dumps(c)
    return ""


def _system_text(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content")) for m in body.get("messages", [])
                     if m.get("role") == "system")


def _ends_with_tool_answer(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or [{}]
    return bool(messages[-1].get("role") == "tool")


def long_answer(ids: list[str], sentences: int = 600) -> str:
    """A long answer (~40 characters a sentence): every third sentence cites one of
    ``ids`` in turn (unknown id ``1`` when there are none)."""
    ids = ids or ["1"]
    out = []
    for n in range(sentences):
        cite = f" #ref:{ids[n // 3 % len(ids)]}" if n % 3 == 0 else ""
        out.append(f"Point {n} of the long answer is here{cite}. ")
    return "".join(out)


async def _in_pieces(send: Send, text: str, size: int = 3) -> None:
    for i in range(0, len(text), size):
        await send(sse_chunk(text[i:i + size]))


# -- delegated tasks (the ``delegate`` model) ------------------------------------------

def _keywords_task(task: dict[str, Any]) -> str:
    return 'Sure: ```json\n{"keywords": ["delegated", "keywords"]}\n```'


def _plan_task(task: dict[str, Any]) -> str:
    """Research: "A and B" → two parts; a question about loops: one."""
    question = str(task.get("question", ""))
    parts = [p.strip(" ?") for p in question.replace(" and ", "|").split("|")]
    return "Plan:\n" + json.dumps({"parts": parts})


def _gaps_task(task: dict[str, Any]) -> str:
    """Research: a gap query; "loop" in the question: the same one again."""
    part = str(task.get("part", ""))
    if "loop" in str(task.get("question", "")):
        return json.dumps({"queries": list(task.get("searched", [part]))[:1]})
    return json.dumps({"queries": [f"{part} details"]})


def _rerank_task(task: dict[str, Any]) -> str:
    """Reverses the order: the last document is the most relevant."""
    n = len(task.get("documents", []))
    return json.dumps([{"index": i, "score": (i + 1) / n} for i in range(n)])


def _query_task(task: dict[str, Any]) -> str:
    schemas = task.get("schemas") or [{}]
    model = next((s.get("id") for s in schemas if str(s.get("id", "")).endswith("product")),
                 schemas[0].get("id"))
    if "bad_first" in task.get("text", "") and "feedback" not in task:
        return json.dumps({"model": model, "wheres": [{"field": "no_such_field",
                                                       "op": "=", "value": 1}]})
    return json.dumps({"dsl": {"model": model,
                               "wheres": [{"field": "price", "op": "<", "value": 100}],
                               "orders": [{"field": "price", "order": "asc"}]}})


_TASKS: dict[str, Callable[[dict[str, Any]], str]] = {
    "keywords": _keywords_task, "plan": _plan_task, "gaps": _gaps_task,
    "rerank": _rerank_task, "query": _query_task,
}


def _delegate_answer(body: dict[str, Any]) -> str:
    try:
        task = json.loads(_user_text(body))
    except ValueError:
        return "not a task"
    answer = _TASKS.get(str(task.get("task"))) if isinstance(task, dict) else None
    return answer(task) if answer else "{}"


# -- the scripts, one per model name ---------------------------------------------------

async def _cite(server: ChatServer, body: dict[str, Any], send: Send) -> None:
    text = "Here is the answer"
    for cid in _REF.findall(_system_text(body))[:2]:
        text += f" with a fact #ref:{cid}"
    text += " and a made-up one #ref:999."
    malformed = body.get("model") == "malformed"
    for n, i in enumerate(range(0, len(text), 3)):
        await send(sse_chunk(text[i:i + 3]))
        if malformed and n == 2:
            await send(b": keep-alive\n\n")
            await send(b"data: {this is not json\n\n")


async def _echo(server: ChatServer, body: dict[str, Any], send: Send) -> None:
    text = _user_text(body)
    for n, cid in enumerate(_REF.findall(_system_text(body))):
        text = text.replace(f"{{ref{n}}}", cid)
    await _in_pieces(send, text)


async def _long(server: ChatServer, body: dict[str, Any], send: Send) -> None:
    text = long_answer(_REF.findall(_system_text(body)))
    size = -(-len(text) // 600)
    for i in range(0, len(text), size):
        await send(sse_chunk(text[i:i + size]))
        if server.piece_delay:
            await asyncio.sleep(server.piece_delay)


async def _stall(server: ChatServer, body: dict[str, Any], send: Send) -> None:
    await send(sse_chunk("Thinking"))
    await asyncio.sleep(30)


async def _tools(server: ChatServer, body: dict[str, Any], send: Send) -> None:
    if _ends_with_tool_answer(body):
        ids = _TOOL_REF.findall(body["messages"][-1].get("content", ""))[:2]
        await send(sse_chunk("From the tool: " + " ".join(f"#ref:{i}" for i in ids)))
        return
    await send(sse_chunk(tool_calls=[{"index": 0, "id": "call_1", "type": "function",
                                      "function": {"name": "search", "arguments": ""}}]))
    for frag in ['{"type": "kb", ', '"query": "hello"}']:
        await send(sse_chunk(tool_calls=[{"index": 0, "function": {"arguments": frag}}]))
    await send(sse_chunk(finish="tool_calls"))


async def _tools2(server: ChatServer, body: dict[str, Any], send: Send) -> None:
    """Two tool calls in one turn, then an answer citing the first reference of each."""
    if _ends_with_tool_answer(body):
        answers = [m for m in body["messages"] if m.get("role") == "tool"]
        ids = [i for m in answers for i in _TOOL_REF.findall(m.get("content", ""))[:1]]
        await send(sse_chunk("Both: " + " ".join(f"#ref:{i}" for i in ids)))
        return
    for index, args in enumerate(['{"type": "kb", "query": "alpha"}',
                                  '{"type": "web", "query": "beta"}']):
        await send(sse_chunk(tool_calls=[{"index": index, "id": f"call_{index + 1}",
                                          "type": "function",
                                          "function": {"name": "search", "arguments": args}}]))
    await send(sse_chunk(finish="tool_calls"))


async def _delegate(server: ChatServer, body: dict[str, Any], send: Send) -> None:
    await send(sse_chunk(_delegate_answer(body)))


async def _verify(server: ChatServer, body: dict[str, Any], send: Send) -> None:
    """A grounding verifier's one-word verdict."""
    await send(sse_chunk("SUPPORTED." if body.get("model") == "verify" else "CONTRADICTED"))


async def _tokens(server: ChatServer, body: dict[str, Any], send: Send) -> None:
    for i in range(20):
        await send(sse_chunk(f"tok{i} "))


Script = Callable[["ChatServer", dict[str, Any], Send], Awaitable[None]]
"""Streams the content frames of one answer (the server adds the end)."""

SCRIPTS: dict[str, Script] = {
    "cite": _cite, "malformed": _cite, "echo": _echo, "long": _long, "stall": _stall,
    "tools": _tools, "tools2": _tools2, "delegate": _delegate,
    "verify": _verify, "verify-no": _verify, "bench": _tokens,
}
"""The behaviour of each model name; a name not here streams 20 tokens (``bench``)."""

_NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
_STREAM_HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                b"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n")


def _overloaded() -> bytes:
    payload = json.dumps({"error": {"message": "the model is overloaded",
                                    "type": "server_error"}}).encode()
    return (b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(len(payload)).encode() + b"\r\n\r\n" + payload)


class ChatServer:
    """The server on the running event loop: ``await start()``, then ``port``."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.replies: dict[str, str] = {}
        """Scripted answers by model name (these take precedence over :data:`SCRIPTS`)."""
        self.piece_delay = 0.0
        """Seconds between the ``long`` model's pieces (0: all at once)."""
        self.port = 0
        self._server: asyncio.base_events.Server | None = None

    async def start(self, port: int = 0) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                headers = {k.strip().lower(): v.strip() for k, _, v in
                           (line.partition(":") for line in lines[1:] if line)}
                length = int(headers.get("content-length", "0"))
                raw = await reader.readexactly(length) if length else b""
                await self._respond(lines[0], raw, writer)
                if headers.get("connection", "").lower() == "close":
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError,
                asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def _respond(self, request_line: str, raw: bytes,
                       writer: asyncio.StreamWriter) -> None:
        if not request_line.startswith("POST") or "/chat/completions" not in request_line:
            writer.write(_NOT_FOUND)
            await writer.drain()
            return
        body = json.loads(raw or b"{}")
        self.requests.append(body)
        model = str(body.get("model", ""))
        if model == "error500":
            writer.write(_overloaded())
            await writer.drain()
            return
        writer.write(_STREAM_HEAD)

        async def send(data: bytes) -> None:
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            await writer.drain()

        if model in self.replies:
            await _in_pieces(send, self.replies[model])
        else:
            await SCRIPTS.get(model, _tokens)(self, body, send)
        await send(sse_chunk(finish="stop"))
        await send(b"data: [DONE]\n\n")
        await send(b"")  # end of chunked body
        await writer.drain()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()


class ThreadedChatServer:
    """The server on its own event loop in a daemon thread (so tests on any loop can use
    it)."""

    def __init__(self) -> None:
        self.server = ChatServer()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self.server.start())
        self._ready.set()
        self._loop.run_forever()

    def start(self) -> ThreadedChatServer:
        self._thread.start()
        self._ready.wait(10)
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self.server.requests

    @property
    def replies(self) -> dict[str, str]:
        return self.server.replies

    def stop(self) -> None:
        async def shutdown() -> None:
            await self.server.close()
            current = asyncio.current_task()
            tasks = [t for t in asyncio.all_tasks() if t is not current]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)


async def _main(port: int) -> None:
    server = ChatServer()
    await server.start(port)
    print(f"ready {server.port}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(_main(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
