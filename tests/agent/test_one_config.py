"""One configuration: a type's section is read by one resolver on every path (the limit
and the request defaults), and custom search types take part in auto search and tools
like the built-in ones."""

from __future__ import annotations

import pytest

from agent_search.agent import Options
from agent_search.config import SearchConfig
from agent_search.context import Context
from agent_search.db.settings import DBSettings
from agent_search.errors import ConfigError
from agent_search.kb.settings import KBSettings
from agent_search.searcher import Searcher
from agent_search.testing import items
from agent_search.types import Request
from agent_search.web.settings import WebSettings

from ..support.agents import StaticHandler, db_items, kinds, run

pytestmark = pytest.mark.anyio

HOOK_DB = '''
async def create(ctx, messages, options):
    await ctx.search.db("laptops")
    return {"search": False}
'''


async def test_db_max_results_is_the_limit_on_every_path(make_assistant) -> None:
    """The issue's example: ``db.max_results: 50`` gave limit 10 through
    ``Searcher.search`` and 50 through a hook; now every path asks the same resolver."""
    db = StaticHandler("db", db_items(1))
    package = {"name": "t", "search": {"db": {"max_results": 50}}, "db": {"models": ["product"]}}
    a = make_assistant(package, hooks=HOOK_DB, handlers=[db])
    await run(a, "laptops please")  # the hook path
    ctx = Context(config=a.searcher.config)
    await a.searcher.search(Request(type="db", query="laptops"), ctx=ctx)  # the direct path
    await a.searcher.search_many([{"type": "db", "query": "laptops"}], ctx=ctx)
    assert [r.limit for r in db.requests] == [50, 50, 50]
    assert [r.models for r in db.requests] == [["product"]] * 3
    assert [r.source for r in db.requests] == ["hook", "user", "user"]


async def test_auto_search_fills_the_same_defaults(make_assistant) -> None:
    db = StaticHandler("db", db_items(1))
    package = {"name": "t", "search": {"db": {"max_results": 7}}, "db": {"models": ["product"]}}
    a = make_assistant(package, handlers=[db])
    await run(a, "laptops please")
    assert [(r.source, r.limit, r.models) for r in db.requests] == [("auto", 7, ["product"])]


async def test_a_request_keeps_what_it_says() -> None:
    kb = StaticHandler("kb", items(1))
    config = SearchConfig().merged({"kb": {"collections": ["docs"], "threshold": 0.4,
                                           "max_results": 4}})
    searcher = Searcher(config, handlers=[kb])
    await searcher.search(Request(type="kb", query="q"))
    await searcher.search(Request(type="kb", query="q", options={"collections": ["faq"]},
                                  min_score=0.1, limit=2))
    first, second = kb.requests
    # kb.threshold is kb.min_score: the floor the searcher cuts, not a request field
    assert config.kb.min_score == 0.4
    assert (first.options, first.min_score, first.limit) == ({"collections": ["docs"]},
                                                             None, 4)
    assert (second.options, second.min_score, second.limit) == ({"collections": ["faq"]},
                                                                0.1, 2)


async def test_a_section_limit_over_max_limit_is_capped() -> None:
    web = StaticHandler("web", items(1))
    config = SearchConfig().merged({"web": {"max_results": 90},
                                    "options": {"max_limit": 30}})
    await Searcher(config, handlers=[web]).search(Request(type="web", query="q"))
    assert web.requests[0].limit == 30


def test_each_key_is_declared_once() -> None:
    """The handler settings extend the core's sections: a core key (floor, default limit,
    collections, models) has one declaration, whose default the handler sees."""
    config = SearchConfig()
    for section, model in ((config.web, WebSettings), (config.kb, KBSettings),
                           (config.db, DBSettings)):
        settings = section.settings(model)
        assert settings.min_score == section.min_score
        assert isinstance(settings, type(section))
    assert "min_score" not in KBSettings.__annotations__
    assert "collections" not in KBSettings.__annotations__
    assert "models" not in DBSettings.__annotations__


def test_section_settings_follow_changes_and_name_bad_keys() -> None:
    config = SearchConfig()
    assert config.kb.settings(KBSettings) is config.kb.settings(KBSettings)  # validated once
    config.kb.graph = True
    assert config.kb.settings(KBSettings).graph is True
    config.kb.chunk_tokens = "many"  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"^kb\.chunk_tokens: "):
        config.kb.settings(KBSettings)


async def test_a_custom_type_takes_part_in_auto_search_with_its_floor(make_assistant) -> None:
    news = StaticHandler("news", [{"title": "good", "content": "x", "score": 0.9},
                                  {"title": "weak", "content": "y", "score": 0.2}])
    package = {"name": "t", "search": {"types": {"news": {"min_score": 0.5,
                                                          "max_results": 3}}}}
    a = make_assistant(package, handlers=[news])
    assert a.searcher.config.enabled_types() == ["news"]
    events = await run(a, "what happened today")
    assert [r.limit for r in news.requests] == [3]
    complete = [e for e in events if e["event"] == "search_complete"]
    assert [(c["type"], c["dropped_below_floor"]) for c in complete] == [("news", 1)]
    titles = [e["title"] for e in events if e["event"] == "search_result"]
    assert titles == ["good"]


async def test_a_custom_type_is_offered_by_the_search_tool(make_assistant) -> None:
    news = StaticHandler("news", items(1))
    a = make_assistant({"name": "t", "tools": ["search"]},
                       handlers=[StaticHandler("kb", items(1)), news])
    assert a.answerer.tool_types() == ["kb", "news"]
    assert a.tools == {"search"}


def test_custom_type_toggles_in_a_package() -> None:
    config = SearchConfig().merged({"types": {"news": True, "blogs": {"enabled": False}}})
    assert config.enabled_types() == ["news"]
    assert config.min_score_for("news") == 0.0 and config.limit_for("news") == 10
    assert config.section("nothing") is None and config.min_score_for("nothing") == 0.0


async def test_auto_search_without_enabled_types_uses_every_registered_type(
        make_assistant) -> None:
    news, kb = StaticHandler("news", items(1)), StaticHandler("kb", items(1))
    a = make_assistant({"name": "t"}, handlers=[kb, news])
    events = await run(a, "anything new", Options(search=True))
    assert kinds(events).count("search_start") == 2
    assert len(news.requests) == len(kb.requests) == 1
