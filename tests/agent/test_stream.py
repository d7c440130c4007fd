"""run_stream() / stream(): event order, auto search, offline answer, hooks, data parts, weights,
citation ids, failures, early stop, records."""

from __future__ import annotations

import asyncio
import contextlib
import gc

import anyio
import pytest

from agent_search.agent import Options

from ..support.agents import (
    StaticHandler,
    db_items,
    kb_items,
    kinds,
    run,
    text_of,
    web_items,
)

pytestmark = pytest.mark.anyio

SEARCH_ALL = {"name": "t", "search": {"web": True, "kb": True, "db": True},
              "kb": {"collections": ["docs"]}, "db": {"models": ["product"]}}


def refs_in(events: list[dict]) -> list[str]:
    return [e["citation_id"] for e in events if e["event"] == "search_result"]


async def test_auto_search_events_in_order_and_offline_answer(make_assistant) -> None:
    web, kb, db = StaticHandler("web", web_items(3)), StaticHandler("kb", kb_items(2)), \
        StaticHandler("db", db_items(2))
    a = make_assistant(SEARCH_ALL, handlers=[web, kb, db])
    events = await run(a, "What is the answer to question 1?")
    k = kinds(events)
    # search events first, then text, then citations, then done — last
    assert k.count("search_start") == 3 and k.count("search_complete") == 3
    assert k.count("search_result") == 7
    last_search = max(i for i, x in enumerate(k) if x.startswith("search_"))
    first_text = k.index("text")
    assert last_search < first_text
    assert k[-3:] == ["citations", "grounding", "done"]
    assert all(e["request_id"] == events[0]["request_id"] for e in events)
    text = text_of(events)
    assert "offline" in text
    assert "#ref:" in text
    citations = events[-3]
    assert citations["used"] and citations["unknown"] == []
    done = events[-1]
    assert done["error"] is None
    assert [r["citation_id"] for r in done["references"]] == citations["used"]
    # each source searched once, with the assistant's collections and models
    assert kb.requests[0].collections == ["docs"] and kb.requests[0].source == "auto"
    assert db.requests[0].models == ["product"]


async def test_search_ids_unique_across_sources(make_assistant) -> None:
    a = make_assistant(SEARCH_ALL, handlers=[StaticHandler("web", web_items(3)),
                                             StaticHandler("kb", kb_items(3)),
                                             StaticHandler("db", db_items(3))])
    ids = refs_in(await run(a, "anything at all here"))
    assert len(ids) == 9 and len(set(ids)) == 9


@pytest.mark.parametrize(
    ("package_search", "option", "expect_search"),
    [
        ({"web": True}, None, True),      # nil + config → on
        (None, None, False),              # nil + no config → off
        ({"web": True}, False, False),    # false → off whatever the config
        (None, True, True),               # true → on even without config
    ],
)
async def test_decision_table(make_assistant, package_search, option, expect_search) -> None:
    web = StaticHandler("web", web_items(2))
    package = {"name": "t"}
    if package_search is not None:
        package["search"] = package_search
    a = make_assistant(package, handlers=[web])
    events = await run(a, "tell me about the weather in Paris", Options(search=option))
    assert ("search_start" in kinds(events)) is expect_search
    assert len(web.requests) == (1 if expect_search else 0)
    assert kinds(events)[-1] == "done"


async def test_web_query_uses_keywords(make_assistant) -> None:
    web = StaticHandler("web", web_items(1), keyword_queries=True)
    a = make_assistant({"name": "t", "search": {"web": True}}, handlers=[web])
    await run(a, "What are the best wireless headphones under 100 dollars?")
    q = web.requests[0].query
    assert "headphones" in q and "what" not in q.lower().split()



async def test_keywords_go_to_the_handlers_that_want_them_whatever_their_type(
        make_assistant) -> None:
    """A handler's ``keyword_queries`` decides, not its type's name: a plug-in news
    search that wants keywords gets them (once, told so), a web stand-in that does not
    gets the message."""
    news = StaticHandler("news", web_items(1), keyword_queries=True)
    web = StaticHandler("web", web_items(1))
    a = make_assistant({"name": "t", "search": {"web": True, "types": {"news": True}}},
                       handlers=[news, web])
    question = "What are the best wireless headphones under 100 dollars?"
    await run(a, question)
    (asked,) = news.requests
    assert "headphones" in asked.query and "what" not in asked.query.lower().split()
    assert asked.options == {"keywords": False}
    assert [r.query for r in web.requests] == [question] and web.requests[0].options == {}

