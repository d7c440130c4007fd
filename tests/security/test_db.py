"""Database regressions of issue 11 (items 1, 2, 7, 8, 13): one test per hole, each seen
failing before its fix. The database is tests/support/tenants.py: private rows of three users
in two teams, an integer-owner table and a soft-deleted row."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_search.context import Context
from agent_search.db import DBHandler
from agent_search.errors import ConfigError
from agent_search.types import QueryWhere, Request, Result

from ..support.data import build_chinook
from ..support.tenants import (
    NOTE_ROWS,
    create_tenant_db,
    note_definition,
    tenant_handler,
    visible_notes,
    write_model,
)

pytestmark = pytest.mark.anyio

SECRETS = [r["body"] for r in NOTE_ROWS if r["body"].startswith("SECRET")]


@pytest.fixture(scope="module")
def tenant_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One database for the module: searches only read it."""
    return create_tenant_db(tmp_path_factory.mktemp("tenants") / "tenants.db")


@pytest.fixture(scope="module")
async def reflected(tenant_db: Path,
                    tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DBHandler]:
    """A handler on the reflected tables (no definitions), shared by the module."""
    handler = tenant_handler(tenant_db, tmp_path_factory.mktemp("home"))
    yield handler
    await handler.aclose()


async def search(handler: DBHandler, user: str | None = None, team: str | None = None,
                 **request: Any) -> Result:
    request.setdefault("query", "notes")
    request.setdefault("limit", 50)
    ctx = Context(config=handler.config, user_id=user, team_id=team)
    return await handler.search(ctx, Request(type="db", **request))


def ids(result: Result) -> set[Any]:
    assert result.error is None, result.error
    return {i.record_id for i in result.items}


async def ordinary_seconds(handler: DBHandler) -> float:
    """How long an ordinary question takes here, now: the yardstick for "fast" below, so
    a loaded machine makes both slower instead of failing the test (the slowest of 3)."""
    times = []
    for _ in range(3):
        start = time.monotonic()
        await search(handler, "u1", "t1", query="notes with amount over 5", models=["notes"])
        times.append(time.monotonic() - start)
    return max(times)


def fast(elapsed: float, ordinary: float) -> bool:
    """Refused as an ordinary question is answered: a hang or a runaway conversion of a
    huge number takes seconds, far beyond 1 s and 20 ordinary questions."""
    return elapsed < max(1.0, 20 * ordinary)


def text_of(result: Result) -> str:
    return " ".join(f"{i.title} {i.content} {i.data}" for i in result.items)


# -- item 1: the permission columns come from the real table ---------------------------


async def test_definition_without_share_does_not_show_a_teammates_private_row(
        tenant_db: Path, tmp_path: Path) -> None:
    """``permission: true`` adds the owner/team columns but not ``share``: a teammate's
    private note must stay private (the real table has ``share``)."""
    cfg = tmp_path / "config"
    write_model(cfg, "note.mod.yao", note_definition(permission=True))
    handler = tenant_handler(tenant_db, tmp_path / "home", cfg)
    got = ids(await search(handler, "u1", "t1", models=["note"], options={"generate": False}))
    assert got == visible_notes("u1", "t1")
    assert 2 not in got  # u2's private diary


@pytest.mark.parametrize(("user", "team"), [("u1", "t1"), ("u3", "t2"), (None, None)])
async def test_definition_listing_no_permission_columns_is_completed(
        tenant_db: Path, tmp_path: Path, user: str | None, team: str | None) -> None:
    cfg = tmp_path / "config"
    write_model(cfg, "note.mod.yao", note_definition())
    handler = tenant_handler(tenant_db, tmp_path / "home", cfg)
    got = ids(await search(handler, user, team, models=["note"], options={"generate": False}))
    assert got == visible_notes(user, team)


@pytest.mark.parametrize("defined", [True, False])
async def test_value_index_never_offers_a_private_rows_value(
        tenant_db: Path, tmp_path: Path, defined: bool) -> None:
    """"gamma" is the category of u2's private note only: an anonymous question about it
    finds nothing and shows no secret."""
    cfg = tmp_path / "config"
    if defined:
        write_model(cfg, "note.mod.yao", note_definition())
    handler = tenant_handler(tenant_db, tmp_path / "home", cfg)
    model = "note" if defined else "notes"
    result = await search(handler, query="notes in category gamma", models=[model])
    assert result.error is None, result.error
    assert not any(s in text_of(result) for s in SECRETS)
    assert ids(result) <= visible_notes(None, None)
    entry = handler.catalog.find(model)
    assert entry is not None
    values = await handler.catalog.values(entry)
    assert "gamma" not in values.get("category", [])
    assert "delta" not in values.get("category", [])


