"""The stream's grounding: a ``grounding`` event after ``citations``, the same list on
``done`` (whose references gain the citations the grounding added), in the search record,
and in the ``next`` hook's payload."""

from __future__ import annotations

import pytest

from ..support.agents import connector_yml, kinds, run, text_of
from ..support.handlers import StaticHandler

pytestmark = pytest.mark.anyio

PACKAGE = {"name": "t", "connector": "local", "search": {"kb": True},
           "kb": {"collections": ["docs"]}}
ITEMS = [
    {"title": "Aspirin trial", "collection": "docs", "score": 0.9, "document_id": "a",
     "content": "In 2019 a trial of 1,200 patients found that aspirin reduced the risk "
                "of stroke by 30%."},
    {"title": "Diet study", "collection": "docs", "score": 0.5, "document_id": "b",
     "content": "A Mediterranean diet lowered blood pressure in older adults."},
]
ANSWER = ("Aspirin reduced the risk of stroke by 30% #ref:{ref0}. "
          "Aspirin reduced the risk of stroke by 50% #ref:{ref0}. "
          "A Mediterranean diet lowered blood pressure in older adults.")
HOOK = '''
async def next(ctx, payload):
    bad = [g for g in payload["grounding"] if g["status"] == "unsupported"]
    if bad:
        return {"text": " Caveat: I could not check every sentence against the references."}
    return None
'''


def ids_by_title(events: list[dict]) -> dict[str, str]:
    return {e["title"]: e["citation_id"] for e in events if e["event"] == "search_result"}


async def test_each_sentence_is_grounded_and_added_citations_join_the_references(
        make_assistant, llm_server) -> None:
    a = make_assistant(PACKAGE, agent_yml=connector_yml(llm_server, "echo"),
                       handlers=[StaticHandler("kb", ITEMS)])
    events = await run(a, ANSWER)
    assert kinds(events)[-3:] == ["citations", "grounding", "done"]
    ids = ids_by_title(events)
    aspirin, diet = ids["Aspirin trial"], ids["Diet study"]
    text = text_of(events)
    grounding = events[-2]["grounding"]
    assert [g["status"] for g in grounding] == ["supported", "unsupported", "supported"]
    assert [text[g["start"]:g["end"]] for g in grounding] == [g["text"] for g in grounding]
    assert grounding[0]["cited"] == grounding[0]["support"] == [aspirin]
    assert "50%" in grounding[1]["reason"]
    assert grounding[2]["cited"] == [] and grounding[2]["support"] == [diet]
    done = events[-1]
    assert done["grounding"] == grounding
    assert events[-3]["used"] == [aspirin]  # what the model cited
    assert [r["citation_id"] for r in done["references"]] == [aspirin, diet]
    record = await a.record(done["request_id"])
    assert record is not None and record.grounding == grounding
    assert "grounding" in record.durations_ms


async def test_a_next_hook_sees_the_grounding_and_its_caveat_is_grounded_too(
        make_assistant, llm_server) -> None:
    a = make_assistant(PACKAGE, agent_yml=connector_yml(llm_server, "echo"), hooks=HOOK,
                       handlers=[StaticHandler("kb", ITEMS)])
    events = await run(a, ANSWER)
    text = text_of(events)
    assert text.endswith("Caveat: I could not check every sentence against the references.")
    grounding = events[-1]["grounding"]
    assert len(grounding) == 4 and grounding[-1]["status"] == "no_claim"
    assert text[grounding[-1]["start"]:grounding[-1]["end"]] == grounding[-1]["text"]


async def test_a_stream_that_ends_early_still_sends_an_empty_grounding(make_assistant) -> None:
    hooks = "async def create(ctx, messages, options):\n    raise ValueError('no')\n"
    a = make_assistant({"name": "t"}, hooks=hooks)
    events = await run(a, "q")
    assert kinds(events) == ["citations", "grounding", "done"]
    assert events[1]["grounding"] == [] and events[-1]["grounding"] == []
