"""Issue 35, item 2: conditions against a computed value, and negation across relations,
hold tenancy.

``{"field": "amount", "op": ">", "value": {"aggregate": "avg(amount)"}}`` is compiled to a
scalar subquery over the rows the caller may search: the permission and soft-delete
filters and the preset filters sit *inside* it, so another tenant's private rows never
move the average another caller compares with (u3 sees notes 4 and 5: the average is 45;
over every row it would be 35, and note 4 would come back as "above average").

``count(dogs) = 0`` ("owners who have no dogs") counts only the dogs the caller may see:
an owner whose only dog is another tenant's private row has none for this caller, and a
row of another tenant never makes an owner "have" one. Each expected set below is
computed in Python from the documented visibility rule, for every identity.
"""

from __future__ import annotations

import operator
import statistics
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from agent_search.config import SearchConfig
from agent_search.context import Context
from agent_search.db import DBHandler, create_handler
from agent_search.types import QueryWhere, Request, Result
from tests.support.tenants import NOTE_ROWS, create_tenant_db, tenant_handler, visible_notes

pytestmark = pytest.mark.anyio

IDENTITIES: list[tuple[str | None, str | None]] = [("u1", "t1"), ("u2", "t1"),
                                                    ("u3", "t2"), (None, None)]
OPS: dict[str, Callable[[Any, Any], bool]] = {
    ">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le,
    "=": operator.eq, "!=": operator.ne}
FUNCTIONS: dict[str, Callable[[list[int]], float]] = {
    "avg": statistics.fmean, "min": min, "max": max, "sum": sum, "count": len}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def notes(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DBHandler]:
    base = tmp_path_factory.mktemp("computed")
    handler = tenant_handler(create_tenant_db(base / "tenants.db"), base / "home")
    yield handler
    await handler.aclose()


async def _search(handler: DBHandler, who: tuple[str | None, str | None], model: str,
                  conditions: list[QueryWhere], **request: Any) -> Result:
    ctx = Context(config=handler.config, user_id=who[0], team_id=who[1])
    dsl = {"model": model, "wheres": [w.to_json() for w in conditions]}
    return await handler.search(ctx, Request(type="db", query="x", models=[model], limit=50,
                                             options={"dsl": dsl}, **request))


def _ids(result: Result) -> set[Any]:
    assert result.error is None, result.error
    return {i.record_id for i in result.items}


@pytest.mark.parametrize("who", IDENTITIES)
@pytest.mark.parametrize("fn", sorted(FUNCTIONS))
@pytest.mark.parametrize("op", sorted(OPS))
async def test_a_computed_value_is_computed_over_the_callers_rows_only(
        notes: DBHandler, who: tuple[str | None, str | None], fn: str, op: str) -> None:
    visible = visible_notes(*who)
    amounts = [r["amount"] for r in NOTE_ROWS if r["id"] in visible]
    written = "count" if fn == "count" else f"{fn}(amount)"
    where = QueryWhere(field="amount", op=op, value={"aggregate": written})
    result = await _search(notes, who, "notes", [where])
    value = FUNCTIONS[fn](amounts) if amounts else None
    expected = {r["id"] for r in NOTE_ROWS if r["id"] in visible and value is not None
                and OPS[op](r["amount"], value)}
    assert _ids(result) == expected, (who, written, op, value)


async def test_another_tenants_rows_do_not_move_the_average(notes: DBHandler) -> None:
    where = QueryWhere(field="amount", op=">", value={"aggregate": "avg(amount)"})
    # u3 sees 40 (own) and 50 (public): average 45; over every row it would be 35
    assert _ids(await _search(notes, ("u3", "t2"), "notes", [where])) == {5}


async def test_the_preset_filters_bound_the_computed_value_too(notes: DBHandler) -> None:
    """A hook's filter (``request.wheres``) scopes the search: the average is the scoped
    rows' average (u1 sees 10, 30 and 50; with ``amount <= 30`` the rows 10 and 30,
    average 20), not the table's (30, which no scoped row exceeds)."""
    above = QueryWhere(field="amount", op=">", value={"aggregate": "avg(amount)"})
    scoped = await _search(notes, ("u1", "t1"), "notes", [above],
                           wheres=[QueryWhere(field="amount", op="<=", value=30)])
    assert _ids(scoped) == {3}
    assert _ids(await _search(notes, ("u1", "t1"), "notes", [above])) == {5}


