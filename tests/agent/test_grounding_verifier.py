"""The optional grounding verifier (``grounding.verifier`` in agent.yml): a model settles
the sentences the offline check could not, through the scripted OpenAI-compatible server;
a missing fact stays flagged, and a failing or slow verifier leaves the offline verdict."""

from __future__ import annotations

from typing import Any

import pytest

from agent_search.types import ResultItem

from ..support.agents import StaticHandler, run

pytestmark = pytest.mark.anyio

PACKAGE = {"name": "t", "search": {"web": True}}
PAGE = ResultItem(type="web", title="Cape light", url="https://cape.example/light",
                  score=0.9, content="The lighthouse on the cape was rebuilt in 1911 after "
                                     "a storm destroyed the old tower.")
ANSWER = ("Workers put up a new beacon on the headland once a gale had wrecked its "
          "predecessor #ref:{ref0}. The lighthouse was rebuilt in 1957 #ref:{ref0}.")


def config(server: Any, verifier_model: str, **grounding: Any) -> dict[str, Any]:
    return {"connectors": {"local": {"base_url": server.base_url, "model": "echo"},
                           "judge": {"base_url": server.base_url, "model": verifier_model,
                                     "idle_timeout": 30}},
            "default_connector": "local",
            "grounding": {"verifier": "judge", **grounding}}


def grounding_of(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    (event,) = [e for e in events if e["event"] == "grounding"]
    return list(event["grounding"])


def verifier_calls(server: Any) -> list[dict[str, Any]]:
    return [r for r in server.requests if str(r.get("model", "")).startswith(("verify",
                                                                             "stall",
                                                                             "error500"))]


async def test_the_verifier_settles_a_paraphrase_and_leaves_a_missing_number_flagged(
        make_assistant, llm_server) -> None:
    a = make_assistant(PACKAGE, agent_yml=config(llm_server, "verify"),
                       handlers=[StaticHandler("web", [PAGE])])
    paraphrase, number = grounding_of(await run(a, ANSWER))
    assert paraphrase["status"] == "supported" and "verifier (judge)" in paraphrase["reason"]
    assert number["status"] == "unsupported" and "1957" in number["reason"]
    (call,) = verifier_calls(llm_server)  # only the sentence it could settle
    prompt = call["messages"][-1]["content"]
    assert "headland" in prompt and "<passage" in prompt and "1911" in prompt


async def test_a_contradiction_found_by_the_verifier_stays_flagged_with_its_word(
        make_assistant, llm_server) -> None:
    a = make_assistant(PACKAGE, agent_yml=config(llm_server, "verify-no"),
                       handlers=[StaticHandler("web", [PAGE])])
    paraphrase, _ = grounding_of(await run(a, ANSWER))
    assert paraphrase["status"] == "unsupported" and "verifier (judge)" in paraphrase["reason"]


@pytest.mark.parametrize("model", ["error500", "stall"])
async def test_a_failing_or_slow_verifier_leaves_the_offline_verdict(
        make_assistant, llm_server, model: str) -> None:
    a = make_assistant(PACKAGE, agent_yml=config(llm_server, model, timeout=1),
                       handlers=[StaticHandler("web", [PAGE])])
    events = await run(a, ANSWER)
    paraphrase, number = grounding_of(events)
    assert paraphrase["status"] == number["status"] == "unsupported"
    assert "verifier" not in paraphrase["reason"]
    record = await a.record(events[0]["request_id"])
    assert any("grounding verifier judge" in w for w in record.warnings)


async def test_no_verifier_by_default(make_assistant, llm_server) -> None:
    yml = config(llm_server, "verify")
    del yml["grounding"]
    a = make_assistant(PACKAGE, agent_yml=yml, handlers=[StaticHandler("web", [PAGE])])
    paraphrase, _ = grounding_of(await run(a, ANSWER))
    assert paraphrase["status"] == "unsupported" and not verifier_calls(llm_server)


def test_a_verifier_naming_no_connector_is_a_config_error(make_assistant, llm_server) -> None:
    from agent_search.errors import ConfigError

    yml = config(llm_server, "verify")
    yml["grounding"]["verifier"] = "jugde"
    with pytest.raises(ConfigError, match=r"grounding\.verifier"):
        make_assistant(PACKAGE, agent_yml=yml)
