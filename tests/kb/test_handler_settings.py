"""Every kb setting of a search comes from one place, the search's own config: an
assistant's (or a create hook's) ``kb.mode`` is honoured like its ``kb.threshold``, and a
request's ``options`` win over both (issue 36, "filled once")."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_search import Context, Request, SearchConfig, Searcher
from agent_search.agent._hook_api import HookSearch
from agent_search.kb import create_handler, ingest_paths

pytestmark = pytest.mark.anyio


@pytest.fixture
def config(config: SearchConfig) -> SearchConfig:
    """A first search embeds the model's background passages: no 10 s limit on a busy
    machine."""
    return config.merged({"options": {"timeout": 300, "deadline": 300}})

# found by meaning (dense ~0.9); BM25 alone matches one word ("spaghetti"), which is no
# evidence, so sparse mode's score is under the default floor
QUESTION = "how long should spaghetti boil"


def _searcher(config: SearchConfig) -> Searcher:
    return Searcher(config, handlers=[create_handler(config)])


def _sources(result: object) -> list[str]:
    return [i.metadata["source"].rsplit("/", 1)[-1] for i in result.items]  # type: ignore[attr-defined]


async def test_a_hooks_kb_mode_is_honoured_like_its_threshold(config: SearchConfig,
                                                              docs: Path) -> None:
    await ingest_paths(config, [docs], "docs")
    searcher = _searcher(config)
    base = await searcher.search(Request(type="kb", query=QUESTION, limit=5),
                                 ctx=Context(config=config))
    assert base.error is None and _sources(base)[0] == "pasta.txt"  # hybrid finds it

    # what a create hook does: merge a kb section into the stream's config, then search
    ctx = Context(config=config.merged({"kb": {"mode": "sparse"}}))
    hooked = await HookSearch(searcher, ctx).kb(QUESTION, limit=5)
    assert hooked.error is None
    assert _sources(hooked) == []  # sparse: under the floor
    explicit = await searcher.search(
        Request(type="kb", query=QUESTION, limit=5, options={"mode": "sparse"}),
        ctx=Context(config=config))
    assert _sources(hooked) == _sources(explicit)

    # the hook's threshold is honoured too (it was before), in the same search
    ctx = Context(config=config.merged({"kb": {"mode": "dense", "threshold": 0.999}}))
    assert (await HookSearch(searcher, ctx).kb(QUESTION, limit=5)).items == []


async def test_request_options_win_over_the_searchs_config(config: SearchConfig,
                                                           docs: Path) -> None:
    await ingest_paths(config, [docs], "docs")
    searcher = _searcher(config)
    ctx = Context(config=config.merged({"kb": {"mode": "sparse", "fusion": "rrf"}}))
    result = await searcher.search(
        Request(type="kb", query=QUESTION, limit=5, options={"mode": "hybrid"}), ctx=ctx)
    assert result.error is None and _sources(result)[0] == "pasta.txt"
    # the config's fusion still applies (rrf's scores are relative: the first is 1.0)
    assert result.items[0].score == pytest.approx(1.0)


async def test_the_handler_alone_fills_the_same_defaults(config: SearchConfig,
                                                         docs: Path) -> None:
    """Called without a searcher (no request defaults filled), the handler reads the
    context's config: its collections, threshold and limit."""
    await ingest_paths(config, [docs], "docs")
    await ingest_paths(config, [docs], "other")
    handler = create_handler(config)
    ctx = Context(config=config.merged({"kb": {"collections": ["other"], "max_results": 1,
                                               "mode": "dense"}}))
    result = await handler.search(ctx, Request(type="kb", query=QUESTION))
    assert result.error is None
    assert [i.collection for i in result.items] == ["other"]
    assert _sources(result) == ["pasta.txt"]