# -- item 2: numbers from outside are bounded before conversion ------------------------


HUGE = ["1e999999", "-1e700000", "9" * 5000, "1" + "0" * 400, "1e-999999", "0x10",
        "1_000", "١٢", "nan", "Infinity", " 1e40 "]


@pytest.mark.parametrize("value", HUGE)
@pytest.mark.parametrize("field", ["amount", "price", "created_at", "id"])
async def test_a_huge_number_in_a_where_is_refused_fast(
        reflected: DBHandler, value: str, field: str) -> None:
    start = time.monotonic()
    result = await search(reflected, "u1", "t1", models=["notes"],
                          wheres=[QueryWhere(field=field, op=">", value=value)])
    assert fast(time.monotonic() - start, await ordinary_seconds(reflected))
    assert result.error is not None
    assert field in result.error and "\n" not in result.error


@pytest.mark.parametrize("value", ["1e999999", 10 ** 40, "٣", 2.5])
async def test_a_count_condition_is_bounded_too(reflected: DBHandler, value: Any) -> None:
    start = time.monotonic()
    result = await search(reflected, models=["notes"],
                          wheres=[QueryWhere(field="count(comments)", op=">", value=value)])
    assert fast(time.monotonic() - start, await ordinary_seconds(reflected))
    assert result.error is not None and "count(comments)" in result.error


@pytest.mark.parametrize("value", [10 ** 40, -(2 ** 63) - 1, 1e300, float("inf")])
async def test_a_huge_python_number_is_refused(reflected: DBHandler,
                                               value: Any) -> None:
    result = await search(reflected, models=["notes"],
                          wheres=[QueryWhere(field="amount", op="=", value=value)])
    assert result.error is not None and "amount" in result.error


async def test_an_explicit_dsl_with_a_huge_number_is_refused_fast(
        reflected: DBHandler) -> None:
    dsl = {"model": "notes", "wheres": [{"field": "amount", "op": "in",
                                         "value": ["1", "1e999999"]}]}
    start = time.monotonic()
    result = await search(reflected, models=["notes"], options={"dsl": dsl})
    assert fast(time.monotonic() - start, await ordinary_seconds(reflected))
    assert result.error is not None and "amount" in result.error


@pytest.mark.parametrize("query", [
    "notes with amount over " + "9" * 3000,
    "notes with amount between 1e999999 and " + "9" * 400,
    "notes created in the last 9999 years",
    "notes created after 2024-13-45",
    "notes created in 9999",
    "notes with price under $" + "9" * 400 + "." + "9" * 400,
])
async def test_numbers_and_dates_in_a_question_never_hang_or_crash(
        reflected: DBHandler, query: str) -> None:
    start = time.monotonic()
    result = await search(reflected, "u1", "t1", query=query, models=["notes"])
    assert fast(time.monotonic() - start, await ordinary_seconds(reflected))
    assert result.error is None or "failed" not in result.error, result.error
    assert ids(result) <= visible_notes("u1", "t1") if result.error is None else True


# -- item 7: identities compare in one canonical form -----------------------------------


@pytest.mark.parametrize("alias", ["01", " 1 ", "١", "𝟏", "1\n", "+1", "1.0", "1e0"])
async def test_an_integer_owner_column_matches_only_the_canonical_id(
        reflected: DBHandler, alias: str) -> None:
    got = ids(await search(reflected, alias, None, query="members", models=["members"],
                           options={"generate": False}))
    assert got == {3}  # the public member only


async def test_an_underscored_id_does_not_alias_another_user(
        reflected: DBHandler) -> None:
    got = ids(await search(reflected, "1_2", None, query="members", models=["members"],
                           options={"generate": False}))
    assert got == {3}


async def test_the_canonical_id_still_matches(reflected: DBHandler) -> None:
    for user, want in (("1", {1, 3}), ("12", {2, 3})):
        got = ids(await search(reflected, user, None, query="members", models=["members"],
                               options={"generate": False}))
        assert got == want


# -- item 8: two definitions of one table -------------------------------------------------