HOOK_SEARCH = '''
async def create(ctx, messages, options):
    r = await ctx.search.web(messages[-1]["content"], limit=2)
    ctx.memory["hook_result"] = r
    return {"messages": [{"role": "system", "content": "hook context"}]}
'''


async def test_hook_messages_skip_auto_search(make_assistant) -> None:
    web = StaticHandler("web", web_items(2))
    kb = StaticHandler("kb", kb_items(2))
    a = make_assistant({"name": "t", "search": {"kb": True}}, hooks=HOOK_SEARCH,
                       handlers=[web, kb])
    events = await run(a, "hooked question please")
    assert len(web.requests) == 1 and web.requests[0].source == "hook"
    assert web.requests[0].limit == 2
    assert kb.requests == []  # handled by the hook → no auto search
    record = await a.record(events[0]["request_id"])
    assert record is not None and record.decision == "handled by create hook"
    assert [r["source"] for r in record.references] == ["hook", "hook"]


HOOK_FORCE = '''
async def create(ctx, messages, options):
    await ctx.search.web(messages[-1]["content"], limit=3)
    return {"messages": [{"role": "system", "content": "hook context"}], "search": True}
'''


async def test_hook_search_true_forces_auto_and_ids_stay_unique(make_assistant) -> None:
    web = StaticHandler("web", web_items(3))
    kb = StaticHandler("kb", kb_items(3))
    a = make_assistant({"name": "t", "search": {"kb": True}}, hooks=HOOK_FORCE,
                       handlers=[web, kb])
    events = await run(a, "hooked question please")
    assert len(kb.requests) == 1 and kb.requests[0].source == "auto"
    ids = refs_in(events)
    assert ids == ["1", "2", "3", "4", "5", "6"]  # hook 1-3, auto 4-6: no collision
    record = await a.record(events[0]["request_id"])
    assert {r["source"] for r in record.references} == {"hook", "auto"}


HOOK_NO_SEARCH = '''
async def create(ctx, messages, options):
    return {"search": False}
'''


async def test_hook_search_false_disables_even_forced_config(make_assistant) -> None:
    kb = StaticHandler("kb", kb_items(2))
    a = make_assistant({"name": "t", "search": {"kb": True}}, hooks=HOOK_NO_SEARCH,
                       handlers=[kb])
    events = await run(a, "a question", Options(search=True))
    assert kb.requests == [] and "search_start" not in kinds(events)


HOOK_PARALLEL = '''
async def create(ctx, messages, options):
    q = messages[-1]["content"]
    web, kb = await ctx.search.parallel([{"type": "web", "query": q, "limit": 1},
                                         {"type": "kb", "query": q}])
    first = await ctx.search.any([{"type": "web", "query": q}, {"type": "kb", "query": q}])
    ctx.memory["seen"] = (web.source, kb.source, kb.items[0].collection, first.ok)
    return None

async def next(ctx, payload):
    assert ctx.memory["seen"] == ("hook", "hook", "docs", True), ctx.memory["seen"]
    return {"text": " [checked by next hook]"}
'''


async def test_hook_parallel_any_and_next_hook(make_assistant) -> None:
    a = make_assistant({"name": "t", "kb": {"collections": ["docs"]}}, hooks=HOOK_PARALLEL,
                       handlers=[StaticHandler("web", web_items(2)),
                                 StaticHandler("kb", kb_items(2))])
    events = await run(a, "a question about things")
    assert text_of(events).endswith("[checked by next hook]")
    assert events[-1]["error"] is None


def data_message(text: str, *sources: dict) -> list[dict]:
    return [{"role": "user", "content": [{"type": "text", "text": text},
                                         {"type": "data", "data": {"sources": list(sources)}}]}]


async def test_user_data_enough_results_skips_auto_search(make_assistant) -> None:
    db = StaticHandler("db", db_items(5))
    web = StaticHandler("web", web_items(3))
    a = make_assistant({"name": "t", "search": {"web": True}}, handlers=[db, web])
    events = await run(a, data_message("products under 100", {"type": "model",
                                                              "name": "product"}))
    assert db.requests[0].source == "user" and db.requests[0].models == ["product"]
    assert db.requests[0].query == "products under 100"
    assert web.requests == []  # 5 user results >= skip_threshold 5
    record = await a.record(events[0]["request_id"])
    assert "user data gave 5 results" in record.decision


