"""uses.keyword / uses.query / uses.rerank delegated to MCP tools (real server processes),
to assistants (on the local SSE LLM server) and to HTTP /rerank endpoints; fallbacks."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_search.agent.delegation import DelegationError, Use, parse_json_answer
from agent_search.errors import ConfigError

from ..support.agents import StaticHandler, connector_yml, run, text_of, web_items

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parents[1] / "support"
MCP = {"servers": {"tools": {"command": sys.executable,
                             "args": [str(HERE / "mcp_tools_server.py")], "timeout": 30}}}
WEB_ONLY = {"name": "t", "search": {"web": True}}


def yml(uses: dict, **extra) -> dict:
    return {"mcp": MCP, "uses": uses, **extra}


def same_score_items(n: int) -> list[dict]:
    return [{"title": f"page {i}", "url": f"https://e.example/{i}",
             "content": f"content number {i}", "score": 0.5} for i in range(n)]


async def record_of(a, events):
    return await a.record(events[0]["request_id"])


def test_use_parsing() -> None:
    assert Use.parse("builtin").kind == "builtin" and Use.parse(None).kind == "builtin"
    assert Use.parse("mcp:nlp.keywords") == Use("mcp", "nlp", "keywords")
    assert Use.parse("model:tei") == Use("model", "tei")
    assert Use.parse("workers.rerank") == Use("agent", "workers.rerank")
    assert parse_json_answer('Sure!\n```json\n{"a": [1]}\n```') == {"a": [1]}
    assert parse_json_answer("x [1, 2] y") == [1, 2]


# -- keyword -----------------------------------------------------------------------------

async def test_keyword_by_mcp_tool(make_assistant) -> None:
    web = StaticHandler("web", web_items(1), keyword_queries=True)
    a = make_assistant(WEB_ONLY, agent_yml=yml({"keyword": "mcp:tools.keywords"}),
                       handlers=[web])
    events = await run(a, "cheap hotels in Paris near the Louvre")
    assert web.requests[0].query == "Paris Louvre"
    assert (await record_of(a, events)).keywords == ["Paris", "Louvre"]


@pytest.mark.slow
async def test_keyword_tool_failure_and_timeout_fall_back(make_assistant) -> None:
    # keywords are extracted only for a handler that asks for them (the web handler does)
    web = StaticHandler("web", web_items(1), keyword_queries=True)
    a = make_assistant(WEB_ONLY, agent_yml=yml({"keyword": "mcp:tools.broken"}),
                       handlers=[web])
    events = await run(a, "cheap hotels in Paris")
    rec = await record_of(a, events)
    assert any(w.startswith("keyword mcp:tools.broken failed, used builtin") for w in rec.warnings)
    assert "hotels" in web.requests[0].query  # builtin keywords were used
    b = make_assistant(WEB_ONLY, assistant_id="t2",
                       agent_yml=yml({"keyword": "mcp:tools.slow"}, delegation={"timeout": 2}),
                       handlers=[StaticHandler("web", web_items(1), keyword_queries=True)])
    events = await run(b, "cheap hotels in Paris")
    rec = await record_of(b, events)
    assert any("timed out after 2s, used builtin" in w for w in rec.warnings), rec.warnings
    assert events[-1]["event"] == "done"


async def test_keyword_unknown_server_names_the_declared_ones(make_assistant) -> None:
    # refused when the assistant is loaded, not a fallback on every run
    with pytest.raises(ConfigError, match=r"agent\.yml: uses\.keyword: 'mcp:nope\.kw': no MCP "
                       r"server 'nope' .*\(declared: tools\) \(line \d+\)$"):
        make_assistant(WEB_ONLY, agent_yml=yml({"keyword": "mcp:nope.kw"}))


async def test_keyword_by_assistant(make_assistant, llm_server) -> None:
    agent_yml = {**connector_yml(llm_server, "delegate"), "uses": {"keyword": "worker"}}
    make_assistant({"name": "worker", "connector": "local"}, assistant_id="worker",
                   agent_yml=agent_yml)
    web = StaticHandler("web", web_items(1), keyword_queries=True)
    a = make_assistant(WEB_ONLY, agent_yml=agent_yml, handlers=[web])
    await run(a, "anything at all")
    assert web.requests[0].query == "delegated keywords"
    task = llm_server.requests[0]["messages"][-1]["content"]
    assert '"task": "keywords"' in task
    delegate = a.delegates._agents["worker"]
    closed: list[str] = []
    original = delegate.aclose

    async def aclose() -> None:
        closed.append(delegate.id)
        await original()

    delegate.aclose = aclose  # type: ignore[method-assign]
    await a.aclose()  # the delegate it loaded is closed with it
    assert closed == ["worker"] and a.delegates._agents == {}


# -- rerank ------------------------------------------------------------------------------

async def test_rerank_by_mcp_tool(make_assistant) -> None:
    a = make_assistant(WEB_ONLY, agent_yml=yml({"rerank": "mcp:tools.rerank"}),
                       handlers=[StaticHandler("web", same_score_items(3))])
    rec = await record_of(a, await run(a, "question"))
    assert [r["title"] for r in rec.references] == ["page 2", "page 1", "page 0"]
    assert not any("rerank" in w for w in rec.warnings)


async def test_rerank_by_assistant(make_assistant, llm_server) -> None:
    agent_yml = {**connector_yml(llm_server, "delegate"), "uses": {"rerank": "ranker"}}
    make_assistant({"name": "ranker", "connector": "local"}, assistant_id="ranker",
                   agent_yml=agent_yml)
    a = make_assistant({**WEB_ONLY, "connector": "offline"}, agent_yml=agent_yml,
                       handlers=[StaticHandler("web", same_score_items(3))])
    rec = await record_of(a, await run(a, "question"))
    assert [r["title"] for r in rec.references] == ["page 2", "page 1", "page 0"]


@pytest.mark.parametrize("protocol", ["cohere", "tei"])
async def test_rerank_by_model_endpoint(make_assistant, rerank_server, protocol) -> None:
    path = "/rerank" if protocol == "tei" else "/v1/rerank"
    items = [{"title": "unrelated", "url": "https://e.example/a", "content": "nothing here",
              "score": 0.9},
             {"title": "match", "url": "https://e.example/b",
              "content": "wireless headphones under budget", "score": 0.5}]
    agent_yml = {"uses": {"rerank": "model:ce"}, "rerankers": {
        "ce": {"url": rerank_server.url + path, "protocol": protocol, "model": "m1"}}}
    a = make_assistant(WEB_ONLY, agent_yml=agent_yml, handlers=[StaticHandler("web", items)])
    rec = await record_of(a, await run(a, "wireless headphones"))
    assert rec.references[0]["title"] == "match"
    body = rerank_server.requests[-1]["body"]
    if protocol == "tei":
        assert body["texts"][1].startswith("match")
    else:
        assert body["model"] == "m1" and body["documents"][0].startswith("unrelated")


@pytest.mark.parametrize(("path", "why"), [("/error", "HTTP 500"), ("/slow", "timed out")])
async def test_rerank_endpoint_failure_falls_back_keeping_items(
        make_assistant, rerank_server, path, why) -> None:
    agent_yml = {"uses": {"rerank": "model:ce"}, "delegation": {"timeout": 1},
                 "rerankers": {"ce": {"url": rerank_server.url + path, "timeout": 0.5}}}
    a = make_assistant(WEB_ONLY, agent_yml=agent_yml,
                       handlers=[StaticHandler("web", web_items(3))])
    events = await run(a, "question")
    rec = await record_of(a, events)
    assert len(rec.references) == 3  # nothing lost
    assert any(w.startswith("rerank model:ce failed, used builtin") and why in w
               for w in rec.warnings), rec.warnings
    assert events[-1]["error"] is None


# -- user data: mcp_resource ----------------------------------------------------------------

async def test_mcp_resource_data_source(make_assistant) -> None:
    a = make_assistant({"name": "t", "mcp_resources": [{"server": "tools", "uri": "docs://*"}]},
                       agent_yml=yml({}))
    messages = [{"role": "user", "content": [
        {"type": "text", "text": "What does the guide say?"},
        {"type": "data", "data": {"sources": [{"type": "mcp_resource", "name": "docs://guide",
                                              "server": "tools"}]}}]}]
    events = await run(a, messages)
    results = [e for e in events if e["event"] == "search_result"]
    assert results and results[0]["title"] == "docs://guide"
    assert "run make demo first" in text_of(events)
    rec = await record_of(a, events)
    assert rec.references[0]["source"] == "user"


# -- query (NL → QueryDSL) on the real db handler and the sample database ------------------

ASYNCIO_ONLY = pytest.mark.parametrize("anyio_backend", ["asyncio"])
"""The db handler's SQLAlchemy async engine runs on asyncio only."""