def test_two_definitions_of_one_table_are_a_config_error_naming_both(
        tenant_db: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "config"
    first = write_model(cfg, "note.mod.yao", note_definition())
    second = write_model(cfg, "shop/memo.mod.yao", note_definition())
    with pytest.raises(ConfigError) as info:
        tenant_handler(tenant_db, tmp_path / "home", cfg)
    message = str(info.value)
    assert str(first) in message and str(second) in message
    assert "notes" in message


# -- item 13: permission columns are not selectable; soft-deleted rows are hidden --------


@pytest.mark.parametrize("defined", [True, False])
async def test_permission_columns_are_never_selected(tenant_db: Path, tmp_path: Path,
                                                     defined: bool) -> None:
    cfg = tmp_path / "config"
    if defined:
        write_model(cfg, "note.mod.yao", note_definition(permission=True))
    handler = tenant_handler(tenant_db, tmp_path / "home", cfg)
    result = await search(handler, "u1", "t1", models=["note" if defined else "notes"],
                          select=["__yao_created_by", "__yao_team_id", "title"],
                          options={"generate": False})
    assert ids(result) == visible_notes("u1", "t1")
    for item in result.items:
        assert not any(k.lower().startswith("__yao_") for k in item.data or {})
        assert "u2" not in (item.content or "") and "u3" not in (item.content or "")
    assert any("__yao_created_by" in w for w in result.warnings)


async def test_owner_columns_are_no_oracle_on_public_rows(reflected: DBHandler) -> None:
    """Filtering public rows by someone else's owner id would tell who owns them."""
    result = await search(reflected, "u1", "t1", models=["notes"],
                          wheres=[QueryWhere(field="__yao_created_by", value="u3")],
                          options={"generate": False})
    assert ids(result) == set()
    mine = await search(reflected, "u1", "t1", models=["notes"],
                        wheres=[QueryWhere(field="__yao_created_by", value="u1")],
                        options={"generate": False})
    assert ids(mine) == {1}


async def test_ordering_by_an_owner_column_is_refused(reflected: DBHandler) -> None:
    dsl = {"model": "notes", "orders": [{"field": "__yao_created_by", "order": "asc"}]}
    result = await search(reflected, "u1", "t1", models=["notes"], options={"dsl": dsl})
    assert result.error is not None and "__yao_created_by" in result.error


@pytest.mark.parametrize("defined", [True, False])
@pytest.mark.parametrize(("user", "team"), [("u1", "t1"), (None, None)])
async def test_soft_deleted_rows_are_hidden(tenant_db: Path, tmp_path: Path, defined: bool,
                                            user: str | None, team: str | None) -> None:
    cfg = tmp_path / "config"
    if defined:
        write_model(cfg, "note.mod.yao", note_definition())
    handler = tenant_handler(tenant_db, tmp_path / "home", cfg)
    result = await search(handler, user, team, models=["note" if defined else "notes"],
                          options={"generate": False})
    assert 6 not in ids(result)


async def test_soft_deleted_rows_are_hidden_in_relation_subqueries(
        reflected: DBHandler) -> None:
    dsl = {"model": "comments", "wheres": [{"field": "note.category", "op": "=",
                                            "value": "alpha"}]}
    result = await search(reflected, "u1", "t1", models=["comments"], options={"dsl": dsl})
    assert ids(result) == {2}
    listing = await search(reflected, "u1", "t1", query="comments", models=["comments"],
                           options={"generate": False})
    removed = next(i for i in listing.items if i.record_id == 1)
    assert "public removed" not in (removed.content or "")


# -- issue 12: one word read as a condition is no relevant answer ------------------------

_CHINOOK_MODELS = ["Album", "Artist", "Track", "Genre", "MediaType", "Playlist", "Customer",
                   "Employee", "Invoice"]


@pytest.fixture(scope="module")
async def chinook(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DBHandler]:
    from agent_search.config import SearchConfig
    from agent_search.db import create_handler

    root = tmp_path_factory.mktemp("chinook")
    copy = build_chinook(root / "chinook.sqlite")
    handler = create_handler(SearchConfig(home=root / "home", db={"url": f"sqlite:///{copy}"}))
    yield handler
    await handler.aclose()


@pytest.mark.parametrize("question", [
    "Who won the football world cup in 2014?",  # the genre World; "2014" vanished unwarned
    "What are the best beaches to visit in Portugal?",  # customers in Portugal
    "Do I need a visa to travel from Canada to Japan?",  # customers in Canada
    "What is the cheapest way to get from the airport to central Rome?",  # Rome invoices
    "Jazz tracks by Zorro Quixote",  # every Jazz track, the artist asked for not understood
])
async def test_a_reading_of_one_word_is_never_scored_as_relevant(chinook: DBHandler,
                                                                 question: str) -> None:
    from agent_search.config import DEFAULT_MIN_SCORE

    ctx = Context(config=chinook.config)
    r = await chinook.search(ctx, Request(type="db", query=question, limit=10,
                                          models=_CHINOOK_MODELS, min_score=0))
    assert r.error is None
    assert all(i.score < DEFAULT_MIN_SCORE["db"] for i in r.items), (
        [(i.title, i.score) for i in r.items[:3]], r.warnings)
    assert any("not understood" in w or "nothing matched" in w for w in r.warnings)
