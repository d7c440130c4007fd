"""A model's answer nested without bound is no answer, not a crash of the caller.

The decoder gives up on deep nesting with ``RecursionError``, which is not a
``ValueError``: the delegations' parser let it escape (a delegate assistant or MCP tool
answering ``[[[[...`` broke the search that asked), and the research planner's
``json.loads`` did the same for an LLM plan ``{[[[[...}``."""

from __future__ import annotations

import pytest

from agent_search.agent.delegation import DelegationError, parse_json_answer

pytestmark = pytest.mark.anyio


def test_a_delegate_answer_nested_without_bound_is_a_delegation_error() -> None:
    with pytest.raises(DelegationError, match="no JSON"):
        parse_json_answer("[" * 100_000)


async def test_an_llm_plan_nested_without_bound_falls_back_to_the_builtin_plan() -> None:
    from agent_search import SearchConfig, Searcher
    from agent_search.testing import StaticHandler
    from tests.support.llm_server import ThreadedChatServer

    server = ThreadedChatServer().start()
    try:
        server.replies["deep"] = "{" + "[" * 100_000 + "}"
        config = SearchConfig().merged({"research": {
            "planner": "llm", "llm_url": server.base_url, "llm_model": "deep"}})
        searcher = Searcher(config, handlers=[StaticHandler("kb", [])])
        report = await searcher.research("When does the ferry leave and when does the "
                                         "museum open?", types=["kb"], limit=1)
    finally:
        server.stop()
    assert report.planner.startswith("builtin (llm: its answer held no JSON object")
    assert len(report.parts) == 2