async def test_skip_threshold_from_assistant_config(make_assistant) -> None:
    db = StaticHandler("db", db_items(5))
    web = StaticHandler("web", web_items(3))
    a = make_assistant({"name": "t", "search": {"web": True, "options": {"skip_threshold": 10}}},
                       handlers=[db, web])
    await run(a, data_message("products under 100", {"type": "model", "name": "product"}))
    assert len(web.requests) == 1  # 5 < 10: auto search still runs


async def test_user_weight_beats_auto_and_dedupe_keeps_user_copy(make_assistant) -> None:
    same = {"title": "shared", "content": "shared chunk", "document_id": "d0",
            "collection": "docs"}
    user_kb = StaticHandler("kb", [{**same, "score": 0.7}])
    auto_web = StaticHandler("web", [{"title": "web hit", "url": "https://x.example",
                                      "content": "web", "score": 0.9}])
    a = make_assistant({"name": "t", "search": {"web": True, "kb": True}},
                       handlers=[user_kb, auto_web])
    events = await run(a, data_message("what is shared", {"type": "kb_collection",
                                                          "name": "docs"}))
    record = await a.record(events[0]["request_id"])
    # kb was searched twice (user + auto) and returned the same chunk: one copy is kept,
    # the user's; user 0.7×1.0 = 0.7 ranks above auto web 0.9×0.6 = 0.54
    assert [r["source"] for r in record.references] == ["user", "auto"]
    assert record.references[0]["score"] == pytest.approx(0.7)
    assert record.references[1]["score"] == pytest.approx(0.54)


async def test_weights_from_search_yao(make_assistant) -> None:
    a = make_assistant({"name": "t", "search": {"web": True}},
                       search_yao={"weights": {"auto": 0.5}},
                       handlers=[StaticHandler("web", web_items(1, score=0.8))])
    events = await run(a, "some question here")
    record = await a.record(events[0]["request_id"])
    assert record.references[0]["score"] == pytest.approx(0.4)


async def test_unsupported_data_source_is_a_warning(make_assistant) -> None:
    a = make_assistant({"name": "t"}, handlers=[])
    events = await run(a, data_message("q text", {"type": "table", "name": "t1"}))
    record = await a.record(events[0]["request_id"])
    assert any("'table' is not supported" in w for w in record.warnings)
    assert events[-1]["event"] == "done"


async def test_failing_source_does_not_break_the_stream(make_assistant) -> None:
    a = make_assistant(SEARCH_ALL, handlers=[StaticHandler("web", error="provider down"),
                                             StaticHandler("kb", kb_items(2)),
                                             StaticHandler("db", delay=5)],
                       search_yao={"options": {"timeout": 0.2}})
    events = await run(a, "a question that fails partly")
    completes = {e["type"]: e for e in events if e["event"] == "search_complete"}
    assert "provider down" in completes["web"]["error"]
    assert "timed out" in completes["db"]["error"]
    assert completes["kb"]["error"] is None and completes["kb"]["count"] == 2
    assert events[-1]["event"] == "done" and events[-1]["error"] is None
    assert "#ref:" in text_of(events)
    record = await a.record(events[0]["request_id"])
    assert any("provider down" in e for e in record.errors)


async def test_every_source_failing_still_answers(make_assistant) -> None:
    a = make_assistant({"name": "t", "search": {"web": True}},
                       handlers=[StaticHandler("web", error="no key")])
    events = await run(a, "a question")
    assert "found no relevant reference" in text_of(events)
    assert events[-1]["event"] == "done"


def running_tasks(backend: str) -> int:
    """How many tasks the event loop has (asyncio) or the trio run has, all nested."""
    if backend == "asyncio":
        return len(asyncio.all_tasks())
    import trio

    def count(task: trio.lowlevel.Task) -> int:
        return 1 + sum(count(t) for n in task.child_nurseries for t in n.child_tasks)

    return count(trio.lowlevel.current_root_task())


