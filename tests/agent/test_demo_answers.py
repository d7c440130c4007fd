"""The demo assistant's shop questions, answered offline as ``make demo`` answers them
(issue 31 item 2): the count is stated and cited, and the grounding marks none of the
responder's own quotes of records unsupported. The knowledge base is left out here (its
embedding model would cost a minute); web search has no key, so it is a notice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_search.agent import Assistant, Options

ROOT = Path(__file__).resolve().parents[2]


pytestmark = pytest.mark.asyncio_only  # the db driver is asyncio's


async def _ask(question: str) -> list[dict[str, Any]]:
    assistant = Assistant.load(ROOT / "assistants" / "demo", config_dir=ROOT / "config",
                               overrides={"kb": {"enabled": False}})
    events: list[dict[str, Any]] = []
    try:
        async for event in assistant.stream([question], Options(connector="offline")):
            events.append(event.to_dict())
    finally:
        await assistant.aclose()
    return events


@pytest.mark.anyio
async def test_the_demo_shop_questions_offline(home: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_search.db.sample import create_sample_database_async

    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    await create_sample_database_async(home / "agent.db")
    for question, expected in (("How many orders are there?", "matching records in orders"),
                               ("Which products under $50 are in stock?", "price: ")):
        events = await _ask(question)
        text = "".join(e["text"] for e in events if e["event"] == "text")
        assert expected in text and "#ref:1" in text, text
        if "How many" in question:
            # orders have permission columns: the count is of those the caller may see
            assert "matching records in orders are visible to you." in \
                text.split("\n- ")[0], text
        grounding = next(e for e in events if e["event"] == "grounding")["grounding"]
        assert not [g for g in grounding if g["status"] == "unsupported"], grounding
        assert [e["kind"] for e in events if e["event"] == "notice"] == ["web_search_off"]
        assert not [e for e in events if e["event"] == "search_complete" and e["error"]]
        assert events[-1]["event"] == "done" and events[-1]["error"] is None
