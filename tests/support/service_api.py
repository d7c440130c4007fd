"""The running service of tests/server (``Running``, the value of its ``running``
fixture) and how tests talk to it: the official openai client, the native stream's
frames, a question as chat messages."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import openai

from agent_search.server import Service

from .http_service import KEYS, WatchedHandler
from .llm_server import ThreadedChatServer

__all__ = ["Running", "ask", "client", "parse_sse"]


@dataclass
class Running:
    url: str
    service: Service
    handler: WatchedHandler
    llm: ThreadedChatServer

    def headers(self, who: str = "alice") -> dict[str, str]:
        return {"Authorization": f"Bearer {KEYS[who]}"}


def client(running: Running, who: str = "alice") -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{running.url}/v1", api_key=KEYS[who], max_retries=0)


def parse_sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    """(event name, data) of each frame of a native stream."""
    frames = []
    for block in text.strip().split("\n\n"):
        name, data = "", ""
        for line in block.splitlines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data += line[6:]
        frames.append((name, json.loads(data)))
    return frames


def ask(content: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": content}]
