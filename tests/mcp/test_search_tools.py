"""The MCP server's tools in-process (:class:`SearchTools`, no MCP session): ``kb_search``
takes the relevance floor as ``min_score``, the name every other surface uses;
``threshold``, its earlier name, still works for a release, with a DeprecationWarning."""

from __future__ import annotations

import warnings

import pytest

from agent_search import Searcher
from agent_search.mcp.server import SearchTools
from agent_search.testing import StaticHandler, items

pytestmark = pytest.mark.anyio


def _tools() -> tuple[SearchTools, StaticHandler]:
    searcher = Searcher()
    kb = StaticHandler("kb", items(3, score=0.9, step=0.3))  # scores 0.9, 0.6, 0.3
    searcher.registry.register(kb)
    return SearchTools(searcher), kb


async def test_min_score_is_the_floor() -> None:
    tools, kb = _tools()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        found = await tools.kb_search("anything", min_score=0.5)
    assert found["error"] is None
    assert [round(i["score"], 2) for i in found["items"]] == [0.9, 0.6]
    assert kb.requests[0].min_score == 0.5


async def test_threshold_is_still_accepted_with_a_warning() -> None:
    tools, kb = _tools()
    with pytest.warns(DeprecationWarning, match="'threshold' is deprecated"):
        found = await tools.kb_search("anything", threshold=0.5)
    assert [round(i["score"], 2) for i in found["items"]] == [0.9, 0.6]
    assert kb.requests[0].min_score == 0.5


async def test_two_different_floors_are_refused() -> None:
    tools, kb = _tools()
    with pytest.warns(DeprecationWarning):
        found = await tools.kb_search("anything", min_score=0.5, threshold=0.7)
    assert "threshold and min_score are the same floor" in found["error"]
    assert kb.requests == []
