"""The OpenAI-compatible client against a real SSE server on 127.0.0.1, and citations
parsed from the streamed text."""

from __future__ import annotations

import json

import anyio
import pytest

from agent_search.agent import ConnectorSettings, OpenAIChatClient, Options
from agent_search.agent._citations import CitationTracker
from agent_search.agent.llm import LLMError

from ..support.agents import StaticHandler, connector_yml, kb_items, run, text_of, web_items

pytestmark = pytest.mark.anyio

PACKAGE = {"name": "t", "connector": "local", "prompts": "You are a careful assistant.",
           "search": {"web": True, "kb": True}, "kb": {"collections": ["docs"]}}


def handlers() -> list[StaticHandler]:
    return [StaticHandler("web", web_items(2)), StaticHandler("kb", kb_items(2))]


async def test_answer_streams_with_citations_and_references_message(
        make_assistant, llm_server) -> None:
    a = make_assistant(PACKAGE, agent_yml=connector_yml(llm_server, "cite"),
                       handlers=handlers())
    messages = [{"role": "system", "content": "Caller system."},
                {"role": "user", "content": "What do the docs say?"}]
    events = await run(a, messages)
    text = text_of(events)
    assert text.startswith("Here is the answer with a fact #ref:")
    assert "#ref:999" in text  # kept by default, reported as unknown
    citations = next(e for e in events if e["event"] == "citations")
    assert len(citations["used"]) == 2 and citations["unknown"] == ["999"]
    done = events[-1]
    assert done["error"] is None
    assert [r["citation_id"] for r in done["references"]] == citations["used"]
    # what the model received: prompts, caller system, ONE references message, user
    sent = llm_server.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "system", "system", "user"]
    assert sent[0]["content"] == "You are a careful assistant."
    assert sent[1]["content"] == "Caller system."
    assert "<<<REFERENCES" in sent[2]["content"] and "#ref:1" in sent[2]["content"]
    assert sum("<<<REFERENCES" in m["content"] for m in sent) == 1
    assert llm_server.requests[-1]["stream"] is True


async def test_unknown_markers_removed_when_switched_on(make_assistant, llm_server) -> None:
    a = make_assistant(PACKAGE, agent_yml=connector_yml(llm_server, "cite"),
                       search_yao={"citation": {"remove_unknown": True}}, handlers=handlers())
    events = await run(a, "What do the docs say?")
    text = text_of(events)
    assert "#ref:999" not in text and text.endswith("a made-up one.")
    citations = next(e for e in events if e["event"] == "citations")
    assert citations["unknown"] == ["999"] and len(citations["used"]) == 2


async def test_malformed_chunk_is_skipped_with_a_warning(make_assistant, llm_server) -> None:
    a = make_assistant(PACKAGE, agent_yml=connector_yml(llm_server, "malformed"),
                       handlers=handlers())
    events = await run(a, "question")
    assert text_of(events).endswith("a made-up one #ref:999.")
    assert events[-1]["error"] is None
    record = await a.record(events[0]["request_id"])
    assert any("malformed chunk" in w for w in record.warnings)


async def test_http_500_falls_back_to_offline_answer(make_assistant, llm_server) -> None:
    a = make_assistant(PACKAGE, agent_yml=connector_yml(llm_server, "error500"),
                       handlers=handlers())
    events = await run(a, "question about docs")
    assert "HTTP 500: the model is overloaded" in events[-1]["error"]
    text = text_of(events)
    assert "offline" in text and "the language model failed" in text and "#ref:" in text


async def test_stall_ends_with_an_error_not_a_hang(make_assistant, llm_server) -> None:
    a = make_assistant(PACKAGE, agent_yml=connector_yml(llm_server, "stall",
                                                        idle_timeout=0.5),
                       handlers=handlers())
    with anyio.fail_after(10):
        events = await run(a, "question")
    assert "stalled: no data for 0.5s" in events[-1]["error"]
    assert text_of(events) == "Thinking"  # what came before the stall is kept
    assert [e["event"] for e in events][-3:] == ["citations", "grounding", "done"]


async def test_missing_api_key_means_offline_with_reason(make_assistant, llm_server,
                                                         monkeypatch) -> None:
    monkeypatch.delenv("AGENT_TEST_KEY", raising=False)
    a = make_assistant(PACKAGE, agent_yml=connector_yml(llm_server, "cite",
                                                        api_key_env="AGENT_TEST_KEY"),
                       handlers=handlers())
    events = await run(a, "question")
    assert "needs AGENT_TEST_KEY, which is not set" in text_of(events)
    assert llm_server.requests == []
    monkeypatch.setenv("AGENT_TEST_KEY", "sk-test")
    events = await run(a, "question")
    assert text_of(events).startswith("Here is the answer")


async def test_options_connector_offline_forces_offline(make_assistant, llm_server) -> None:
    a = make_assistant(PACKAGE, agent_yml=connector_yml(llm_server, "cite"),
                       handlers=handlers())
    events = await run(a, "question", Options(connector="offline"))
    assert "offline" in text_of(events) and llm_server.requests == []


