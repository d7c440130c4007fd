"""Untrusted callers of the search tools: the LLM (text-search functions and filters)
and MCP clients (tool arguments). Property tests over their inputs against a database
with private rows of several tenants, asserting the suite's invariants: no exception
other than the API's own clear errors, no private row of another identity, every call
within its time limit + 0.5 s."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_search import Searcher
from agent_search.mcp.server import create_server
from agent_search.textsearch import (
    SearchOptions,
    TextSearchFilter,
    create_search_function,
    filter_from_arguments,
    query_parameter,
)
from agent_search.textsearch.base import TextSearchError
from agent_search.textsearch.db_search import DBTextSearch
from agent_search.textsearch.functions import FunctionParameter

TIMEOUT = 2.0
USER, TEAM = "u1", "t1"
# id, title, category, amount, owner, team, public, share
ROWS = [
    (1, "own secret plan", "alpha", 10, "u1", "t1", 0, "private"),
    (2, "other tenant secret", "gamma", 20, "u2", "t2", 0, "private"),
    (3, "other team shared", "gamma", 30, "u2", "t2", 0, "team"),
    (4, "public notice", "beta", 40, "u2", "t2", 1, "private"),
    (5, "teammate shared", "alpha", 50, "u3", "t1", 0, "team"),
    (6, "teammate private", "alpha", 60, "u3", "t1", 0, "private"),
]
VISIBLE_TO_U1 = {"1", "4", "5"}
COLUMNS = ["id", "title", "category", "amount", "__yao_created_by", "__yao_team_id", "public",
           "share", "nope", "notes.title"]
OPS = ["=", "!=", ">", ">=", "<", "<=", "like", "in", "not in", "between", "is null",
       "is not null", "match", "~", "", "OR 1=1"]
HOSTILE_VALUES = st.sampled_from([
    "1e999999", "1e700000", "-1e999999", "9" * 5000, "0x7fffffff", "NaN", "inf", "1_000",
    "' OR '1'='1", "%", "u2", "t2", "١", "𝟏", "\u2028", "\x00",
])
VALUES = (HOSTILE_VALUES | st.integers() | st.floats() | st.text(max_size=20) | st.none()
          | st.booleans() | st.lists(st.integers() | HOSTILE_VALUES, max_size=3))


@pytest.fixture(scope="module")
def searcher(tmp_path_factory: pytest.TempPathFactory) -> Searcher:
    db = tmp_path_factory.mktemp("tenants") / "tenants.db"
    with sqlite3.connect(db) as conn:
        conn.execute("create table notes (id integer primary key, title text, category text, "
                     "amount integer, __yao_created_by text, __yao_team_id text, "
                     "public integer, share text)")
        conn.executemany("insert into notes values (?, ?, ?, ?, ?, ?, ?, ?)", ROWS)
    return Searcher.from_config(None, overrides={
        "db": {"url": f"sqlite:///{db}", "models": ["notes"]},
        "options": {"timeout": TIMEOUT}})


def _where() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"field": st.sampled_from(COLUMNS), "op": st.sampled_from(OPS), "value": VALUES})


def _visible(ids: list[Any]) -> bool:
    return {str(i) for i in ids if i is not None} <= VISIBLE_TO_U1


def test_mcp_db_search_with_a_huge_exponent_returns_at_once(searcher: Searcher) -> None:
    # issue 11 item 2: "1e700000" on an integer column froze the event loop for 31 s
    server, _ = create_server(searcher, user_id=USER, team_id=TEAM)

    async def call() -> Any:
        return await server.call_tool("db_search", {
            "query": "notes", "wheres": [{"field": "amount", "op": ">", "value": "1e700000"}]})

    started = time.perf_counter()
    out = anyio.run(call)
    assert time.perf_counter() - started < 2.0  # was 31 s
    data = out.structured_content or json.loads(out.content[0].text)
    assert data["error"] and "amount" in data["error"]


@given(query=st.text(min_size=1, max_size=60), wheres=st.lists(_where(), max_size=3),
       limit=st.none() | st.integers(-5, 200))
def test_mcp_db_search_arguments(searcher: Searcher, query: str, wheres: list[dict[str, Any]],
                                 limit: int | None) -> None:
    server, _ = create_server(searcher, user_id=USER, team_id=TEAM)
    args: dict[str, Any] = {"query": query, "wheres": wheres}
    if limit is not None:
        args["limit"] = limit

    async def call() -> Any:
        try:
            return await server.call_tool("db_search", args)
        except Exception as exc:  # the SDK's own argument error is the clear answer
            assert type(exc).__name__ == "ToolError", repr(exc)
            return None

    started = time.perf_counter()
    out = anyio.run(call)
    assert time.perf_counter() - started < TIMEOUT + 0.5
    if out is None or out.is_error:
        return
    data = out.structured_content or json.loads(out.content[0].text)
    assert _visible([i.get("record_id") for i in data["items"]]), data["items"]


@given(clauses=st.lists(_where() | st.fixed_dictionaries(
    {"or": st.lists(_where(), min_size=1, max_size=2)}), max_size=3),
       query=st.text(min_size=1, max_size=40))
def test_text_search_filters(searcher: Searcher, clauses: list[dict[str, Any]],
                             query: str) -> None:
    db = DBTextSearch(searcher, ["notes"])

    async def call() -> list[str | None] | None:
        try:
            options = SearchOptions(top=10, filter=TextSearchFilter.from_json(clauses))
            results = await db.get_search_results(
                query, options, ctx=searcher.context(user_id=USER, team_id=TEAM))
        except (TextSearchError, ValueError) as exc:  # the documented bad-filter errors
            assert "\n" not in str(exc).strip()
            return None
        return [item.record_id async for item in results.results]

    started = time.perf_counter()
    ids = anyio.run(call)
    assert time.perf_counter() - started < TIMEOUT + 0.5
    assert ids is None or _visible(ids), ids


@given(arguments=st.dictionaries(
    st.sampled_from(["query", "count", "skip", "category", "amount", "x"]),
    VALUES | st.text(min_size=1, max_size=30), max_size=5))
def test_llm_tool_arguments(searcher: Searcher, arguments: dict[str, Any]) -> None:
    fn = create_search_function(
        DBTextSearch(searcher, ["notes"]), output_type="text_search_result",
        parameters=[query_parameter(), FunctionParameter("category", "a category"),
                    FunctionParameter("amount", "an amount")],
        filter_update=filter_from_arguments({"category": "category", "amount": "amount"}))

    async def call() -> list[Any] | None:
        try:
            return await fn.invoke(arguments, ctx=searcher.context(user_id=USER, team_id=TEAM))
        except TextSearchError as exc:  # ToolArgumentError and friends: one clear line
            assert "\n" not in str(exc).strip()
            return None

    started = time.perf_counter()
    out = anyio.run(call)
    assert time.perf_counter() - started < TIMEOUT + 0.5
    if out:
        names = {r["name"] for r in out}
        assert names <= {"own secret plan", "public notice", "teammate shared"}, names
