"""The optional answerability judge (``kb.judge_url`` / ``kb.judge_model``): an
OpenAI-compatible chat model says which top passages answer the question; off by
default, and a judge that fails, stalls or answers nonsense costs no answer
(``agent_search/kb/_judge.py``). Against the scripted server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_search import Request, Result, SearchConfig, Searcher
from agent_search.kb import create_handler, ingest_paths
from agent_search.kb._judge import parse

from ..support.llm_server import ThreadedChatServer

pytestmark = pytest.mark.anyio

NOTES = {
    "queues.md": "# Queues\n\nPush jobs on a list with LPUSH and pop them with BRPOP: a "
                 "worker blocks until a job arrives, so idle workers do not poll.",
    "expiry.md": "# Expiry\n\nEXPIRE sets a time to live on a key; the server deletes the "
                 "key when it is up, and TTL tells how many seconds are left.",
    "streams.md": "# Streams\n\nA consumer group shares a stream's entries among its "
                  "consumers, much like Kafka's consumer groups; XACK acknowledges one.",
}
QUESTION = "How do my workers wait for the next job without polling?"


@pytest.fixture(scope="module")
def llm() -> Iterator[ThreadedChatServer]:
    server = ThreadedChatServer().start()
    yield server
    server.stop()


@pytest.fixture
async def notes(config: SearchConfig, tmp_path: Path) -> SearchConfig:
    folder = tmp_path / "notes"
    folder.mkdir()
    for name, text in NOTES.items():
        (folder / name).write_text(text, encoding="utf-8")
    await ingest_paths(config, [folder], "kv")
    # a first search embeds the model's background: no 10 s limit on a busy machine
    return config.merged({"options": {"timeout": 300, "deadline": 300}})


async def _search(config: SearchConfig, floor: float | None = None) -> Result:
    searcher = Searcher(config, handlers=[create_handler(config)])
    try:
        return await searcher.search(Request(type="kb", query=QUESTION, limit=3,
                                             collections=["kv"], min_score=floor))
    finally:
        await searcher.aclose()


def _judged(config: SearchConfig, llm: ThreadedChatServer, model: str,
            **extra: object) -> SearchConfig:
    return config.merged({"kb": {"judge_url": llm.base_url, "judge_model": model,
                                 **extra}})


def _names(result: Result) -> list[str]:
    assert result.error is None
    return [Path(str(i.metadata["source"])).name for i in result.items]


async def test_off_by_default_no_call(notes: SearchConfig, llm: ThreadedChatServer) -> None:
    before = len(llm.requests)
    result = await _search(notes)
    assert _names(result)[:1] == ["queues.md"] and not result.warnings
    assert len(llm.requests) == before


async def test_a_passage_the_judge_rejects_is_not_an_answer(
        notes: SearchConfig, llm: ThreadedChatServer) -> None:
    llm.replies["judge-none"] = '{"answering": []}'
    before = len(llm.requests)
    assert await _search(_judged(notes, llm, "judge-none")) is not None
    result = await _search(_judged(notes, llm, "judge-none"))
    assert _names(result) == [] and not result.warnings  # under the floor: abstains
    # it read the question and the top passages, once per search
    sent = llm.requests[-1]["messages"][-1]["content"]
    task = json.loads(sent)
    assert task["question"] == QUESTION
    assert len(task["passages"]) == 3 and "BRPOP" in task["passages"][0]["text"]
    assert len(llm.requests) == before + 2


async def test_the_passage_the_judge_keeps_comes_first(
        notes: SearchConfig, llm: ThreadedChatServer) -> None:
    unjudged = _names(await _search(notes, floor=0.0))
    llm.replies["judge-second"] = 'Sure: {"answering": [2]}'
    result = await _search(_judged(notes, llm, "judge-second"), floor=0.0)
    assert _names(result)[0] == unjudged[1]
    assert [i.score for i in result.items][1:] == [0.0, 0.0]


@pytest.mark.parametrize(("model", "extra", "why"), [
    ("stall", {"judge_timeout": 0.5}, "no answer within 0.5 s"),
    ("error500", {}, "kb judge:"),
    ("bench", {}, "not the JSON asked for"),
])
async def test_a_judge_that_cannot_judge_costs_no_answer(
        notes: SearchConfig, llm: ThreadedChatServer, model: str, extra: dict[str, object],
        why: str) -> None:
    plain = await _search(notes)
    result = await _search(_judged(notes, llm, model, **extra))
    assert _names(result) == _names(plain)
    assert [i.score for i in result.items] == [i.score for i in plain.items]
    assert any(why in w and "unjudged" in w for w in result.warnings)


def test_the_reply_is_read_strictly() -> None:
    assert parse('{"answering": [1, 3]}', 3) == {1, 3}
    assert parse('ok {"answering": [4, 2]} done', 3) == {2}  # out of range: ignored
    assert parse('{"answering": []}', 3) == set()
    for bad in ("yes", '{"answering": "1"}', '{"answering": [true]}', "{not json}", ""):
        assert parse(bad, 3) is None


def test_bad_settings_are_named(config: SearchConfig) -> None:
    from agent_search.errors import ConfigError

    with pytest.raises(ConfigError, match="judge_timeout"):
        create_handler(config.merged({"kb": {"judge_timeout": 0}}))