async def test_client_streams_tool_calls(llm_server) -> None:
    client = OpenAIChatClient("local", ConnectorSettings(base_url=llm_server.base_url,
                                                         model="tools"))
    events = [e async for e in client.stream_chat([{"role": "user", "content": "x"}],
                                                  tools=[{"type": "function",
                                                          "function": {"name": "search"}}])]
    calls = next(e for e in events if e.kind == "tool_calls").tool_calls
    assert calls[0].id == "call_1" and calls[0].name == "search"
    assert json.loads(calls[0].arguments) == {"type": "kb", "query": "hello"}
    assert llm_server.requests[-1]["tools"][0]["function"]["name"] == "search"
    await client.aclose()


async def test_client_connection_refused_is_one_line_error() -> None:
    client = OpenAIChatClient("local", ConnectorSettings(base_url="http://127.0.0.1:9/v1",
                                                         model="m"))
    with pytest.raises(LLMError, match="local: ConnectError"):
        async for _ in client.stream_chat([{"role": "user", "content": "x"}]):
            pass
    await client.aclose()


# -- citation markers in streamed text ----------------------------------------------------

TEXT = "A #ref:1 then #ref:12, then #ref:7 and #ref:3. End #ref"


@pytest.mark.parametrize("remove", [False, True])
def test_markers_split_at_every_position(remove: bool) -> None:
    expected_text = TEXT if not remove else "A #ref:1 then #ref:12, then and #ref:3. End #ref"
    for cut in range(1, len(TEXT)):
        for size in (1, 2, 5):
            t = CitationTracker({"1", "3", "12"}, remove_unknown=remove)
            pieces = [TEXT[:cut]] + [TEXT[i:i + size] for i in range(cut, len(TEXT), size)]
            out = "".join(t.feed(p) for p in pieces) + t.flush()
            assert out == expected_text, (cut, size)
            assert t.used == ["1", "12", "3"] and t.unknown == ["7"]


def test_bracket_format_and_holdback() -> None:
    t = CitationTracker({"1", "2"}, fmt="[{id}]")
    assert t.feed("see [") == "see "
    assert t.feed("2") == ""
    assert t.feed("] and [x]") == "[2] and [x]"
    assert t.used == ["2"] and t.unknown == ["x"]
    assert t.flush() == ""


async def test_model_calls_the_search_tool(make_assistant, llm_server) -> None:
    kb = StaticHandler("kb", kb_items(3))
    web = StaticHandler("web", web_items(2))
    a = make_assistant({"name": "t", "connector": "local", "tools": ["search"],
                        "search": {"web": True}},
                       agent_yml=connector_yml(llm_server, "tools"), handlers=[kb, web])
    events = await run(a, "question")
    # auto web search gave ids 1-2; the model's kb search got 3-5 (unique in the request)
    assert kb.requests[0].query == "hello" and kb.requests[0].source == "hook"
    assert text_of(events) == "From the tool: #ref:3 #ref:4"
    citations = next(e for e in events if e["event"] == "citations")
    assert citations == {**citations, "used": ["3", "4"], "unknown": []}
    assert [r["citation_id"] for r in events[-1]["references"]] == ["3", "4"]
    first, second = llm_server.requests
    assert first["tools"][0]["function"]["name"] == "search"
    assert second["messages"][-2]["tool_calls"][0]["id"] == "call_1"
    assert second["messages"][-1]["role"] == "tool"
    assert second["messages"][-1]["tool_call_id"] == "call_1"
    record = await a.record(events[0]["request_id"])
    assert record is not None
    # every search the stream ran (auto web, the model's kb), then the tool call itself
    assert [(s["type"], s.get("source"), s.get("count")) for s in record.searches] == [
        ("web", "auto", 2), ("kb", "hook", 3), ("tool", None, 3)]
    assert record.searches[2]["call"] == "search"
    assert [r["citation_id"] for r in record.references] == ["1", "2", "3", "4", "5"]


async def test_tool_calls_of_one_turn_run_concurrently_with_unique_ids(make_assistant,
                                                                       llm_server) -> None:
    kb = StaticHandler("kb", kb_items(2), delay=0.3)
    web = StaticHandler("web", web_items(2), delay=0.3)
    spans: dict[str, list[float]] = {}
    for h in (kb, web):
        original = h.search

        async def timed(ctx, request, _orig=original, _type=h.type):  # type: ignore[no-untyped-def]
            start = anyio.current_time()
            try:
                return await _orig(ctx, request)
            finally:
                spans[_type] = [start, anyio.current_time()]

        h.search = timed  # type: ignore[method-assign]
    a = make_assistant({"name": "t", "connector": "local", "tools": ["search"]},
                       agent_yml=connector_yml(llm_server, "tools2"), handlers=[kb, web])
    events = await run(a, "question")
    # both searches were in flight at once: each started before the other finished
    assert spans["kb"][0] < spans["web"][1] and spans["web"][0] < spans["kb"][1]
    second = llm_server.requests[-1]
    tool_msgs = [m for m in second["messages"] if m.get("role") == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["call_1", "call_2"]  # call order
    ids = [r["citation_id"] for r in events[-1]["references"]]
    assert len(ids) == len(set(ids)) == 2
    assert text_of(events).startswith("Both: #ref:")
