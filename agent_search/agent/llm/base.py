"""What the runtime needs from a chat model: a stream of text deltas and, at the end,
the tool calls the model asked for."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import anyio

from agent_search.errors import RunError


class LLMError(RunError):
    """The chat endpoint failed (HTTP error, stall, broken stream). One-line message."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str
    """The raw JSON text of the arguments, as the model produced it."""


@dataclass(frozen=True, slots=True)
class ChatEvent:
    kind: Literal["text", "tool_calls", "warning", "finish"]
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None


@runtime_checkable
class ChatClient(Protocol):
    name: str

    def stream_chat(self, messages: Sequence[dict[str, Any]],
                    tools: Sequence[dict[str, Any]] | None = None) -> AsyncIterator[ChatEvent]:
        """Stream one completion. Raises :class:`LLMError` on failure."""
        ...


async def completion_text(client: ChatClient, messages: Sequence[dict[str, Any]]) -> str:
    """The text of one completion, whole (the steps that read an answer at once: the
    follow-up rewrite, the grounding verifier). The stream is closed however it ends, so
    a deadline that cancels the read does not leave its connection open."""
    stream = client.stream_chat(messages)
    parts: list[str] = []
    try:
        async for event in stream:
            if event.kind == "text":
                parts.append(event.text)
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            with anyio.CancelScope(shield=True):
                await close()
    return "".join(parts)
