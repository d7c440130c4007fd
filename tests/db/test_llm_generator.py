"""The LLM path of ``uses.query`` end to end (issue 35, item 4): an OpenAI-compatible chat
server on 127.0.0.1 plays a scripted model; the generator is an assistant run by the
delegation machinery, exactly as ``uses.query: <assistant-id>`` runs it for a user (and
as ``bench/bench_spider.py --llm-url`` does); the database is the sample shop the tests
make. Covered: a correct DSL, an invalid one asked again with the validation error as
feedback, garbage (a clear error in the Result in strict mode, the builtin parser with a
warning otherwise) and an endpoint that stalls past the delegation timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_search.agent.assistant import Assistant
from agent_search.agent.delegation import Delegates
from agent_search.agent.settings import AgentSettings
from agent_search.config import SearchConfig
from agent_search.context import Context
from agent_search.db import DBHandler, create_handler
from agent_search.db.sample import _product_rows
from agent_search.query.dsl import DSLGenerator
from agent_search.types import Request, Result
from tests.support.llm_server import ChatServer, ThreadedChatServer, sse_chunk

pytestmark = pytest.mark.anyio

NAME = "dsl-writer"
STALL = object()
"""A scripted reply: say nothing until the client gives up."""
TIMEOUT = 3.0
"""The delegation timeout of these tests (seconds): the stall cases wait it out; the
answering ones must fit in it on a loaded CI machine (1 s timed out at load 10)."""
CHEAP = {"model": "products", "wheres": [{"field": "price", "op": "<", "value": 50}],
         "orders": [{"field": "price", "order": "asc"}]}
WANT_CHEAP = sorted((float(p["price"]), p["id"]) for p in _product_rows() if p["price"] < 50)
SCRIPT: dict[str, list[Any]] = {
    "cheap products": ["```json\n" + json.dumps(CHEAP) + "\n```"],
    "cheap products, second try": [
        json.dumps({"model": "products", "wheres": [{"field": "no_such_field", "op": "=",
                                                     "value": 1}]}),
        json.dumps({"dsl": CHEAP})],
    "prose": ["I would look at the products table, I think."],
    "always invalid": [json.dumps({"model": "no_such_model"})] * 5,
    "slow": [STALL],
}
"""Question → the model's replies to its first, second... request about it."""


class ScriptedModel(ChatServer):
    """Answers each chat request with the next scripted reply for the question in its
    task (streamed as OpenAI does); every request body is kept."""

    async def _respond(self, request_line: str, raw: bytes, writer: Any) -> None:
        body = json.loads(raw or b"{}")
        self.requests.append(body)
        task = json.loads(body["messages"][-1]["content"])
        asked = [r for r in self.requests
                 if json.loads(r["messages"][-1]["content"])["text"] == task["text"]]
        replies = SCRIPT[task["text"]]
        reply = replies[min(len(asked), len(replies)) - 1]
        if reply is STALL:
            await asyncio.sleep(30)
            return
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")
        for data in (sse_chunk(reply), sse_chunk(finish="stop"), b"data: [DONE]\n\n", b""):
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        await writer.drain()


@pytest.fixture
def model() -> Iterator[ThreadedChatServer]:
    server = ThreadedChatServer()
    server.server = ScriptedModel()
    server.start()
    yield server
    server.stop()


@contextlib.asynccontextmanager
async def llm_generator(root: Path, base_url: str) -> AsyncIterator[DSLGenerator]:
    """The ``uses.query`` generator a user configures: a connector in
    ``config/agent.yml`` and an assistant ``assistants/<NAME>`` using it."""
    config = root / "config"
    config.mkdir(parents=True)
    connector = {"base_url": base_url, "model": "scripted", "timeout": TIMEOUT,
                 "temperature": 0}
    (config / "agent.yml").write_text(json.dumps({
        "connectors": {"local": connector}, "delegation": {"timeout": TIMEOUT},
        "records": False}))
    (config / "search.yao").write_text(json.dumps({
        "home": str(root / "home"), "web": {"enabled": False}, "kb": {"enabled": False},
        "db": {"enabled": False}}))
    package = root / "assistants" / NAME
    package.mkdir(parents=True)
    (package / "package.yao").write_text(json.dumps({
        "name": "DSL writer", "connector": "local", "search": False,
        "prompts": [{"role": "system", "content": "Answer with one QueryDSL object."}]}))
    delegates = Delegates(
        AgentSettings.load(config), assistants_root=root / "assistants", config_dir=config,
        load_assistant=lambda path, cdir: Assistant.load(path, config_dir=cdir))
    try:
        generator = delegates.dsl_generator(NAME)
        assert generator is not None
        yield generator
    finally:
        await delegates.aclose()


