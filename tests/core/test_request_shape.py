"""One request shape per handler: the common :class:`Request`, and each handler's own
parameters in its options model (a :class:`SearchOptions`), parsed and filled once by
the searcher; the old top-level fields still accepted, with a deprecation warning; one
relevance floor, cut and counted by the searcher."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from agent_search import SearchConfig, Searcher
from agent_search.config import KBConfig
from agent_search.context import Context
from agent_search.types import Request, Result, ResultItem, SearchOptions

pytestmark = pytest.mark.anyio


class NewsOptions(SearchOptions):
    sources: list[str] | None = None
    depth: int | None = None

    def filled(self, config: SearchConfig) -> NewsOptions:
        NewsHandler.fills += 1
        return self if self.depth is not None else self.model_copy(update={"depth": 3})


class NewsHandler:
    type = "news"
    options_model = NewsOptions
    fills = 0

    def __init__(self, scores: tuple[float, ...] = (0.9,)) -> None:
        self.seen: list[NewsOptions] = []
        self.scores = scores

    def can_handle(self, ctx: Context, request: Request) -> bool:
        return True

    async def search(self, ctx: Context, request: Request) -> Result:
        self.seen.append(NewsOptions.of(request))
        items = [ResultItem(title=f"n{i}", content="x", score=s)
                 for i, s in enumerate(self.scores)]
        return Result(type="news", query=request.query, items=items)


def _warned(fn: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = fn()
    return value, [str(w.message) for w in caught if w.category is DeprecationWarning]


def test_a_handler_field_at_the_top_level_moves_into_options_with_a_warning() -> None:
    request, said = _warned(lambda: Request(type="kb", query="q", collections=["docs"],
                                            wheres=[{"field": "lang", "value": "en"}]))
    assert request.options == {"collections": ["docs"],
                               "wheres": [{"field": "lang", "op": "=", "value": "en"}]}
    assert "collections" not in request.model_dump()
    assert any("'collections' is deprecated" in m and "options.collections" in m
               for m in said)
    # read the old way: still there, still warned about
    collections, said = _warned(lambda: request.collections)
    assert collections == ["docs"] and said


def test_the_new_shape_warns_nothing() -> None:
    _, said = _warned(lambda: Request(type="kb", query="q", min_score=0.2,
                                      options={"collections": ["docs"]}))
    assert said == []


def test_a_field_given_both_ways_with_two_values_is_refused() -> None:
    with pytest.raises(ValueError, match="collections is given twice"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Request(type="kb", query="q", collections=["a"], options={"collections": ["b"]})


def test_threshold_is_min_score() -> None:
    request, said = _warned(lambda: Request(type="kb", query="q", threshold=0.4))
    assert request.min_score == 0.4 and any("threshold" in m for m in said)
    with pytest.raises(ValueError, match="same floor"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Request(type="kb", query="q", threshold=0.4, min_score=0.1)


def test_kb_threshold_in_a_config_is_the_higher_floor_of_the_two() -> None:
    config, said = _warned(lambda: KBConfig(threshold=0.5, min_score=0.1))
    assert config.min_score == 0.5 and config.threshold is None and said
    lower, _ = _warned(lambda: KBConfig(threshold=0.01, min_score=0.3))
    assert lower.min_score == 0.3  # never lower than before: no search finds more


async def test_the_searcher_parses_and_fills_options_once() -> None:
    handler = NewsHandler()
    NewsHandler.fills = 0
    searcher = Searcher(handlers=[handler])
    result = await searcher.search({"type": "news", "query": "q",
                                    "options": {"sources": ["a"]}})
    assert result.ok
    assert NewsHandler.fills == 1  # of() hands the handler the searcher's, filled
    assert (handler.seen[0].sources, handler.seen[0].depth) == (["a"], 3)


async def test_a_bad_option_fails_before_the_handler_runs() -> None:
    handler = NewsHandler()
    result = await Searcher(handlers=[handler]).search(
        {"type": "news", "query": "q", "options": {"depth": "deep"}})
    assert result.error is not None and result.error.startswith("news: invalid option depth")
    assert handler.seen == []


async def test_the_legacy_threshold_is_cut_once_and_counted() -> None:
    handler = NewsHandler(scores=(0.9, 0.5, 0.2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = await Searcher(handlers=[handler]).search(
            {"type": "news", "query": "q", "threshold": 0.4})
    assert [i.score for i in result.items] == [0.9, 0.5]
    assert result.dropped_below_floor == 1


async def test_a_handler_without_an_options_model_gets_its_section_defaults() -> None:
    seen: list[dict[str, Any]] = []

    class OldKB:
        type = "kb"

        def can_handle(self, ctx: Context, request: Request) -> bool:
            return True

        async def search(self, ctx: Context, request: Request) -> Result:
            seen.append(dict(request.options))
            return Result(type="kb", query=request.query)

    config = SearchConfig().merged({"kb": {"collections": ["docs"]}})
    searcher = Searcher(config, handlers=[OldKB()])
    await searcher.search({"type": "kb", "query": "q"})
    await searcher.search({"type": "kb", "query": "q", "options": {"collections": ["faq"]}})
    assert seen == [{"collections": ["docs"]}, {"collections": ["faq"]}]


def test_generators_reach_a_search_only_in_ctx_deps() -> None:
    from agent_search.deps import Deps

    mine, theirs = object(), object()
    searcher = Searcher(generators={"mine": mine, "both": mine})  # type: ignore[dict-item]
    assert dict(searcher.context().deps.generators) == {"mine": mine, "both": mine}
    # a run's own deps (an assistant's delegates) come first, the searcher's after
    run = searcher.context(deps=Deps(generators={"both": theirs}))  # type: ignore[dict-item]
    assert run.deps.generators["both"] is theirs and run.deps.generators["mine"] is mine
    assert "nothing" not in run.deps.generators


def test_a_db_handler_given_generators_is_deprecated(tmp_path: Any) -> None:
    from agent_search.db.handler import DBHandler

    config = SearchConfig(home=tmp_path)
    _, said = _warned(lambda: DBHandler(config, generators={"x": object()}))  # type: ignore[dict-item]
    assert any("ctx.deps" in m for m in said)
    _, said = _warned(lambda: DBHandler(config))
    assert said == []


def test_a_copy_updated_with_a_moved_field_keeps_it_in_options() -> None:
    # pydantic's model_copy(update=...) skips validation: the old field name would be
    # dropped silently and the copy would search every collection
    request = Request(type="kb", query="q", options={"collections": ["docs"], "graph": True})
    copy, said = _warned(lambda: request.model_copy(update={"collections": ["eval-1"]}))
    assert copy.options == {"collections": ["eval-1"], "graph": True}
    assert any("options.collections" in m for m in said)
    cleared, _ = _warned(lambda: request.model_copy(update={"collections": []}))
    assert cleared.options == {"graph": True}
    floor, _ = _warned(lambda: request.model_copy(update={"threshold": 0.4}))
    assert floor.min_score == 0.4 and floor.options == request.options
    plain = request.model_copy(update={"limit": 3})
    assert plain.limit == 3 and plain.options == request.options
