"""Dependencies passed in, not patched in: an assistant uses the searcher it is given as
it is (handlers, rerankers and generators are the searcher's own, or travel in the
stream's context), and one it loads is built with everything it needs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_search.agent import Assistant
from agent_search.rerank import resolve_reranker
from agent_search.searcher import Searcher

from ..support.agents import StaticHandler, run, web_items

pytestmark = pytest.mark.anyio

AGENT_YML = {"uses": {"query": "dsl-worker", "rerank": "model:ce"},
             "rerankers": {"ce": {"url": "http://127.0.0.1:9/rerank", "timeout": 0.5}}}


@pytest.fixture(autouse=True)
def _dsl_worker(tmp_path: Path) -> None:
    """The assistant ``uses.query`` names exists (a name of nothing is refused at load)."""
    worker = tmp_path / "project" / "assistants" / "dsl-worker"
    worker.mkdir(parents=True)
    (worker / "package.yao").write_text('{"name": "dsl worker"}')


class GeneratorsHandler(StaticHandler):
    """A db handler with the ``generators`` dict the old runtime wrote into."""

    def __init__(self) -> None:
        super().__init__("db", [])
        self.generators: dict[str, Any] = {}
        self.closed = 0

    async def aclose(self) -> None:
        self.closed += 1


def snapshot(searcher: Searcher, db: GeneratorsHandler) -> tuple[Any, ...]:
    handlers = {t: [id(h) for h in searcher.registry.handlers(t)]
                for t in searcher.registry.types}
    return handlers, dict(searcher.rerankers), dict(db.generators), searcher.config


async def test_a_searcher_shared_by_two_assistants_is_not_changed(make_assistant) -> None:
    loaded = make_assistant({"name": "t", "search": {"web": True, "db": True}},
                            agent_yml=AGENT_YML)
    db = GeneratorsHandler()
    shared = Searcher(loaded.searcher.config)
    shared.registry.register(StaticHandler("web", web_items(2)))
    shared.registry.register(db)
    before = snapshot(shared, db)
    one, two = (Assistant(assistant_id=f"a{i}", path=loaded.path, package=loaded.package,
                          hooks=loaded.hooks, settings=loaded.settings, searcher=shared,
                          config_dir=loaded.config_dir) for i in (1, 2))
    assert snapshot(shared, db) == before
    for assistant in (one, two, one):
        events = await run(assistant, "What is the answer to question 1?")
        assert events[-1]["event"] == "done"
    assert snapshot(shared, db) == before
    await one.aclose()  # a searcher handed in belongs to the caller: not closed
    assert db.closed == 0
    await shared.aclose()
    assert db.closed == 1


async def test_a_loaded_assistant_closes_the_searcher_it_built(make_assistant) -> None:
    db = GeneratorsHandler()
    a = make_assistant({"name": "t"}, handlers=[db])
    await a.aclose()
    assert db.closed == 1


async def test_a_loaded_assistant_gets_its_handlers_and_rerankers_at_build(
        make_assistant) -> None:
    a = make_assistant({"name": "t"}, agent_yml=AGENT_YML)
    assert a.searcher.registry.handlers("mcp_resource")
    ctx = a.searcher.context(deps=a.delegates.deps(a.searcher.config.uses.query))
    assert resolve_reranker("model", a.searcher.rerankers, ctx) is not None


async def test_the_query_generator_reaches_db_handlers_through_the_context(
        make_assistant) -> None:
    seen: list[Any] = []

    class Db(StaticHandler):
        async def search(self, ctx: Any, request: Any) -> Any:
            seen.append(dict(ctx.deps.generators))
            return await super().search(ctx, request)

    a = make_assistant({"name": "t", "search": {"db": True}}, agent_yml=AGENT_YML,
                       handlers=[Db("db", [])])
    await run(a, "cheap products")
    assert list(seen[0]) == ["dsl-worker"]


def test_from_config_builds_the_searcher_with_what_it_uses(tmp_path, home) -> None:
    from agent_search.rerank import ScoreReranker

    generator, reranker, mine = object(), ScoreReranker(), StaticHandler("custom", [])
    searcher = Searcher.from_config(tmp_path, handlers=[mine], rerankers={"mine": reranker},
                                    generators={"mine": generator})  # type: ignore[dict-item]
    (db,) = searcher.registry.handlers("db")
    assert db.generators == {}  # generators reach a search only in ctx.deps
    assert dict(searcher.context().deps.generators) == {"mine": generator}
    assert searcher.rerankers["mine"] is reranker and "score" in searcher.rerankers
    assert searcher.registry.handlers("custom") == [mine]


HOOK_USES_WORKER = '''
async def create(ctx, messages, options):
    deps = ctx.context.deps
    ctx.memory["deps"] = (id(deps), id(deps.generators))
    return {"uses": {"query": "dsl-worker"}}

async def next(ctx, payload):
    deps = ctx.context.deps
    assert (id(deps), id(deps.generators)) == ctx.memory["deps"], "deps changed mid-run"
'''


async def test_a_create_hooks_query_generator_is_found_in_deps_filled_once(
        make_assistant) -> None:
    """The stream's deps are made once; the generator a create hook names in
    ``uses.query`` is found through them all the same."""
    seen: list[Any] = []

    class Db(StaticHandler):
        async def search(self, ctx: Any, request: Any) -> Any:
            seen.append((ctx.config.uses.query, ctx.deps.generators.get(ctx.config.uses.query)))
            return await super().search(ctx, request)

    a = make_assistant({"name": "t", "search": {"db": True}}, hooks=HOOK_USES_WORKER,
                       handlers=[Db("db", [])])
    assert a.searcher.config.uses.query in (None, "", "builtin")
    events = await run(a, "cheap products")
    assert events[-1]["event"] == "done" and not events[-1].get("error"), events[-1]
    ((name, generator),) = seen
    assert name == "dsl-worker" and generator is not None and generator.name == "dsl-worker"
