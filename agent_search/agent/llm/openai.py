"""An OpenAI-compatible chat-completions client: ``POST {base_url}/chat/completions``
with ``stream: true``, read as server-sent events.

Works with OpenAI, Ollama, vLLM, llama.cpp server and anything speaking the same wire
format. Robust to what real streams do: keep-alive comments, blank lines, chunks that are
not JSON (skipped with a warning), an ``error`` object mid-stream, HTTP errors (one-line
:class:`LLMError` with the status and the server's message) and stalls (no byte for
``idle_timeout`` seconds → :class:`LLMError`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import weakref
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
import sniffio

from agent_search.agent.llm.base import ChatEvent, LLMError, ToolCall
from agent_search.agent.settings import ConnectorSettings

_LIMITS = httpx.Limits(max_connections=250, max_keepalive_connections=50)
_POOL_SHARDS = 8


def _running_loop() -> object:
    """The event loop this task runs on (an asyncio loop, or the trio run's token), which
    a pooled httpx client is bound to. RuntimeError outside of one."""
    if sniffio.current_async_library() == "trio":
        import trio

        return trio.lowlevel.current_trio_token()
    return asyncio.get_running_loop()


class OpenAIChatClient:
    def __init__(self, name: str, settings: ConnectorSettings) -> None:
        self.name = name
        self.settings = settings
        self._clients: weakref.WeakKeyDictionary[object, list[httpx.AsyncClient | None]]
        self._clients = weakref.WeakKeyDictionary()
        self._turn = itertools.count()

    def _client(self) -> httpx.AsyncClient:
        """A pooled client of this event loop (an httpx client cannot cross loops).

        Calls rotate over a few small pools instead of one big one: httpcore scans its
        whole pool on every request and release, which costs O(connections²) when
        hundreds of streams run at once. Pools are created on first use."""
        loop = _running_loop()
        shards = self._clients.get(loop)
        if shards is None:
            shards = [None] * _POOL_SHARDS
            self._clients[loop] = shards
        i = next(self._turn) % _POOL_SHARDS
        client = shards[i]
        if client is None or client.is_closed:
            s = self.settings
            # a plain-http endpoint (a local server) never uses TLS: skip loading the CA
            # bundle, which costs tens of milliseconds per client; redirects are not
            # followed, so the request cannot end up on https unverified
            plain_http = s.base_url.lower().startswith("http://")
            client = httpx.AsyncClient(
                timeout=httpx.Timeout(s.idle_timeout, connect=s.connect_timeout),
                limits=_LIMITS, verify=not plain_http, follow_redirects=False,
            )
            shards[i] = client
        return client

    async def aclose(self) -> None:
        try:
            loop = _running_loop()
        except RuntimeError:  # not in an event loop (sniffio's error is one too)
            return
        for client in self._clients.pop(loop, None) or []:
            if client is not None:
                await client.aclose()

    def _payload(self, messages: Sequence[dict[str, Any]],
                 tools: Sequence[dict[str, Any]] | None) -> dict[str, Any]:
        s = self.settings
        body: dict[str, Any] = {"model": s.model, "messages": list(messages), "stream": True}
        if s.temperature is not None:
            body["temperature"] = s.temperature
        if s.max_tokens is not None:
            body["max_tokens"] = s.max_tokens
        if tools:
            body["tools"] = list(tools)
        return body

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "text/event-stream", **self.settings.headers}
        key = self.settings.resolved_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    async def stream_chat(self, messages: Sequence[dict[str, Any]],
                          tools: Sequence[dict[str, Any]] | None = None
                          ) -> AsyncIterator[ChatEvent]:
        url = self.settings.base_url.rstrip("/") + "/chat/completions"
        reader = _StreamReader(self.name, self.settings.timeout)
        try:
            async with self._client().stream("POST", url, json=self._payload(messages, tools),
                                             headers=self._headers()) as response:
                if response.status_code >= 400:
                    body = (await response.aread()).decode("utf-8", "replace")
                    raise LLMError(f"{self.name}: HTTP {response.status_code}: "
                                   f"{_error_message(body)}")
                async for line in response.aiter_lines():
                    for event in reader.feed(line):
                        yield event
        except httpx.TimeoutException as exc:
            kind = "connect" if isinstance(exc, httpx.ConnectTimeout) else "stalled"
            raise LLMError(f"{self.name}: {kind}: no data for "
                           f"{self._timeout_for(exc):g}s") from exc
        except httpx.HTTPError as exc:
            raise LLMError(f"{self.name}: {type(exc).__name__}: {exc}".rstrip(": ")) from exc
        for event in reader.end():
            yield event

    def _timeout_for(self, exc: httpx.TimeoutException) -> float:
        if isinstance(exc, httpx.ConnectTimeout):
            return self.settings.connect_timeout
        return self.settings.idle_timeout


class _StreamReader:
    """The wire format of one streamed completion, read line by line: each SSE line in,
    the events it makes out (text, warnings); the tool-call fragments and the finish
    reason gathered for the end. Raises :class:`LLMError` for an ``error`` chunk and when
    the whole answer takes longer than ``timeout`` seconds."""

    def __init__(self, name: str, timeout: float) -> None:
        self.name = name
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.calls: dict[int, dict[str, str]] = {}
        self.finish: str | None = None
        self.done = False
        """``[DONE]`` seen: the lines after it are read (a fully read response lets the
        connection go back to the pool for the next call) and ignored."""

    def feed(self, line: str) -> list[ChatEvent]:
        if time.monotonic() > self.deadline:
            raise LLMError(f"{self.name}: no complete answer within {self.timeout:g}s")
        data = _sse_data(line)
        if data is None or self.done:
            return []
        if data == "[DONE]":
            self.done = True
            return []
        try:
            chunk = json.loads(data)
        except ValueError:
            return [self._warning(f"skipped a malformed chunk: {data[:60]!r}")]
        if not isinstance(chunk, dict):
            return [self._warning("skipped a chunk that is not an object")]
        if chunk.get("error"):
            raise LLMError(f"{self.name}: {_error_message(json.dumps(chunk))}")
        return [ChatEvent("text", text=t) for t in self._choice_texts(chunk)]

    def _choice_texts(self, chunk: dict[str, Any]) -> list[str]:
        """The text of the first choice's delta (other choices are not asked for);
        its tool-call fragments and finish reason are kept."""
        texts: list[str] = []
        for choice in chunk.get("choices") or []:
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                texts += self._read_choice(choice)
        return texts

    def _read_choice(self, choice: dict[str, Any]) -> list[str]:
        """The text of one choice's delta; its tool-call fragments and finish reason kept."""
        delta = choice.get("delta") or {}
        texts: list[str] = []
        if isinstance(delta, dict):
            text = delta.get("content")
            if isinstance(text, str) and text:
                texts.append(text)
            _accumulate_tool_calls(self.calls, delta.get("tool_calls"))
        if choice.get("finish_reason"):
            self.finish = str(choice["finish_reason"])
        return texts

    def _warning(self, text: str) -> ChatEvent:
        return ChatEvent("warning", text=f"{self.name}: {text}")

    def end(self) -> list[ChatEvent]:
        """The events of the stream's end: the tool calls, if any, then ``finish``."""
        events: list[ChatEvent] = []
        if self.calls:
            events.append(ChatEvent("tool_calls", tool_calls=[
                ToolCall(id=c.get("id") or f"call_{i}", name=c.get("name", ""),
                         arguments=c.get("arguments", ""))
                for i, c in sorted(self.calls.items())
            ], finish_reason=self.finish))
        events.append(ChatEvent("finish", finish_reason=self.finish))
        return events


def _sse_data(line: str) -> str | None:
    """The payload of an SSE ``data:`` line; None for comments, blank and other fields."""
    if not line.startswith("data:"):
        return None
    data = line[5:]
    return data[1:] if data.startswith(" ") else data


def _accumulate_tool_calls(calls: dict[int, dict[str, str]], deltas: Any) -> None:
    """Tool calls stream as fragments keyed by ``index``: id and name once, arguments in
    pieces."""
    if not isinstance(deltas, list):
        return
    for d in deltas:
        if isinstance(d, dict) and isinstance(d.get("index", 0), int):
            _add_fragment(calls.setdefault(d.get("index", 0), {}), d)


def _add_fragment(call: dict[str, str], fragment: dict[str, Any]) -> None:
    """One fragment into its call: the id when it has one, name and arguments appended."""
    if fragment.get("id"):
        call["id"] = str(fragment["id"])
    fn = fragment.get("function") or {}
    if not isinstance(fn, dict):
        return
    for key in ("name", "arguments"):
        if fn.get(key):
            call[key] = call.get(key, "") + str(fn[key])


def _error_message(body: str) -> str:
    """The server's own message from an OpenAI-style error body, else its first line."""
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict) and err.get("message"):
            return " ".join(str(err["message"]).split())[:300]
        if isinstance(err, str):
            return err[:300]
    lines = body.strip().splitlines()
    return lines[0][:300] if lines else "(empty body)"
