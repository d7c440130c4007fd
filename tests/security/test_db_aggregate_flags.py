"""Issue 32, item 4: aggregates over permission columns.

``group_by``, aggregates and ``having`` accepted ``public`` / ``share`` — directly and
through a relation (``note.share`` on a comment) — because the aggregate builder checked
the column by name without its model, and only ``__yao_*`` names are permission columns
without one. ``group_by [title, share]`` told another tenant how each public row was
shared. Now every column a caller names in an aggregate goes through the one check of the
entry it belongs to (:func:`agent_search.db._builder.caller_column`): a permission column
is a clear error, and no answer row ever carries one, whichever DSL path named it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_search.context import Context
from agent_search.db import DBHandler
from agent_search.types import Request, Result

from ..support.tenants import create_tenant_db, tenant_handler

pytestmark = pytest.mark.anyio

FLAGS = ("public", "share", "PUBLIC", "Share", "__yao_created_by", "__yao_team_id")
NOTE_FIELDS = ("title", "category", "amount", "price")
IDENTITIES = [("u1", "t1"), ("u3", "t2"), (None, None)]


@pytest.fixture(scope="module")
async def handler(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DBHandler]:
    base = tmp_path_factory.mktemp("aggflags")
    h = tenant_handler(create_tenant_db(base / "tenants.db"), base / "home")
    yield h
    await h.aclose()


async def _aggregate(handler: DBHandler, model: str, dsl: dict[str, Any],
                     who: tuple[str | None, str | None]) -> Result:
    ctx = Context(config=handler.config, user_id=who[0], team_id=who[1])
    return await handler.search(ctx, Request(type="db", query="x", models=[model],
                                             options={"dsl": {"model": model, **dsl}}))


def _no_flag_anywhere(result: Result) -> None:
    for item in result.items:
        keys = {k.lower().rpartition(".")[2] for k in item.data or {}}
        assert not keys & {"public", "share"}, item.data
        assert not any(k.startswith("__yao_") for k in keys), item.data


@pytest.mark.parametrize(("model", "dsl"), [
    ("notes", {"group_by": ["title", "share"], "aggregates": ["count"]}),
    ("notes", {"group_by": ["public"], "aggregates": ["count"]}),
    ("notes", {"aggregates": ["count(distinct share)"]}),
    ("notes", {"aggregates": ["max(public)"]}),
    ("notes", {"group_by": ["title"], "aggregates": ["count"],
               "having": [{"aggregate": "count(share)", "op": ">", "value": 0}]}),
    ("comments", {"group_by": ["note.share"], "aggregates": ["count"]}),
    ("comments", {"group_by": ["note.title", "note.public"], "aggregates": ["count"]}),
])
async def test_a_permission_column_is_refused_in_every_aggregate_part(
        handler: DBHandler, model: str, dsl: dict[str, Any]) -> None:
    result = await _aggregate(handler, model, dsl, ("u1", "t1"))
    assert result.error is not None and "permission column" in result.error, result.error
    assert result.items == []


group_field = st.one_of(st.sampled_from(NOTE_FIELDS), st.sampled_from(FLAGS))
aggregate = st.one_of(
    st.just("count"),
    st.builds(lambda fn, f: f"{fn}({f})", st.sampled_from(["count", "max", "min"]),
              group_field),
    st.builds(lambda f: f"count(distinct {f})", group_field))


@settings(max_examples=60, deadline=None)
@given(groups=st.lists(group_field, min_size=0, max_size=3, unique=True),
       aggregates=st.lists(aggregate, min_size=1, max_size=3, unique=True),
       having=st.lists(aggregate, max_size=1), via_relation=st.booleans(),
       who=st.sampled_from(IDENTITIES))
async def test_no_aggregate_path_reveals_a_permission_column(
        handler: DBHandler, groups: list[str], aggregates: list[str], having: list[str],
        via_relation: bool, who: tuple[str | None, str | None]) -> None:
    """Any mix of own and related groups, aggregates and havings: either refused, naming
    the permission column, or answered without one."""
    model = "comments" if via_relation else "notes"
    dsl: dict[str, Any] = {
        "group_by": [f"note.{g}" for g in groups] if via_relation else groups,
        "aggregates": ["count"] if via_relation else aggregates,
        "having": [] if via_relation else [{"aggregate": h, "op": ">=", "value": 0}
                                           for h in having]}
    named = [*groups, *([] if via_relation else [*aggregates, *having])]
    result = await _aggregate(handler, model, dsl, who)
    if any(flag.lower() in part.lower() for part in named for flag in FLAGS):
        assert result.error is not None and "permission column" in result.error, (
            dsl, result.error)
        assert result.items == []
    _no_flag_anywhere(result)
