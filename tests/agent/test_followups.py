"""A conversation's last turn read in context by the stream every surface runs: text
searches get the previous topic only when the turn cannot stand alone, a handler that
reads follow-ups itself (the db's ``reads_history``) gets the earlier user turns, the
record says how the turn was read; with an LLM, a rewrite runs first and falls back to
the builtin reading when it strays from the conversation, fails or stalls."""

from __future__ import annotations

from typing import Any

import pytest

from agent_search.agent import Options
from agent_search.agent._followup import keeps_to
from agent_search.testing import StaticHandler

from ..support.agents import connector_yml, kb_items, run

pytestmark = pytest.mark.anyio

PACKAGE = {"name": "t", "search": {"kb": True, "db": True}, "kb": {"collections": ["docs"]}}
LLM_PACKAGE = {**PACKAGE, "connector": "local"}

THREAD = ["How do I stream a response body?", "And asynchronously?"]


class HistoryHandler(StaticHandler):
    """A db-like handler that reads follow-ups itself."""

    reads_history = True


def conversation(*turns: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for t in turns:
        out += [{"role": "user", "content": t}, {"role": "assistant", "content": "Noted."}]
    return out[:-1]


def handlers() -> tuple[StaticHandler, StaticHandler]:
    return StaticHandler("kb", kb_items(1)), HistoryHandler("db")


async def record_of(assistant: Any, events: list[dict[str, Any]]) -> Any:
    record = await assistant.record(events[-1]["request_id"])
    assert record is not None
    return record


async def test_an_ellipsis_carries_the_previous_topic(make_assistant) -> None:
    kb, db = handlers()
    a = make_assistant(PACKAGE, handlers=[kb, db])
    events = await run(a, conversation(*THREAD))
    assert kb.requests[-1].query == "How do I stream a response body? And asynchronously?"
    assert db.requests[-1].query == "And asynchronously?"
    assert db.requests[-1].options["history"] == ["How do I stream a response body?"]
    record = await record_of(a, events)
    assert record.follow_up["how"] == "with the previous question's topic"
    assert record.follow_up["earlier"] == ["How do I stream a response body?"]


async def test_a_question_that_stands_alone_is_searched_alone(make_assistant) -> None:
    kb, db = handlers()
    a = make_assistant(PACKAGE, handlers=[kb, db])
    events = await run(a, conversation("How do I add a request header?",
                                       "Invoices from Norway over 20 dollars?"))
    assert kb.requests[-1].query == "Invoices from Norway over 20 dollars?"
    assert (await record_of(a, events)).follow_up["how"] == "alone"


async def test_a_first_turn_sends_no_history(make_assistant) -> None:
    kb, db = handlers()
    a = make_assistant(PACKAGE, handlers=[kb, db])
    await run(a, "How do I stream a response body?")
    assert "history" not in db.requests[-1].options
    assert kb.requests[-1].query == "How do I stream a response body?"


async def test_a_good_rewrite_is_searched_by_every_type(make_assistant, llm_server) -> None:
    llm_server.replies["good"] = "How do I stream a response body asynchronously?"
    kb, db = handlers()
    a = make_assistant(LLM_PACKAGE, agent_yml=connector_yml(llm_server, "good"),
                       handlers=[kb, db])
    events = await run(a, conversation(*THREAD))
    assert kb.requests[-1].query == "How do I stream a response body asynchronously?"
    assert db.requests[-1].query == "How do I stream a response body asynchronously?"
    assert "history" not in db.requests[-1].options
    record = await record_of(a, events)
    assert record.follow_up["how"] == "rewritten by the language model"
    asked = llm_server.requests[0]["messages"]
    assert asked[0]["role"] == "system" and "And asynchronously?" in asked[-1]["content"]


async def test_a_rewrite_that_changes_the_topic_falls_back(make_assistant, llm_server) -> None:
    llm_server.replies["astray"] = "How do I configure a proxy for web searches?"
    kb, db = handlers()
    a = make_assistant(LLM_PACKAGE, agent_yml=connector_yml(llm_server, "astray"),
                       handlers=[kb, db])
    events = await run(a, conversation(*THREAD))
    assert kb.requests[-1].query == "How do I stream a response body? And asynchronously?"
    assert db.requests[-1].options["history"] == ["How do I stream a response body?"]
    record = await record_of(a, events)
    assert record.follow_up["how"] == "with the previous question's topic"
    assert any("brings words the conversation did not use: configure" in w
               for w in record.warnings)


async def test_a_rewrite_may_name_what_the_answer_said(make_assistant, llm_server) -> None:
    llm_server.replies["named"] = "How do I stream a response body with the async client?"
    kb, db = handlers()
    a = make_assistant(LLM_PACKAGE, agent_yml=connector_yml(llm_server, "named"),
                       handlers=[kb, db])
    messages = [{"role": "user", "content": THREAD[0]},
                {"role": "assistant", "content": "Call the streaming reader of a client."},
                {"role": "user", "content": THREAD[1]}]
    events = await run(a, messages)
    assert kb.requests[-1].query == "How do I stream a response body with the async client?"
    assert (await record_of(a, events)).follow_up["how"] == "rewritten by the language model"


def test_keeps_to_compares_stems() -> None:
    turns = ["Which albums did the band release?", "and their prices?"]
    assert keeps_to("What are the prices of the albums the band released?", turns) is None
    assert keeps_to("What are the opening hours of the museum?", turns) is not None
    assert keeps_to("Which albums did the band release?", turns) == (
        "drops every word of the last question")


@pytest.mark.parametrize(("model", "why"), [("error500", "failed"),
                                            ("stall", "gave no question within 0.5 s")])
async def test_a_failing_or_stalling_rewrite_falls_back_within_the_deadline(
        make_assistant, llm_server, model: str, why: str) -> None:
    kb, db = handlers()
    yml = {**connector_yml(llm_server, model, idle_timeout=1, timeout=2),
           "rewrite": {"timeout": 0.5}}
    a = make_assistant(LLM_PACKAGE, agent_yml=yml, handlers=[kb, db])
    events = await run(a, conversation(*THREAD))
    assert kb.requests[-1].query == "How do I stream a response body? And asynchronously?"
    record = await record_of(a, events)
    assert record.follow_up["how"] == "with the previous question's topic"
    assert any(f"follow-up rewrite {why}" in w for w in record.warnings)


async def test_no_rewrite_when_switched_off_or_offline(make_assistant, llm_server) -> None:
    llm_server.replies["good"] = "How do I stream a response body asynchronously?"
    kb, db = handlers()
    yml = {**connector_yml(llm_server, "good"), "rewrite": {"enabled": False}}
    a = make_assistant(LLM_PACKAGE, agent_yml=yml, handlers=[kb, db])
    await run(a, conversation(*THREAD))
    assert kb.requests[-1].query == "How do I stream a response body? And asynchronously?"
    assert len(llm_server.requests) == 1  # the answer only
    await run(a, conversation(*THREAD), Options(connector="offline"))
    assert len(llm_server.requests) == 1
