"""One boundary for errors: whatever a handler does wrong (an error Result, an exception,
a wrong return value), builtin or custom, the searcher words it ``"<type>: <message>"``
on one line, naming the type once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_search import Context, Request, Result, SearchConfig, Searcher
from agent_search._builtins import register_builtin_handlers

pytestmark = pytest.mark.anyio


class Custom:
    """A custom handler failing in the way ``how`` says."""

    def __init__(self, search_type: str, how: str) -> None:
        self.type = search_type
        self.how = how

    def can_handle(self, ctx: Context, request: Request) -> bool:
        return True

    async def search(self, ctx: Context, request: Request) -> Any:
        if self.how == "raises":
            raise RuntimeError("backend exploded")
        if self.how == "returns":
            return {"items": []}
        message = "news: feed is down" if self.how == "prefixed" else "feed is\ndown"
        return Result(type=self.type, query=request.query, error=message)


def _builtin_searcher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Searcher:
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    config = SearchConfig(home=tmp_path, web={"provider": "tavily"},
                          db={"url": f"sqlite:///{tmp_path / 'missing.db'}"})
    searcher = Searcher(config)
    register_builtin_handlers(searcher.registry, config)
    return searcher


@pytest.mark.parametrize(("request_fields", "message"), [
    ({"type": "web", "query": "x"}, "tavily: API key not configured"),
    ({"type": "kb", "query": "x", "options": {"mode": "fuzzy"}}, "invalid option mode"),
    ({"type": "db", "query": "x"}, "db.url"),
])
async def test_builtin_handlers_errors_name_their_type_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request_fields: dict[str, Any],
        message: str) -> None:
    searcher = _builtin_searcher(tmp_path, monkeypatch)
    try:
        result = await searcher.search(request_fields)
    finally:
        await searcher.aclose()
    rtype = request_fields["type"]
    assert result.error is not None and result.error.startswith(f"{rtype}: {message}")
    assert not result.error.removeprefix(f"{rtype}: ").startswith(f"{rtype}: ")
    assert "\n" not in result.error and result.items == []


@pytest.mark.parametrize(("how", "error"), [
    ("result", "news: feed is down"),
    ("prefixed", "news: feed is down"),
    ("raises", "news: RuntimeError: backend exploded"),
    ("returns", "news: handler returned dict, not a Result"),
])
async def test_a_custom_handlers_errors_are_worded_the_same(how: str, error: str) -> None:
    searcher = Searcher(handlers=[Custom("news", how)])
    result = await searcher.search({"type": "news", "query": "elections"})
    assert result.error == error and result.type == "news"


def test_one_function_words_every_search_error() -> None:
    from agent_search._results import search_error

    assert search_error("kb", "collection 'x' not found") == "kb: collection 'x' not found"
    assert search_error("kb", "kb: already worded") == "kb: already worded"
    assert search_error("db", "db.url: not found") == "db: db.url: not found"
    assert search_error("web", "two\n  lines") == "web: two lines"
