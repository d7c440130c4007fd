"""Helpers for tests that run assistants: items, running a stream, reading its events."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from agent_search import ResultItem
from agent_search.agent import Assistant, Options
from agent_search.events import Event
from agent_search.testing import StaticHandler, items

from .llm_server import ThreadedChatServer

__all__ = ["AssistantFactory", "StaticHandler", "collect", "connector_yml", "db_items",
           "kb_items", "kinds", "run", "text_of", "web_items"]

AssistantFactory = Callable[..., Assistant]
"""The ``make_assistant`` fixture of tests/agent: writes an assistant folder, loads it."""


def web_items(n: int, prefix: str = "w", score: float = 0.9) -> list[ResultItem]:
    """``n`` web items (``agent_search.testing.items``) whose content answers "question i"."""
    found = items(n, prefix=f"https://{prefix}.example/", score=score, step=0.01,
                  title=f"{prefix} page")
    for i, item in enumerate(found):
        item.content = f"{prefix} content {i}. The answer to question {i} is {i * 7}."
    return found


def kb_items(n: int, collection: str = "docs", score: float = 0.8) -> list[dict[str, Any]]:
    return [{"title": f"doc {i}", "content": f"Knowledge chunk {i} about search modules.",
             "document_id": f"d{i}", "collection": collection, "score": score - i * 0.01}
            for i in range(n)]


def db_items(n: int, model: str = "product", score: float = 0.7) -> list[dict[str, Any]]:
    return [{"title": f"{model} {i}", "content": f"{model} {i} costs {10 * i}",
             "model": model, "record_id": i, "data": {"id": i, "price": 10 * i},
             "score": score} for i in range(n)]


async def collect(stream: AsyncIterator[Event]) -> list[dict[str, Any]]:
    return [e.to_dict() async for e in stream]


async def run(assistant: Assistant, question: str | list[dict[str, Any]],
              options: Options | None = None) -> list[dict[str, Any]]:
    messages = [{"role": "user", "content": question}] if isinstance(question, str) else question
    return await collect(assistant.stream(messages, options or Options()))


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [e["event"] for e in events]


def text_of(events: list[dict[str, Any]]) -> str:
    return "".join(e["text"] for e in events if e["event"] == "text")


def connector_yml(server: ThreadedChatServer, model: str, **extra: Any) -> dict[str, Any]:
    return {"connectors": {"local": {"base_url": server.base_url, "model": model, **extra}}}
