"""DBTextSearch over the real db handler (SQLAlchemy on a SQLite file of the test's own)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent_search import SearchConfig, Searcher
from agent_search.textsearch import (
    DBTextSearch,
    TextSearchError,
    create_search_function,
    equal_to,
    where,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
async def searcher(tmp_path: Path) -> Searcher:
    from agent_search.db import create_handler

    db = tmp_path / "music.db"
    with sqlite3.connect(db) as conn:
        conn.execute("create table artists (ArtistId integer primary key, Name text, "
                     "Country text)")
        conn.executemany("insert into artists values (?, ?, ?)",
                         [(1, "AC/DC", "Australia"), (2, "Accept", "Germany"),
                          (3, "Aerosmith", "USA"), (4, "Scorpions", "Germany")])
    config = SearchConfig(home=tmp_path / "home", db={"url": f"sqlite:///{db}"})
    s = Searcher(config)
    s.registry.register(create_handler(config))
    return s


async def test_db_text_search_filters_become_bound_conditions(searcher: Searcher) -> None:
    db = DBTextSearch(searcher, ["artists"])
    try:
        rows = await db.get_records("artists", {"top": 10, "filter": equal_to("Country",
                                                                              "Germany")})
        assert sorted(r["Name"] for r in rows.items) == ["Accept", "Scorpions"]

        hostile = await db.get_records("artists", {
            "filter": equal_to("Name", "x' OR '1'='1")})
        assert hostile.items == []  # a value, bound as a parameter: matches nothing

        with pytest.raises(TextSearchError, match="Nope"):
            await db.search("artists", {"filter": where("Nope", "=", 1)})

        fn = create_search_function(db, output_type="text_search_result")
        out = await fn.invoke({"query": "artists named Accept", "count": 5},
                              searcher.context())
        assert [(r["name"], r["link"], r["citation_id"]) for r in out] == [
            ("Accept", "artists/2", "1")]
    finally:
        await searcher.aclose()
