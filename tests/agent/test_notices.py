"""Web search without its API key is not a failure of each question (issue 31 item 2):
auto search leaves it out and the stream says so with a ``notice`` event; the CLI prints
that notice once per process."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from agent_search.agent import Options
from agent_search.loader import load_config
from agent_search.web import WebHandler

from ..support.agents import AssistantFactory

KEY_ENV = "AGENT_SEARCH_TEST_WEB_KEY"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _events(make_assistant: AssistantFactory, **web: Any) -> list[dict[str, Any]]:
    search_yao = {"web": {"provider": "tavily", "api_key_env": KEY_ENV, **web}}
    assistant = make_assistant({"name": "t", "search": {"web": True}}, search_yao=search_yao)
    assistant.searcher.registry.register(WebHandler(assistant.searcher.config))
    out: list[dict[str, Any]] = []
    try:
        async for event in assistant.stream(["What is new in Lagos?"],
                                            Options(connector="offline")):
            out.append(event.to_dict())
    finally:
        await assistant.aclose()
    return out


@pytest.mark.anyio
async def test_web_without_its_key_is_a_notice_not_a_failed_search(
        make_assistant: AssistantFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    events = await _events(make_assistant)
    notices = [e for e in events if e["event"] == "notice"]
    assert [n["kind"] for n in notices] == ["web_search_off"]
    assert KEY_ENV in notices[0]["text"] and "turn it on" in notices[0]["text"]
    assert not [e for e in events if e["event"].startswith("search_")]  # no failed search
    text = "".join(e["text"] for e in events if e["event"] == "text")
    assert "failed" not in text
    assert events[-1]["event"] == "done" and events[-1]["error"] is None


@pytest.mark.anyio
async def test_web_with_its_key_is_searched(make_assistant: AssistantFactory,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """With the key set the web search runs (here against a closed local port, so it
    fails: a real failure is still reported as one)."""
    monkeypatch.setenv(KEY_ENV, "k")
    events = await _events(make_assistant, base_url=f"http://127.0.0.1:{_closed_port()}",
                           retry={"attempts": 1})
    assert not [e for e in events if e["event"] == "notice"]
    complete = [e for e in events if e["event"] == "search_complete"]
    assert [c["type"] for c in complete] == ["web"] and complete[0]["error"]


def test_the_notice_is_only_about_the_builtin_web_handler(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    from agent_search.agent._notices import usable_types
    from agent_search.registry import Registry

    monkeypatch.delenv(KEY_ENV, raising=False)
    config = load_config().merged({"web": {"provider": "tavily", "api_key_env": KEY_ENV}})
    registry = Registry()
    assert usable_types(["web", "kb"], registry, config) == (["web", "kb"], [])
    registry.register(WebHandler(config))
    types, notices = usable_types(["web", "kb"], registry, config)
    assert types == ["kb"] and notices[0][0] == "web_search_off"
