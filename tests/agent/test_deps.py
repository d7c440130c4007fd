"""One deps object per run (``ctx.deps``): keywords for an auto web search are extracted
once, and one reranker resolution serves requests and merges — a Python reranker of the
searcher's own can be named in ``uses.rerank``."""

from __future__ import annotations

from typing import Any

import pytest

from agent_search import Context, Deps, ResultItem, Searcher
from agent_search.agent import Assistant

from ..support.agents import StaticHandler, run, web_items

pytestmark = pytest.mark.anyio


class Reverse:
    """Reverses the items and counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    async def rerank(self, ctx: Context, query: str, items: list[ResultItem],
                     top_n: int = 0) -> list[ResultItem]:
        self.calls += 1
        return list(reversed(items))


async def test_auto_web_search_extracts_keywords_once(make_assistant) -> None:
    web = StaticHandler("web", web_items(1), keyword_queries=True)
    a = make_assistant({"name": "t", "search": {"web": True}}, handlers=[web])
    calls: list[str] = []
    original = a.delegates.keywords

    async def counting(processor: str | None, text: str, **kw: Any) -> list[str]:
        calls.append(text)
        return await original(processor, text, **kw)

    a.delegates.keywords = counting  # type: ignore[method-assign]
    await run(a, "What are the best wireless headphones under 100 dollars?")
    assert len(calls) == 1
    (request,) = web.requests
    assert request.options == {"keywords": False} and "headphones" in request.query


async def test_a_python_reranker_can_be_named_in_uses_rerank(make_assistant) -> None:
    # a file's uses.rerank may name only what the files declare (a typo there is a load
    # error); a reranker that exists only in Python is named in the configuration the
    # Python code builds, next to the Searcher it is given to
    loaded = make_assistant({"name": "t", "search": {"web": True}})
    mine = Reverse()
    config = loaded.searcher.config.merged({"uses": {"rerank": "mine"}}, file="code")
    searcher = Searcher(config, rerankers={"mine": mine},
                        handlers=[StaticHandler("web", web_items(3))])
    a = Assistant(assistant_id="t", path=loaded.path, package=loaded.package,
                  hooks=loaded.hooks, settings=loaded.settings, searcher=searcher,
                  config_dir=loaded.config_dir)
    events = await run(a, "What is the answer to question 1?")
    record = await a.record(events[-1]["request_id"])
    assert record is not None and mine.calls == 1
    assert [r["title"] for r in record.references][:1] == ["w page 2"]
    assert not any("rerank" in w for w in record.warnings), record.warnings


async def test_request_and_merge_rerankers_resolve_the_same_way() -> None:
    mine = Reverse()
    searcher = Searcher(rerankers={"mine": mine},
                        handlers=[StaticHandler("web", web_items(3))])
    ctx = searcher.context(deps=Deps())
    merged = await searcher.merge([await searcher.search({"type": "web", "query": "q"},
                                                         ctx=ctx)], ctx=ctx, reranker="mine")
    assert merged.rerank_error is None and mine.calls == 1
    missing = await searcher.merge(
        [await searcher.search({"type": "web", "query": "q"}, ctx=ctx)], ctx=ctx,
        reranker="model:nope")
    assert missing.rerank_error == "rerank model:nope failed, used builtin: not configured"
    assert len(missing.items) == 3
