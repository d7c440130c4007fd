"""Helpers over OpenAI-style chat messages: text of a message and where injected system
messages go. How a conversation's last turn is searched is
:mod:`agent_search.agent._followup`'s."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Message = dict[str, Any]

def message_text(message: Message) -> str:
    """The text of a message whose ``content`` is a string or a list of content parts
    (only ``type: "text"`` parts count)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [str(p.get("text", "")) for p in content
                 if isinstance(p, dict) and p.get("type") == "text"]
        return "\n".join(t for t in texts if t)
    return ""


def last_user_index(messages: Sequence[Message]) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return i
    return None


def leading_system_count(messages: Sequence[Message]) -> int:
    n = 0
    while n < len(messages) and messages[n].get("role") == "system":
        n += 1
    return n


def insert_after_system(messages: Sequence[Message], new: Sequence[Message]) -> list[Message]:
    """``new`` placed after the leading system messages of ``messages``."""
    n = leading_system_count(messages)
    return [*messages[:n], *new, *messages[n:]]


def to_llm_messages(messages: Sequence[Message]) -> list[Message]:
    """Messages as an OpenAI-compatible endpoint accepts them: ``type: "data"`` parts
    (consumed by the runtime) are dropped and text-only part lists become strings."""
    return [{**m, "content": _llm_content(m["content"])}
            if isinstance(m.get("content"), list) else m for m in messages]


def _part_of(part: Any, kind: str) -> bool:
    return isinstance(part, dict) and part.get("type") == kind


def _llm_content(content: list[Any]) -> str | list[Any]:
    """A part list without its ``data`` parts; the text joined when only text is left."""
    parts = [p for p in content if not _part_of(p, "data")]
    if all(_part_of(p, "text") for p in parts):
        return "\n".join(str(p.get("text", "")) for p in parts)
    return parts


def validate_messages(messages: Any) -> list[Message]:
    """Check the shape of the caller's messages; a ValueError names the bad one."""
    if not isinstance(messages, list | tuple):
        raise ValueError("messages must be a list of {role, content} objects")
    out: list[Message] = []
    for i, m in enumerate(messages):
        if isinstance(m, str):  # convenience: a bare string is a user message
            m = {"role": "user", "content": m}
        if not isinstance(m, dict) or "role" not in m:
            raise ValueError(f"messages[{i}] must be an object with 'role' and 'content'")
        if m["role"] not in ("system", "user", "assistant", "tool"):
            raise ValueError(f"messages[{i}].role {m['role']!r} is not system/user/assistant/tool")
        out.append(dict(m))
    return out


def validate_conversation(messages: Any) -> list[Message]:
    """:func:`validate_messages`, and a ValueError when the conversation ends in a user
    message with nothing to ask (a question of only spaces used to run no search and
    answer nothing, silently): what a stream is started with."""
    out = validate_messages(messages)
    if out and out[-1]["role"] == "user" and not _has_question(out[-1]):
        raise ValueError(f"messages[{len(out) - 1}]: the question is empty (nothing but "
                         "spaces); ask something")
    return out


def _has_question(message: Message) -> bool:
    """A user message asks something: it has text other than spaces, or names user data
    sources (``type: "data"`` parts, searched on their own)."""
    content = message.get("content")
    if isinstance(content, list) and any(isinstance(p, dict) and p.get("type") == "data"
                                         for p in content):
        return True
    return bool(message_text(message).strip())
