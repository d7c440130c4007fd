"""The db handler on reflected Chinook and the defined sample shop, on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_search import Searcher
from agent_search.config import SearchConfig
from agent_search.context import Context
from agent_search.db import DBHandler
from agent_search.types import QueryOrder, QueryWhere, Request
from tests.support.databases import make_handler

pytestmark = pytest.mark.anyio


def req(query: str, **kw: Any) -> Request:
    kw.setdefault("limit", 10)
    return Request(type="db", query=query, **kw)


def ctx_for(handler: DBHandler, **kw: Any) -> Context:
    return Context(config=handler.config, **kw)


async def test_a_table_pointing_twice_at_one_table_is_named_by_its_first_column(
        tmp_path: Path) -> None:
    """A link of members to members (member, then the member they follow): the plain
    reverse relation goes through the first column, whose rows the link is about, however
    the columns sort by name."""
    import sqlite3
    path = tmp_path / "links.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "CREATE TABLE member (id INTEGER PRIMARY KEY, name TEXT);"
            "CREATE TABLE follow (who_id INTEGER REFERENCES member(id),"
            " followed_id INTEGER REFERENCES member(id), PRIMARY KEY (who_id, followed_id));")
    handler = make_handler(f"sqlite:///{path}", tmp_path)
    try:
        await handler.catalog.load()
        member = handler.catalog.find("member")
        assert member is not None
        rels = {r.name: r.key for r in member.schema.relations if r.type == "hasMany"}
        assert rels == {"follows": "who_id", "follows2": "followed_id"}
    finally:
        await handler.aclose()


async def test_reflection_finds_tables_keys_and_relations(chinook: DBHandler) -> None:
    await chinook.catalog.load()
    ids = sorted(chinook.catalog.ids())
    assert ids == sorted(["Album", "Artist", "Customer", "Employee", "Genre", "Invoice",
                          "InvoiceLine", "MediaType", "Playlist", "PlaylistTrack", "Track"])
    track = chinook.catalog.find("track")
    assert track is not None and track.id == "Track"
    assert track.primary_key == ["TrackId"]
    rels = {r.name: (r.type, r.model, r.key, r.foreign) for r in track.schema.relations}
    assert rels["genre"] == ("hasOne", "Genre", "GenreId", "GenreId")
    assert rels["album"] == ("hasOne", "Album", "AlbumId", "AlbumId")
    assert rels["invoicelines"][0] == "hasMany"
    ms = track.schema.field("Milliseconds")
    assert ms is not None and ms.kind == "integer" and ms.unit == "ms"
    price = track.schema.field("unitprice")
    assert price is not None and price.kind == "number"
    # composite primary key
    pt = chinook.catalog.find("PlaylistTrack")
    assert pt is not None and pt.primary_key == ["PlaylistId", "TrackId"]


async def test_explicit_dsl_with_relation_and_items(chinook: DBHandler) -> None:
    dsl = {"model": "Album", "wheres": [{"field": "artist.Name", "op": "=", "value": "AC/DC"}],
           "orders": [{"field": "Title", "order": "asc"}]}
    r = await chinook.search(ctx_for(chinook), req("albums", models=["Album"],
                                                   options={"dsl": dsl}))
    assert r.error is None
    assert [i.title for i in r.items] == ["For Those About To Rock We Salute You",
                                          "Let There Be Rock"]
    first = r.items[0]
    assert first.type == "db" and first.model == "Album" and first.record_id == 1
    assert first.data == {"AlbumId": 1, "Title": "For Those About To Rock We Salute You",
                          "ArtistId": 1}
    assert first.metadata["related"] == {"artist": "AC/DC"}
    assert "artist: AC/DC" in first.content
    assert r.total == 2
    assert r.dsl is not None and r.dsl["generator"] == "explicit"
    assert r.dsl["queries"][0]["wheres"] == dsl["wheres"]
    # handlers never set citation ids, source or weight
    assert first.citation_id is None and first.source is None and first.weight is None


async def test_scores_are_absolute_not_positional(chinook: DBHandler) -> None:
    """Every row satisfying an exactly understood query scores 1.0, whatever its
    position; the same row scores the same in a longer or shorter list."""
    r = await chinook.search(ctx_for(chinook), req("tracks in the Jazz genre",
                                                   models=["Track"], limit=10))
    assert r.error is None and len(r.items) == 10
    assert {i.score for i in r.items} == {1.0}
    short = await chinook.search(ctx_for(chinook), req("tracks in the Jazz genre",
                                                       models=["Track"], limit=2))
    assert [i.score for i in short.items] == [i.score for i in r.items[:2]]


async def test_total_counts_all_matches_beyond_limit(chinook: DBHandler) -> None:
    r = await chinook.search(ctx_for(chinook), req("rock tracks", models=["Track"], limit=5))
    assert r.error is None and len(r.items) == 5
    assert r.total == 1297  # Spider pair 34: tracks of the Rock genre


async def test_request_wheres_are_preset_and_anded_first(chinook: DBHandler) -> None:
    r = await chinook.search(ctx_for(chinook), req(
        "tracks in the Jazz genre", models=["Track"],
        wheres=[QueryWhere(field="Milliseconds", op="<", value=200000)],
        orders=[QueryOrder(field="Milliseconds", order="asc")]))
    assert r.error is None and r.items
    assert all(i.data is not None and i.data["Milliseconds"] < 200000 for i in r.items)
    ms = [i.data["Milliseconds"] for i in r.items if i.data]
    assert ms == sorted(ms)
    wheres = r.dsl["queries"][0]["wheres"] if r.dsl else []
    assert wheres[0] == {"field": "Milliseconds", "op": "<", "value": 200000}
    assert {"field": "genre.Name", "op": "=", "value": "Jazz"} in wheres[1:]


async def test_config_preset_wheres_apply_and_skip_models_without_the_field(
        chinook_url: str, tmp_path: Path) -> None:
    handler = make_handler(chinook_url, tmp_path,
                           wheres=[{"field": "Country", "op": "=", "value": "Brazil"}])
    try:
        r = await handler.search(ctx_for(handler), req(
            "everything", models=["Customer", "Track"], options={"generate": False}))
        assert r.error is None
        assert {i.model for i in r.items} == {"Customer"}
        assert all(i.data and i.data["Country"] == "Brazil" for i in r.items)
        assert any("model Track skipped" in w for w in r.warnings)
    finally:
        await handler.aclose()


async def test_select_limits_data_fields(chinook: DBHandler) -> None:
    r = await chinook.search(ctx_for(chinook), req("customers in Germany", models=["Customer"],
                                                   select=["FirstName", "City", "nope"]))
    assert r.error is None and r.items
    assert set(r.items[0].data or {}) == {"FirstName", "City"}
    assert r.items[0].title == "Leonie Köhler"  # title still built from name fields
    assert any("unknown select field 'nope'" in w for w in r.warnings)


async def test_unknown_model_errors_and_partial_list_warns(chinook: DBHandler) -> None:
    r = await chinook.search(ctx_for(chinook), req("x", models=["nosuch"]))
    assert r.error is not None and "unknown model 'nosuch'" in r.error and "Album" in r.error
    assert r.items == []
    r = await chinook.search(ctx_for(chinook), req("genres", models=["Genre", "nosuch"]))
    assert r.error is None and len(r.items) == 10
    assert any("'nosuch'" in w and "skipped" in w for w in r.warnings)


async def test_empty_model_list_searches_every_model_with_a_warning(chinook: DBHandler) -> None:
    r = await chinook.search(ctx_for(chinook), req("albums by AC/DC"))
    assert r.error is None
    assert any("no models given" in w for w in r.warnings)
    assert [i.model for i in r.items] == ["Album", "Album"]


async def test_config_models_are_the_default(chinook_url: str, tmp_path: Path) -> None:
    handler = make_handler(chinook_url, tmp_path, models=["Genre"])
    try:
        r = await handler.search(ctx_for(handler), req("Jazz"))
        assert r.error is None and [i.title for i in r.items] == ["Jazz"]
        assert not any("no models given" in w for w in r.warnings)
    finally:
        await handler.aclose()


async def test_limit_is_capped_by_max_results(chinook_url: str, tmp_path: Path) -> None:
    handler = make_handler(chinook_url, tmp_path, max_results=7)
    try:
        r = await handler.search(ctx_for(handler), req("tracks", models=["Track"], limit=50))
        assert r.error is None and len(r.items) == 7 and r.total == 3503
        assert any("capped at 7" in w for w in r.warnings)
    finally:
        await handler.aclose()


async def test_defined_models_by_assistant_id(shop: DBHandler) -> None:
    await shop.catalog.load()
    product = shop.catalog.find("agents.demo.product")
    assert product is not None and product.definition is not None
    assert product.schema.field("price") is not None
    rel = product.schema.relation("orders")
    assert rel is not None and rel.model == "agents.demo.order"
    r = await shop.search(ctx_for(shop), req("audio products under $100",
                                             models=["agents.demo.product"]))
    assert r.error is None and r.items
    for item in r.items:
        assert item.model == "agents.demo.product"
        assert item.data and item.data["category"] == "audio" and item.data["price"] < 100
    assert r.items[0].content  # description column is the content


async def test_through_the_searcher(shop_url: str, tmp_path: Path,
                                    demo_assistant: Path) -> None:
    handler = make_handler(shop_url, tmp_path, assistant_dir=demo_assistant)
    searcher = Searcher(handler.config)
    searcher.registry.register(handler)
    try:
        ctx = searcher.context(user_id="u1", team_id="t1")
        r = await searcher.search({"type": "db", "query": "the 3 cheapest products",
                                   "models": ["agents.demo.product"]}, ctx=ctx)
        assert r.error is None and len(r.items) == 3
        prices = [i.data["price"] for i in r.items if i.data]
        assert prices == sorted(prices)
        assert all(i.citation_id for i in r.items)
        assert ctx.trace.find("db_query") and ctx.trace.find("dsl_build")
    finally:
        await handler.aclose()


async def test_missing_sqlite_file_is_a_clear_error(tmp_path: Path) -> None:
    config = SearchConfig(home=tmp_path / "nohome")
    handler = DBHandler(config)
    r = await handler.search(Context(config=config), req("anything"))
    assert r.error is not None and "SQLite database not found" in r.error
    assert "agent.db" in r.error


async def test_default_database_is_home_agent_db(tmp_path: Path,
                                                 shop_sqlite_master: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "agent.db").write_bytes(shop_sqlite_master.read_bytes())
    config = SearchConfig(home=home)
    handler = DBHandler(config)
    try:
        r = await handler.search(Context(config=config), req("headphones", models=["products"]))
        assert r.error is None and r.items
        assert all("Headphones" in (i.title or "") for i in r.items)
    finally:
        await handler.aclose()


async def test_database_is_opened_read_only(chinook: DBHandler) -> None:
    import sqlalchemy as sa

    async with chinook.engine.connect() as conn:
        with pytest.raises(sa.exc.DBAPIError):
            await conn.execute(sa.text('DELETE FROM "Genre"'))
            await conn.commit()


async def test_total_is_a_capped_count(chinook_url: str, tmp_path: Path) -> None:
    handler = make_handler(chinook_url, tmp_path, count_max=100)
    try:
        r = await handler.search(ctx_for(handler), req("tracks", models=["Track"], limit=5))
        assert r.error is None and len(r.items) == 5 and r.total == 100
        assert any("more than 100 matches" in w for w in r.warnings)
        r = await handler.search(ctx_for(handler), req("Classical tracks", models=["Track"],
                                                       limit=5))
        assert r.total == 74 and not any("matches" in w for w in r.warnings)
    finally:
        await handler.aclose()
    handler = make_handler(chinook_url, tmp_path, count_max=0)
    try:
        r = await handler.search(ctx_for(handler), req("tracks", models=["Track"], limit=5))
        assert r.error is None and len(r.items) == 5 and r.total == 6
    finally:
        await handler.aclose()


async def test_a_count_asked_is_counted_past_the_cap(chinook_url: str, tmp_path: Path) -> None:
    """"How many tracks": the number is the answer, so it is counted up to
    ``count_asked_max``, not cut at ``count_max``."""
    handler = make_handler(chinook_url, tmp_path, count_max=100)
    try:
        r = await handler.search(ctx_for(handler), req("how many tracks are there",
                                                       models=["Track"], limit=5))
        assert r.error is None and r.total == 3503
        assert r.dsl is not None and r.dsl["queries"][0]["total_asked"] is True
        assert not any("matches" in w for w in r.warnings)
    finally:
        await handler.aclose()
    handler = make_handler(chinook_url, tmp_path, count_max=100, count_asked_max=1000)
    try:
        r = await handler.search(ctx_for(handler), req("how many tracks are there",
                                                       models=["Track"], limit=5))
        assert r.total == 1000
        assert any("more than 1000 matches" in w and "count_asked_max" in w
                   for w in r.warnings)
    finally:
        await handler.aclose()


async def test_sqlite_paths_with_uri_characters(tmp_path: Path,
                                                shop_sqlite_master: Path) -> None:
    odd = tmp_path / "odd dir #1 %20 ?" / "shop db.sqlite"
    spaced = tmp_path / "spaced dir" / "shop db.sqlite"
    for db in (odd, spaced):
        db.parent.mkdir()
        db.write_bytes(shop_sqlite_master.read_bytes())
    # a plain path may hold anything; in a URL '?' and '#' would start its query/fragment
    for url in (str(odd), f"sqlite:///{spaced}"):
        config = SearchConfig(home=tmp_path, db={"url": url})
        handler = DBHandler(config)
        try:
            r = await handler.search(Context(config=config),
                                     req("headphones", models=["products"]))
            assert r.error is None and len(r.items) == 2
        finally:
            await handler.aclose()


async def test_unreachable_postgres_is_a_one_line_error(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = SearchConfig(home=tmp_path, db={"url": f"postgresql://u@127.0.0.1:{port}/db"})
    handler = DBHandler(config)
    try:
        r = await handler.search(Context(config=config), req("anything"))
        assert r.error is not None and r.error.startswith("database error:")
        assert "\n" not in r.error and r.items == []
    finally:
        await handler.aclose()
