"""Issue 35, item 2: values looked up at question time (columns too big to index) come
only from rows everyone may see — the value index's own rule. A private or soft-deleted
row's value is never offered to a generator (an LLM would see it in the schemas, and the
parser would place it as a known value), whoever asks and however the question names it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from agent_search.config import SearchConfig
from agent_search.context import Context
from agent_search.db import DBHandler, create_handler
from agent_search.query.dsl import ModelSchema
from agent_search.types import Request
from tests.support.tenants import NOTE_ROWS, create_tenant_db

pytestmark = pytest.mark.anyio

EXTRA = [{"id": 100 + i, "title": title, "public": True, "share": "private",
          "__yao_created_by": "u3", "__yao_team_id": "t2"}
         for i, title in enumerate(["public agenda", "public roadmap"])]
"""More public titles than the index takes (``value_index_max`` 1): looked up instead."""
PRIVATE = [r["title"] for r in NOTE_ROWS if not r["public"] or r["deleted_at"] is not None]
PUBLIC = [r["title"] for r in [*NOTE_ROWS, *EXTRA]
          if r["public"] and r.get("deleted_at") is None]


class Recorder:
    """A generator that keeps the schemas it is shown and asks for every note."""

    name = "recorder"

    def __init__(self) -> None:
        self.seen: list[Sequence[ModelSchema]] = []

    async def generate(self, query: str, schemas: Sequence[ModelSchema], *,
                       feedback: str | None = None) -> dict[str, Any]:
        self.seen.append(schemas)
        return {"model": "notes"}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture(scope="module")
async def notes(tmp_path_factory: pytest.TempPathFactory,
                recorder: Recorder) -> AsyncIterator[DBHandler]:
    base = tmp_path_factory.mktemp("lookup-tenants")
    db = create_tenant_db(Path(base) / "tenants.db")
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:
        conn.execute(sa.Table("notes", sa.MetaData(), autoload_with=conn).insert(), EXTRA)
    engine.dispose()
    config = SearchConfig(home=Path(base) / "home",
                          db={"url": f"sqlite:///{db}", "value_index_max": 1,
                              "match_by_meaning": False},
                          uses={"query": "recorder"})
    handler = create_handler(config, generators={"recorder": recorder})
    yield handler
    await handler.aclose()


def _title_values(schemas: Sequence[ModelSchema]) -> list[str]:
    notes = next(s for s in schemas if s.id == "notes")
    field = notes.field("title")
    assert field is not None
    return field.values


@pytest.mark.parametrize("who", [("u1", "t1"), ("u2", "t1"), ("u3", "t2"), (None, None)])
@pytest.mark.parametrize("title", [*PRIVATE, *PUBLIC])
async def test_only_values_everyone_may_see_are_looked_up(
        notes: DBHandler, recorder: Recorder, who: tuple[str | None, str | None],
        title: str) -> None:
    ctx = Context(config=notes.config, user_id=who[0], team_id=who[1])
    result = await notes.search(ctx, Request(type="db", query=f"the note {title}",
                                             models=["notes"]))
    assert result.error is None, result.error
    entry = notes.catalog.find("notes")
    assert entry is not None and "title" in entry.looked_up  # too big to index (cap 1)
    offered = _title_values(recorder.seen[-1])
    assert offered == ([title] if title in PUBLIC else []), (who, title, offered)