@ASYNCIO_ONLY
@pytest.mark.parametrize("use", ["mcp:tools.query", "dsl-worker"])
async def test_query_dsl_by_delegate_validated_with_retry(make_assistant, llm_server, home,
                                                          use) -> None:
    from agent_search.db import create_handler
    from agent_search.db.sample import create_sample_database_async, write_model_files

    await create_sample_database_async(home / "agent.db")
    agent_yml = {**yml({"query": use}), **connector_yml(llm_server, "delegate")}
    make_assistant({"name": "w", "connector": "local"}, assistant_id="dsl-worker",
                   agent_yml=agent_yml)
    # spawning the MCP server twice (first answer invalid) can take seconds on a busy box
    a = make_assistant({"name": "t", "search": {"db": True}}, agent_yml=agent_yml,
                       search_yao={"options": {"timeout": 60, "deadline": 90}})
    write_model_files(a.path / "models")
    db = create_handler(a.searcher.config, assistant_dir=a.path)
    a.searcher.registry.register(db)
    a.searcher.config.db.models = ["agents.test.product"]
    try:
        events = await run(a, "cheap products please bad_first")
    finally:
        await db.aclose()
    rec = await record_of(a, events)
    complete = next(e for e in events if e["event"] == "search_complete")
    assert complete["error"] is None and complete["count"] > 0, complete
    dsl_text = str(rec.dsl)
    assert "price" in dsl_text and "100" in dsl_text, rec.dsl
    assert all(r["model"] == "agents.test.product" for r in rec.references)
    assert rec.dsl["generator"] == use and rec.dsl["fallback"] is False
    if use == "dsl-worker":  # first answer invalid → asked again with the error
        tasks = [r["messages"][-1]["content"] for r in llm_server.requests]
        assert len(tasks) == 2 and '"feedback"' in tasks[1] and "no_such_field" in tasks[1]