async def test_leaving_the_block_cancels_searches_and_leaks_no_task(
        make_assistant, anyio_backend) -> None:
    slow = StaticHandler("web", web_items(1), delay=30)
    a = make_assistant({"name": "t", "search": {"web": True}}, handlers=[slow])
    before = running_tasks(anyio_backend)
    with anyio.fail_after(5):
        async with a.run_stream([{"role": "user", "content": "q"}]) as events:
            async for event in events:
                if event.event == "search_start":
                    break
            assert running_tasks(anyio_backend) > before  # the pipeline runs in the block
    # structured: once the block is left the work is cancelled, nothing to wait for
    assert slow.cancelled == 1 and slow.finished == 0
    assert running_tasks(anyio_backend) == before


async def test_consumer_stopping_early_cancels_searches_and_leaks_no_task(
        make_assistant, anyio_backend) -> None:
    slow = StaticHandler("web", web_items(1), delay=30)
    a = make_assistant({"name": "t", "search": {"web": True}}, handlers=[slow])
    before = running_tasks(anyio_backend)
    with anyio.fail_after(5):
        async with contextlib.aclosing(a.stream([{"role": "user", "content": "q"}])) as s:
            async for event in s:
                if event.event == "search_start":
                    break
    assert slow.cancelled == 1 and slow.finished == 0
    gc.collect()
    assert running_tasks(anyio_backend) == before


async def test_cancelling_the_caller_cancels_the_work(make_assistant) -> None:
    slow = StaticHandler("web", web_items(1), delay=30)
    a = make_assistant({"name": "t", "search": {"web": True}}, handlers=[slow])
    seen: list[str] = []
    with anyio.move_on_after(0.3) as scope:
        async with a.run_stream([{"role": "user", "content": "q"}]) as events:
            async for event in events:
                seen.append(event.event)
    assert scope.cancelled_caught and seen == ["search_start"]
    assert slow.cancelled == 1 and slow.finished == 0


async def test_an_error_in_the_block_propagates_as_raised_and_stops_the_work(
        make_assistant) -> None:
    slow = StaticHandler("web", web_items(1), delay=30)
    a = make_assistant({"name": "t", "search": {"web": True}}, handlers=[slow])
    with pytest.raises(KeyError, match="mine"):  # not wrapped in an exception group
        async with a.run_stream([{"role": "user", "content": "q"}]) as events:
            async for event in events:
                if event.event == "search_start":
                    raise KeyError("mine")
    assert slow.cancelled == 1 and slow.finished == 0


async def test_run_stream_and_stream_give_the_same_events(make_assistant) -> None:
    a = make_assistant({"name": "t", "search": {"web": True}},
                       handlers=[StaticHandler("web", web_items(2))])
    async with a.run_stream(["What is the answer to question 1?"]) as events:
        structured = [e.to_dict() async for e in events]
    wrapped = await run(a, "What is the answer to question 1?")

    def shape(evs: list[dict]) -> list[tuple]:
        return [(e["event"], e.get("text"), e.get("citation_id")) for e in evs]

    assert shape(structured) == shape(wrapped)
    assert structured[-1]["event"] == "done" and structured[-1]["error"] is None


async def test_create_hook_error_names_line(make_assistant) -> None:
    hooks = "async def create(ctx, messages, options):\n    x = 1\n    raise ValueError('boom')\n"
    a = make_assistant({"name": "t"}, hooks=hooks)
    events = await run(a, "q")
    assert kinds(events) == ["citations", "grounding", "done"]
    assert "create hook failed (hooks.py line 3): ValueError: boom" in events[-1]["error"]


async def test_create_hook_bad_return_is_an_error(make_assistant) -> None:
    hooks = "async def create(ctx, messages, options):\n    return {'mesages': []}\n"
    a = make_assistant({"name": "t"}, hooks=hooks)
    events = await run(a, "q")
    assert "unknown keys: mesages" in events[-1]["error"]


async def test_record_stored_by_request_id(make_assistant) -> None:
    a = make_assistant({"name": "t", "search": {"web": True}},
                       handlers=[StaticHandler("web", web_items(2),
                                                keyword_queries=True)])
    events = await run(a, "Which wireless headphones are best?", Options(request_id="req-42"))
    assert events[0]["request_id"] == "req-42"
    record = await a.record("req-42")
    assert record is not None
    assert record.query == "Which wireless headphones are best?"
    assert any("headphones" in k for k in record.keywords)
    assert len(record.references) == 2 and record.searches[0]["type"] == "web"
    assert record.citations_used
    assert {"auto_search", "llm", "total"} <= set(record.durations_ms)
    assert await a.record("nope") is None


