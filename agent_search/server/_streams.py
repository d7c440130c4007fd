"""Running an assistant's ``stream()`` for a request and writing it out: as the native
event stream, as OpenAI chat-completion chunks, or collected into one completion.

Shared by all three: leaving the stream, however it is left, cancels its work, so a
cancelled request (client gone, shutdown) cancels its searches and LLM call; search
completions, time to first token and stream duration go to the metrics.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from agent_search.agent import Assistant, Options
from agent_search.events import Citations, Done, Event, Grounding, SearchComplete, TextDelta
from agent_search.server._metrics import Metrics
from agent_search.server._sse import Write, sse
from agent_search.server.service import Service


@dataclass(slots=True)
class Outcome:
    """What a finished stream said, for the chat-completion forms."""

    text: list[str] = field(default_factory=list)
    references: list[dict[str, Any]] = field(default_factory=list)
    used: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    grounding: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    done: bool = False


class _Observed:
    """The events of one stream, passed through unchanged; search completions and the
    first text go to the metrics on the way. A plain iterator, not an async generator:
    nothing here may hold a cancel scope across a ``yield`` (see :func:`run_stream`)."""

    def __init__(self, events: AsyncIterator[Event], metrics: Metrics, endpoint: str,
                 started: float) -> None:
        self._events = events
        self._metrics = metrics
        self._endpoint = endpoint
        self._started = started
        self._first = True

    def __aiter__(self) -> _Observed:
        return self

    async def __anext__(self) -> Event:
        event = await self._events.__anext__()
        if isinstance(event, SearchComplete):
            self._metrics.observe_search(event.type, event.error, event.duration_ms)
        elif isinstance(event, Grounding):
            self._metrics.observe_grounding(event.grounding)
        elif self._first and isinstance(event, TextDelta):
            self._first = False
            self._metrics.ttft_seconds.labels(endpoint=self._endpoint).observe(
                time.perf_counter() - self._started)
        return event


@contextlib.asynccontextmanager
async def run_stream(service: Service, assistant: Assistant, messages: list[dict[str, Any]],
                     options: Options, endpoint: str) -> AsyncIterator[AsyncIterator[Event]]:
    """The assistant's events, observed for the metrics.

    Built on :meth:`Assistant.run_stream` (a context manager), not on ``stream()`` (an
    async generator): the generator keeps its task group open across each ``yield``, so
    closing it after the request was cancelled between two events — a client leaving
    mid-answer — could only be done inside a new cancel scope, which anyio refuses
    ("exit a cancel scope that isn't the current task's"), leaving the stream's work
    running. Leaving this block, however it is left, cancels that work and waits for it.
    """
    started = time.perf_counter()
    try:
        async with assistant.run_stream(messages, options) as events:
            yield _Observed(events, service.metrics, endpoint, started)
    finally:
        service.metrics.stream_seconds.labels(endpoint=endpoint).observe(
            time.perf_counter() - started)


def _apply(outcome: Outcome, event: Event) -> None:
    if isinstance(event, TextDelta):
        outcome.text.append(event.text)
    elif isinstance(event, Citations):
        outcome.used, outcome.unknown = list(event.used), list(event.unknown)
    elif isinstance(event, Done):
        outcome.references = list(event.references)
        outcome.grounding = list(event.grounding)
        outcome.error = event.error
        outcome.done = True


async def write_native(service: Service, assistant: Assistant, messages: list[dict[str, Any]],
                       options: Options, write: Write) -> None:
    """Every output event as ``event: <name>`` / ``data: <json>``."""
    async with run_stream(service, assistant, messages, options, "native") as events:
        async for event in events:
            await write(sse(event.to_dict(), event.event))


def native_stop_frame(request_id: str, error: str = "the server is shutting down") -> bytes:
    """The ``done`` event that ends a native stream cut short (shutdown, or a failure
    after the headers went out)."""
    return sse(Done(request_id, error=error).to_dict(), "done")


def estimate_tokens(text: str) -> int:
    """About four characters a token (OpenAI's rule of thumb for English): neither the
    offline responder nor an OpenAI-compatible stream reports a count we could pass on."""
    return -(-len(text) // 4)


def message_text(messages: list[dict[str, Any]]) -> str:
    """The text of a conversation: string contents and the ``text`` of content parts."""
    parts: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(p["text"] for p in content
                         if isinstance(p, dict) and isinstance(p.get("text"), str))
    return "\n".join(parts)


class ChatFormat:
    """OpenAI ``chat.completion`` / ``chat.completion.chunk`` objects for one request."""

    _MARK = "@@content@@"

    def __init__(self, request_id: str, model: str, prompt: str = "") -> None:
        self.request_id = request_id
        self.id = f"chatcmpl-{request_id}"
        self.model = model
        self.created = int(time.time())
        self.prompt = prompt
        # a token's frame is this chunk with its text spliced in: one small json.dumps
        # per token instead of encoding the whole chunk (same bytes, see the tests)
        head, _, tail = sse(self.chunk({"content": self._MARK})).partition(
            json.dumps(self._MARK).encode())
        self._content_head, self._content_tail = head, tail

    def content_frame(self, text: str) -> bytes:
        """``sse(self.chunk({"content": text}))``, cheaply."""
        return (self._content_head + json.dumps(text, ensure_ascii=False).encode()
                + self._content_tail)

    def usage(self, outcome: Outcome) -> dict[str, Any]:
        """Estimated token counts (:func:`estimate_tokens`): the prompt is the request's
        messages and the references the answer cites (the model saw those, and maybe
        more), the completion is the answer."""
        prompt = estimate_tokens(self.prompt) + sum(
            estimate_tokens(str(r.get("content") or "")) for r in outcome.references)
        completion = estimate_tokens("".join(outcome.text))
        return {"prompt_tokens": prompt, "completion_tokens": completion,
                "total_tokens": prompt + completion, "estimated": True}

    def usage_chunk(self, outcome: Outcome) -> dict[str, Any]:
        """The last chunk when the request asks ``stream_options.include_usage``: no
        choices, the usage (as OpenAI sends it)."""
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                "model": self.model, "system_fingerprint": None, "choices": [],
                "usage": self.usage(outcome)}

    def chunk(self, delta: dict[str, Any], finish: str | None = None,
              **extra: Any) -> dict[str, Any]:
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                "model": self.model, "system_fingerprint": None,
                "choices": [{"index": 0, "delta": delta, "logprobs": None,
                             "finish_reason": finish}], **extra}

    def final_chunk(self, outcome: Outcome) -> dict[str, Any]:
        extra: dict[str, Any] = {"request_id": self.request_id,
                                 "references": outcome.references,
                                 "citations": {"used": outcome.used,
                                               "unknown": outcome.unknown},
                                 "grounding": outcome.grounding}
        if outcome.error:
            extra["warning"] = outcome.error
        return self.chunk({}, "stop", **extra)

    def completion(self, outcome: Outcome) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": self.id, "object": "chat.completion", "created": self.created,
            "model": self.model, "system_fingerprint": None,
            "choices": [{"index": 0, "logprobs": None, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "".join(outcome.text),
                                     "refusal": None}}],
            "usage": self.usage(outcome),
            "request_id": self.request_id, "references": outcome.references,
            "citations": {"used": outcome.used, "unknown": outcome.unknown},
            "grounding": outcome.grounding}
        if outcome.error:
            body["warning"] = outcome.error
        return body

    def stop_frames(self, error: str = "the server is shutting down") -> bytes:
        """How a stream cut short (shutdown, a failure) ends: a finishing chunk, then
        [DONE]."""
        outcome = Outcome(error=error)
        return sse(self.final_chunk(outcome)) + b"data: [DONE]\n\n"


async def write_chat(service: Service, assistant: Assistant, messages: list[dict[str, Any]],
                     options: Options, fmt: ChatFormat, write: Write, *,
                     include_usage: bool = False) -> None:
    """The answer as ``chat.completion.chunk`` frames; references on the last one, then
    the usage chunk if asked for. A stream that fails before any text ends with an
    OpenAI-style ``error`` frame (the official client raises it as ``APIError``)."""
    outcome = Outcome()
    await write(sse(fmt.chunk({"role": "assistant", "content": ""})))
    async with run_stream(service, assistant, messages, options, "chat") as events:
        async for event in events:
            _apply(outcome, event)
            if isinstance(event, TextDelta):
                await write(fmt.content_frame(event.text))
    if outcome.error and not outcome.text:
        await write(sse({"error": {"message": outcome.error, "type": "api_error",
                                   "param": None, "code": "stream_failed"}}))
    else:
        await write(sse(fmt.final_chunk(outcome)))
        if include_usage:
            await write(sse(fmt.usage_chunk(outcome)))
    await write(b"data: [DONE]\n\n")


async def collect_chat(service: Service, assistant: Assistant, messages: list[dict[str, Any]],
                       options: Options) -> Outcome:
    outcome = Outcome()
    async with run_stream(service, assistant, messages, options, "chat") as events:
        async for event in events:
            _apply(outcome, event)
    return outcome