@ASYNCIO_ONLY
async def test_query_delegate_failure_falls_back_to_builtin(make_assistant, home) -> None:
    from agent_search.db import create_handler
    from agent_search.db.sample import create_sample_database_async, write_model_files

    await create_sample_database_async(home / "agent.db")
    # a delegate that exists but cannot do the task (offline: its answer holds no JSON)
    make_assistant({"name": "w"}, assistant_id="broken-worker")
    a = make_assistant({"name": "t", "search": {"db": True}},
                       agent_yml={"uses": {"query": "broken-worker"}})
    write_model_files(a.path / "models")
    db = create_handler(a.searcher.config, assistant_dir=a.path)
    a.searcher.registry.register(db)
    a.searcher.config.db.models = ["agents.test.product"]
    try:
        events = await run(a, "products under $50")  # a price: "under 50" names no field
    finally:
        await db.aclose()
    rec = await record_of(a, events)
    complete = next(e for e in events if e["event"] == "search_complete")
    assert complete["error"] is None and complete["count"] > 0
    assert rec.dsl["generator"] == "builtin"
    assert any("broken-worker" in w and "builtin" in w for w in rec.warnings), rec.warnings


HOOK_RERANK = '''
async def create(ctx, messages, options):
    r = await ctx.search.web("wireless headphones", rerank={"type": "model", "top_k": 1})
    ctx.memory["r"] = r
    assert r.rerank_error is None, r.rerank_error
    assert [i.title for i in r.items] == ["match"], [i.title for i in r.items]
    return {"messages": [{"role": "system", "content": "done"}]}
'''


async def test_request_level_model_rerank_in_a_hook(make_assistant, rerank_server) -> None:
    items = [{"title": "unrelated", "url": "https://e.example/a", "content": "nothing",
              "score": 0.9},
             {"title": "match", "url": "https://e.example/b",
              "content": "wireless headphones", "score": 0.5}]
    agent_yml = {"rerankers": {"ce": {"url": rerank_server.url + "/rerank",
                                      "protocol": "tei"}}}
    a = make_assistant({"name": "t"}, hooks=HOOK_RERANK, agent_yml=agent_yml,
                       handlers=[StaticHandler("web", items)])
    events = await run(a, "q")
    assert events[-1]["error"] is None, events[-1]
    rec = await record_of(a, events)
    assert [r["title"] for r in rec.references] == ["match"]


@pytest.fixture
def mcp_http_url() -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, str(HERE / "mcp_tools_server.py"), "http",
                             str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("the MCP HTTP server did not start")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


async def test_keyword_by_mcp_tool_over_http(make_assistant, mcp_http_url) -> None:
    web = StaticHandler("web", web_items(1), keyword_queries=True)
    a = make_assistant(WEB_ONLY, agent_yml={"mcp": {"servers": {"remote": {"url": mcp_http_url}}},
                                            "uses": {"keyword": "mcp:remote.keywords"}},
                       handlers=[web])
    events = await run(a, "cheap hotels in Paris near the Louvre")
    assert web.requests[0].query == "Paris Louvre"
    assert (await record_of(a, events)).warnings == []


def test_an_answer_without_json_is_shown_far_enough_to_read_its_cause() -> None:
    cause = ("the model endpoint said: 429 Too Many Requests: rate limit of 10 requests per "
             "minute reached for organisation org-123; retry after 17 seconds")
    with pytest.raises(DelegationError) as caught:
        parse_json_answer("offline: " + cause)
    assert cause in str(caught.value)
    with pytest.raises(DelegationError) as caught:
        parse_json_answer("x" * 10_000)
    assert len(str(caught.value)) < 400
    assert "(+9700 more characters)" in str(caught.value)
