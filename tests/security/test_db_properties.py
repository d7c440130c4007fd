"""Property-based tests of the database search over untrusted input: natural-language
questions, ``wheres`` (fields, operators, values), ``select`` lists, explicit DSL, text-search
filters and MCP tool arguments, from every identity, against tests/support/tenants.py.

Invariants: no exception escapes (bad input is a ``Result.error``); no row another identity
may not see is returned (nor a soft-deleted one, nor an owner column); every call returns
within its time limit + 0.5 s.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_search.config import SearchConfig
from agent_search.db import create_handler
from agent_search.mcp.server import SearchTools
from agent_search.registry import Registry
from agent_search.searcher import Searcher
from agent_search.textsearch import DBTextSearch
from agent_search.textsearch.base import TextSearchError
from agent_search.textsearch.filters import TextSearchFilter
from agent_search.types import OPERATORS, Result

from ..support.tenants import (
    NOTE_ROWS,
    create_tenant_db,
    note_definition,
    visible_notes,
    write_model,
)

pytestmark = pytest.mark.anyio

TIMEOUT = 2.0
# What is checked is "never a hang": a search past its 2 s timeout returns. The slack is
# wide because a loaded 2-core CI machine can stretch one example's wall time several-fold;
# a hang is unbounded and still fails.
SLACK = 8.0
SECRETS = {r["id"]: r["body"] for r in NOTE_ROWS}

IDENTITIES = [("u1", "t1"), ("u2", "t1"), ("u3", "t2"), (None, None), ("u1", None),
              (None, "t1"), ("01", None), ("u1 ", "t1 "), ("", "")]
COLUMNS = ["id", "title", "category", "body", "amount", "price", "created_at",
           "__yao_created_by", "__yao_team_id", "__yao_updated_by", "public", "share",
           "deleted_at", "note.title", "comments.text", "Title", "AMOUNT", "count(comments)",
           "count(note)", "COUNT( comments )"]
WORDS = ["notes", "note", "gamma", "alpha", "delta", "beta", "secret", "private", "diary",
         "ledger", "amount", "price", "over", "under", "between", "and", "more", "than",
         "created", "in", "after", "before", "last", "days", "years", "2025", "2024-13-45",
         "category", "named", "called", "containing", "not", "except", "top", "5",
         "cheapest", "latest", "sorted", "by", "1e999999", "9" * 40, "$", "%", "_", "'",
         "\"", "u1", "u2", "t1", "__yao_created_by", "public", "share", "deleted", "١٢",
         "\u2028", "\x00", "DROP TABLE notes;--", "' OR 1=1 --"]

values = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-(10 ** 40), max_value=10 ** 40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["1e999999", "-1e700000", "9" * 500, "2025-01-02", "2025-01-02T03:04:05Z",
                     "u1", "t1", "gamma", "%", "%%%%%%%%%%%%a", "١", "𝟏", "0x1F", "1_0",
                     "true", "team", "private"]),
)
list_values = st.lists(values, max_size=5)
where_leaf = st.fixed_dictionaries({
    "field": st.one_of(st.sampled_from(COLUMNS), st.text(max_size=12)),
    "op": st.one_of(st.sampled_from(sorted(OPERATORS)), st.text(max_size=6)),
    "value": st.one_of(values, list_values),
})
wheres = st.recursive(where_leaf, lambda inner: st.one_of(
    st.fixed_dictionaries({"or": st.lists(inner, min_size=1, max_size=3)}),
    st.fixed_dictionaries({"and": st.lists(inner, min_size=1, max_size=3)})), max_leaves=6)
questions = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=10).map(" ".join),
    st.text(min_size=1, max_size=80))


@pytest.fixture(scope="module", params=["reflected", "defined"])
async def searcher(request: pytest.FixtureRequest,
                   tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Searcher]:
    """A searcher over the tenant database: the table reflected, or described by a
    definition that lists no permission columns (the issue 11 leak)."""
    root = tmp_path_factory.mktemp("tenants")
    db = create_tenant_db(root / "tenants.db")
    cfg = root / "config"
    if request.param == "defined":
        write_model(cfg, "notes.mod.yao", note_definition())
    config = SearchConfig(home=root / "home", options={"timeout": TIMEOUT},
                          db={"url": f"sqlite:///{db}", "models": ["notes"]})
    registry = Registry()
    handler = create_handler(config, config_dir=cfg)
    await handler.warm()  # as a service does at start-up: no model load in a 2 s search
    registry.register(handler)
    async with Searcher(config, registry) as s:
        yield s


def check(result: Result, user: str | None, team: str | None, elapsed: float) -> None:
    assert elapsed <= TIMEOUT + SLACK, f"took {elapsed:.2f}s"
    if result.error is not None:
        assert "\n" not in result.error and "Traceback" not in result.error
        return
    allowed = visible_notes(user or None, team or None)
    for item in result.items:
        if item.model != "notes":
            continue
        assert item.record_id in allowed, (item.record_id, user, team)
        assert not any(k.lower().startswith("__yao_") for k in item.data or {})
    shown = " ".join(f"{i.title} {i.content}" for i in result.items)
    for row_id, body in SECRETS.items():
        if row_id not in allowed:
            assert body not in shown


async def run(searcher: Searcher, user: str | None, team: str | None,
              **request: Any) -> None:
    ctx = searcher.context(user_id=user, team_id=team)
    start = time.monotonic()
    result = await searcher.search({"type": "db", "limit": 50, **request}, ctx=ctx)
    check(result, user, team, time.monotonic() - start)


@given(query=questions, who=st.sampled_from(IDENTITIES))
async def test_questions(searcher: Searcher, query: str,
                         who: tuple[str | None, str | None]) -> None:
    await run(searcher, *who, query=query)


@given(where=st.lists(wheres, max_size=3), who=st.sampled_from(IDENTITIES),
       query=st.sampled_from(["notes", "notes in category gamma", "secret diary"]))
async def test_wheres(searcher: Searcher, where: list[dict[str, Any]], query: str,
                      who: tuple[str | None, str | None]) -> None:
    await run(searcher, *who, query=query, wheres=where)


@given(select=st.lists(st.one_of(st.sampled_from(COLUMNS), st.text(max_size=10)), max_size=6),
       who=st.sampled_from(IDENTITIES))
async def test_select_lists(searcher: Searcher, select: list[str],
                            who: tuple[str | None, str | None]) -> None:
    await run(searcher, *who, query="notes", select=select)


@given(where=st.lists(wheres, max_size=2), select=st.lists(st.sampled_from(COLUMNS),
                                                            max_size=3),
       orders=st.lists(st.fixed_dictionaries({"field": st.sampled_from(COLUMNS),
                                              "order": st.sampled_from(["asc", "desc"])}),
                       max_size=2),
       who=st.sampled_from(IDENTITIES))
async def test_explicit_dsl(searcher: Searcher, where: list[dict[str, Any]], select: list[str],
                            orders: list[dict[str, str]],
                            who: tuple[str | None, str | None]) -> None:
    """What an LLM generator or a hook may hand over as ``options.dsl``."""
    dsl = {"model": "notes", "wheres": where, "select": select, "orders": orders}
    await run(searcher, *who, query="notes", options={"dsl": dsl})


@given(field=st.sampled_from(["amount", "price", "created_at", "title", "public"]),
       op=st.sampled_from(["=", ">", "<=", "!=", "like"]), value=values,
       who=st.sampled_from(IDENTITIES))
async def test_text_search_filters(searcher: Searcher, field: str, op: str, value: Any,
                                   who: tuple[str | None, str | None]) -> None:
    """Text-search filters become request wheres: a bad one is a one-line
    TextSearchError, never a hang or a leak."""
    search = DBTextSearch(searcher, ["notes"])
    ctx = searcher.context(user_id=who[0], team_id=who[1])
    start = time.monotonic()
    try:
        filt = TextSearchFilter().where(field, op, value)
        records = await search.get_records(
            "notes", {"top": 20, "filter": filt}, ctx=ctx)
    except (TextSearchError, ValueError) as exc:
        assert "\n" not in str(exc)
        assert time.monotonic() - start <= TIMEOUT + SLACK
        return
    assert time.monotonic() - start <= TIMEOUT + SLACK
    allowed = visible_notes(who[0] or None, who[1] or None)
    async for record in records.results:
        assert record["id"] in allowed


@given(query=questions, where=st.lists(wheres, max_size=2), who=st.sampled_from(IDENTITIES))
async def test_mcp_db_search_arguments(searcher: Searcher, query: str,
                                       where: list[dict[str, Any]],
                                       who: tuple[str | None, str | None]) -> None:
    tools = SearchTools(searcher)
    tools.context = lambda: searcher.context(user_id=who[0], team_id=who[1])  # type: ignore[method-assign]
    start = time.monotonic()
    out = await tools.db_search(query=query[:200] or "notes", wheres=where)
    result = Result.model_validate(out)
    check(result, *who, time.monotonic() - start)


def test_the_tenant_fixture_has_private_rows_of_two_teams(tmp_path: Path) -> None:
    """The invariants above mean something only if there is something to hide."""
    teams = {r["__yao_team_id"] for r in NOTE_ROWS if not r["public"]}
    assert teams == {"t1", "t2"}
    assert visible_notes(None, None) < visible_notes("u1", "t1")