@pytest.mark.parametrize("value", [
    {"aggregate": "avg(__yao_created_by)"}, {"aggregate": "max(public)"},
    {"aggregate": "count(distinct share)"}])
async def test_a_computed_value_over_a_permission_column_is_refused(
        notes: DBHandler, value: dict[str, str]) -> None:
    where = QueryWhere(field="amount", op=">", value=value)
    result = await _search(notes, ("u1", "t1"), "notes", [where])
    assert result.error is not None and result.items == []
    assert "permission column" in result.error or "numeric" in result.error, result.error


# -- negation across relations: owners who have no dogs ------------------------------------

OWNERS = [{"id": 1, "name": "Ann"}, {"id": 2, "name": "Bob"}, {"id": 3, "name": "Cat"},
          {"id": 4, "name": "Dan"}]
DOGS: list[dict[str, Any]] = [
    # Ann: one public dog; Bob: only u2's private dog; Cat: u1's team dog and u3's
    # private one; Dan: none
    {"id": 1, "owner_id": 1, "name": "Rex", "__yao_created_by": "u3",
     "__yao_team_id": "t2", "public": True, "share": "private"},
    {"id": 2, "owner_id": 2, "name": "Fido", "__yao_created_by": "u2",
     "__yao_team_id": "t1", "public": False, "share": "private"},
    {"id": 3, "owner_id": 3, "name": "Spot", "__yao_created_by": "u2",
     "__yao_team_id": "t1", "public": False, "share": "team"},
    {"id": 4, "owner_id": 3, "name": "Bolt", "__yao_created_by": "u3",
     "__yao_team_id": "t2", "public": False, "share": "private"},
]


def _sees_dog(dog: dict[str, Any], user: str | None, team: str | None) -> bool:
    return bool(dog["public"] or (user and dog["__yao_created_by"] == user)
                or (team and dog["__yao_team_id"] == team and dog["share"] == "team"))


def _dogs_db(path: Path) -> Path:
    meta = sa.MetaData()
    owners = sa.Table("owners", meta, sa.Column("id", sa.Integer, primary_key=True),
                      sa.Column("name", sa.String(40)))
    dogs = sa.Table("dogs", meta, sa.Column("id", sa.Integer, primary_key=True),
                    sa.Column("owner_id", sa.Integer, sa.ForeignKey("owners.id")),
                    sa.Column("name", sa.String(40)),
                    sa.Column("__yao_created_by", sa.String(40)),
                    sa.Column("__yao_team_id", sa.String(40)),
                    sa.Column("public", sa.Boolean), sa.Column("share", sa.String(10)))
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        meta.create_all(conn)
        conn.execute(owners.insert(), OWNERS)
        conn.execute(dogs.insert(), DOGS)
    engine.dispose()
    return path


@pytest.fixture(scope="module")
async def kennel(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DBHandler]:
    base = tmp_path_factory.mktemp("kennel")
    config = SearchConfig(home=base / "home",
                          db={"url": f"sqlite:///{_dogs_db(base / 'dogs.db')}"})
    handler = create_handler(config)
    yield handler
    await handler.aclose()


@pytest.mark.parametrize("who", IDENTITIES)
@pytest.mark.parametrize(("op", "n"), [("=", 0), ("!=", 0), (">=", 1), ("<", 2), (">", 1)])
async def test_count_of_a_relation_counts_only_the_callers_rows(
        kennel: DBHandler, who: tuple[str | None, str | None], op: str, n: int) -> None:
    where = QueryWhere(field="count(dogs)", op=op, value=n)
    result = await _search(kennel, who, "owners", [where])
    seen = {o["id"]: sum(1 for d in DOGS if d["owner_id"] == o["id"] and _sees_dog(d, *who))
            for o in OWNERS}
    assert _ids(result) == {o for o, count in seen.items() if OPS[op](count, n)}, who


async def test_an_owner_whose_only_dog_is_private_to_another_has_none(
        kennel: DBHandler) -> None:
    none = QueryWhere(field="count(dogs)", op="=", value=0)
    # Bob's only dog is u2's private one: for u1 (same team, not shared) Bob has none
    assert _ids(await _search(kennel, ("u1", "t1"), "owners", [none])) == {2, 4}
    assert _ids(await _search(kennel, ("u2", "t1"), "owners", [none])) == {4}
    # u3's private Bolt does not make Cat an owner for anyone but u3 and u1's team
    assert _ids(await _search(kennel, (None, None), "owners", [none])) == {2, 3, 4}