async def test_bad_messages_raise_a_clear_error(make_assistant) -> None:
    a = make_assistant({"name": "t"})
    with pytest.raises(ValueError, match=r"messages\[0\]\.role 'robot'"):
        await run(a, [{"role": "robot", "content": "hi"}])


async def test_data_source_kinds_become_requests(make_assistant) -> None:
    kb = StaticHandler("kb", kb_items(1))
    db = StaticHandler("db", db_items(1))
    a = make_assistant({"name": "t"}, handlers=[kb, db])
    await run(a, data_message("about refunds",
                              {"type": "kb_collection", "name": "faq"},
                              {"type": "kb_document", "name": "doc-7", "collection": "docs"},
                              {"type": "model", "name": "order", "limit": 3}))
    by_coll = {tuple(r.collections): r for r in kb.requests}
    assert by_coll[("faq",)].wheres == [] and by_coll[("faq",)].source == "user"
    doc = by_coll[("docs",)]
    assert doc.wheres[0].field == "document_id" and doc.wheres[0].value == "doc-7"
    assert db.requests[0].models == ["order"] and db.requests[0].limit == 3


HOOK_CITATION = '''
async def create(ctx, messages, options):
    return {"citation": {"format": "[{id}]", "autoInjectPrompt": False}}
'''


async def test_hook_overrides_citation_format(make_assistant) -> None:
    a = make_assistant({"name": "t", "search": {"web": True}}, hooks=HOOK_CITATION,
                       handlers=[StaticHandler("web", web_items(2))])
    events = await run(a, "What is the answer to question 1?")
    text = text_of(events)
    assert "[1]" in text and "#ref:" not in text
    citations = next(e for e in events if e["event"] == "citations")
    assert citations["used"] and citations["unknown"] == []


async def test_next_hook_failure_keeps_the_answer(make_assistant) -> None:
    hooks = "async def next(ctx, payload):\n    raise KeyError('x')\n"
    a = make_assistant({"name": "t"}, hooks=hooks)
    events = await run(a, "q")
    assert "offline" in text_of(events)
    assert "next hook failed (hooks.py line 2): KeyError" in events[-1]["error"]
    record = await a.record(events[0]["request_id"])
    assert len(record.errors) == 1


class IdentityHandler(StaticHandler):
    """Records who asked (permission filters read ctx.user_id / ctx.team_id)."""

    def __init__(self) -> None:
        super().__init__("kb", kb_items(1))
        self.callers: list[tuple] = []

    async def search(self, ctx, request):
        self.callers.append((request.source, ctx.user_id, ctx.team_id))
        return await super().search(ctx, request)


HOOK_KB = '''
async def create(ctx, messages, options):
    await ctx.search.kb("from the hook")
    return {"search": True}
'''


async def test_identity_reaches_every_search_path(make_assistant) -> None:
    handler = IdentityHandler()
    a = make_assistant({"name": "t", "search": {"kb": True}}, hooks=HOOK_KB, handlers=[handler])
    await run(a, data_message("question", {"type": "kb_collection", "name": "docs"}),
              Options(user_id="u1", team_id="t1"))
    assert sorted(handler.callers) == [("auto", "u1", "t1"), ("hook", "u1", "t1"),
                                       ("user", "u1", "t1")]


async def test_concurrent_streams_stay_separate(make_assistant) -> None:
    a = make_assistant(SEARCH_ALL, handlers=[StaticHandler("web", web_items(2), delay=0.01),
                                             StaticHandler("kb", kb_items(2)),
                                             StaticHandler("db", db_items(2))])
    results = [None] * 20

    async def one(i: int) -> None:
        results[i] = await run(a, f"question number {i}", Options(request_id=f"c{i}"))

    async with anyio.create_task_group() as tg:
        for i in range(20):
            tg.start_soon(one, i)
    for i, events in enumerate(results):
        assert {e["request_id"] for e in events} == {f"c{i}"}
        assert refs_in(events) == [str(n) for n in range(1, 7)]  # ids are per request
        assert kinds(events)[-1] == "done"
        assert (await a.record(f"c{i}")).query == f"question number {i}"
