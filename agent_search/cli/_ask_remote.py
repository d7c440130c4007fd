"""``agent-search ask QUESTION --server URL`` — the question asked of a running
``agent-search serve`` (``POST /v1/assistants/{id}/stream``), shown as a local ``ask``
shows it.

While the service runs it holds the data home's knowledge base, so a local ``ask``
cannot read it ("open in another process"); sent to the service, the question is
answered by the process that holds it, with the API key's identity (``--api-key-env``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx

TIMEOUT = httpx.Timeout(600.0, connect=10.0)


class RemoteAskError(Exception):
    """The server could not be reached or refused the question (its message)."""


class RemoteEvent:
    """An output event read from the stream: its fields as attributes (None when
    absent), so the local display shows it as it shows the stream's own events."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.__dict__.update(data)

    def __getattr__(self, name: str) -> Any:
        return None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def events(server: str, assistant: str, question: str, api_key_env: str,
           search: bool | None) -> Iterator[RemoteEvent]:
    """The events of the answer, as the server streams them."""
    key = os.environ.get(api_key_env)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    body: dict[str, Any] = {"messages": [{"role": "user", "content": question}]}
    if search is not None:
        body["search"] = search
    url = f"{server.rstrip('/')}/v1/assistants/{quote(assistant, safe='')}/stream"
    try:
        with httpx.stream("POST", url, json=body, headers=headers, timeout=TIMEOUT) as r:
            if r.status_code != 200:
                r.read()
                raise RemoteAskError(f"{server}: HTTP {r.status_code}: {_message(r)}")
            yield from _frames(r.iter_lines())
    except httpx.HTTPError as exc:
        raise RemoteAskError(f"cannot reach {server}: {exc}") from exc


def _frames(lines: Iterator[str]) -> Iterator[RemoteEvent]:
    data: list[str] = []
    for line in lines:
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and data:
            try:
                parsed = json.loads("\n".join(data))
            except ValueError:
                parsed = None
            data = []
            if isinstance(parsed, dict) and isinstance(parsed.get("event"), str):
                yield RemoteEvent(parsed)


def _message(response: httpx.Response) -> str:
    try:
        return str(response.json()["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return response.text[:200] or response.reason_phrase