@contextlib.asynccontextmanager
async def shop_with_llm(tmp_path: Path, shop_sqlite_master: Path, base_url: str, *,
                        strict: bool) -> AsyncIterator[DBHandler]:
    async with llm_generator(tmp_path / "llm", base_url) as generator:
        config = SearchConfig(home=tmp_path / "home",
                              db={"url": f"sqlite:///{shop_sqlite_master}",
                                  "match_by_meaning": False},
                              uses={"query": NAME}, query={"strict": strict})
        handler = create_handler(config, generators={NAME: generator})
        try:
            yield handler
        finally:
            await handler.aclose()


async def ask(handler: DBHandler, question: str) -> Result:
    return await handler.search(Context(config=handler.config),
                                Request(type="db", query=question, models=["products"],
                                        limit=50))


def _tasks(model: ThreadedChatServer) -> list[dict[str, Any]]:
    return [json.loads(r["messages"][-1]["content"]) for r in model.requests]


@pytest.mark.parametrize("question", ["cheap products", "cheap products, second try"])
async def test_the_models_dsl_is_validated_and_run(
        model: ThreadedChatServer, tmp_path: Path, shop_sqlite_master: Path,
        question: str) -> None:
    async with shop_with_llm(tmp_path, shop_sqlite_master, model.base_url,
                             strict=True) as handler:
        r = await ask(handler, question)
    assert r.error is None, r.error
    assert [(i.data["price"], i.record_id) for i in r.items if i.data] == WANT_CHEAP
    assert r.dsl is not None and r.dsl["generator"] == NAME and not r.dsl["fallback"]
    assert r.dsl["queries"][0]["wheres"] == CHEAP["wheres"]
    tasks = _tasks(model)
    # the task holds the question and the schemas, with known values of the shop
    assert all(t["task"] == "query" and t["text"] == question for t in tasks)
    products = next(s for s in tasks[0]["schemas"] if s["id"] == "products")
    assert {f["name"] for f in products["fields"]} >= {"price", "category", "name"}
    if question == "cheap products":
        assert len(tasks) == 1 and "feedback" not in tasks[0]
    else:  # the invalid first answer is asked about again, naming what was wrong
        assert len(tasks) == 2 and "no_such_field" in tasks[1]["feedback"]


@pytest.mark.parametrize(("question", "asked", "message"), [
    ("prose", 1, "no JSON"),
    ("always invalid", 3, "no valid DSL after 3 attempts: unknown model 'no_such_model'"),
    ("slow", 1, "timed out"),
])
async def test_a_failing_model_is_a_clear_error_in_strict_mode(
        model: ThreadedChatServer, tmp_path: Path, shop_sqlite_master: Path,
        question: str, asked: int, message: str) -> None:
    async with shop_with_llm(tmp_path, shop_sqlite_master, model.base_url,
                             strict=True) as handler:
        r = await ask(handler, question)
    assert r.error is not None and message in r.error, r.error
    assert NAME in r.error and "\n" not in r.error and "Traceback" not in r.error
    assert r.items == []
    assert len(model.requests) == asked  # retries only for an invalid DSL (db.retries 2)


@pytest.mark.parametrize("question", ["prose", "slow"])
async def test_without_strict_the_builtin_parser_answers_with_a_warning(
        model: ThreadedChatServer, tmp_path: Path, shop_sqlite_master: Path,
        question: str) -> None:
    async with shop_with_llm(tmp_path, shop_sqlite_master, model.base_url,
                             strict=False) as handler:
        r = await ask(handler, question)
    assert r.error is None, r.error
    assert r.dsl is not None and r.dsl["generator"] == "builtin"
    assert any(NAME in w and "used the builtin generator" in w for w in r.warnings), \
        r.warnings
