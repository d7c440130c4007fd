"""The sample database builder used by ``make demo``, and mixing defined and reflected
models in one database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio

from agent_search.config import SearchConfig
from agent_search.context import Context
from agent_search.db import create_handler, load_definitions
from agent_search.db.sample import USERS, create_sample_database, main
from agent_search.types import Request


def test_sample_database_and_model_files(tmp_path: Path) -> None:
    db = tmp_path / "nested" / "agent.db"
    models = tmp_path / "assistants" / "demo" / "models"
    create_sample_database(db, models_dir=models)
    with sqlite3.connect(db) as conn:
        assert conn.execute("select count(*) from products").fetchone() == (30,)
        assert conn.execute("select count(*) from orders").fetchone() == (60,)
        owners = {r[0] for r in conn.execute("select distinct __yao_created_by from orders")}
        assert owners == set(USERS)
        indexes = {r[0] for r in conn.execute(
            "select name from sqlite_master where type = 'index'")}
        assert "ix_orders_yao_created_by" in indexes
    defs = load_definitions(None, models.parent)
    assert sorted(defs) == ["agents.demo.order", "agents.demo.product"]
    create_sample_database(db)  # running it again replaces the data, no duplicates
    with sqlite3.connect(db) as conn:
        assert conn.execute("select count(*) from orders").fetchone() == (60,)


def test_command_line(tmp_path: Path, capsys: object) -> None:
    assert main([]) == 2
    assert main([str(tmp_path / "x.db")]) == 0
    assert (tmp_path / "x.db").is_file()


def test_reflected_table_relates_to_a_defined_model(tmp_path: Path) -> None:
    """A table without a definition whose foreign key points at a defined table gets a
    relation to the defined model (by its id), usable in natural language."""
    db = tmp_path / "agent.db"
    adir = tmp_path / "assistants" / "demo"
    create_sample_database(db, models_dir=adir / "models")
    with sqlite3.connect(db) as conn:
        conn.execute("create table reviews (id integer primary key, stars integer, "
                     "body text, product_id integer references products(id))")
        conn.executemany("insert into reviews (stars, body, product_id) values (?, ?, ?)",
                         [(5, "Great sound", 1), (2, "Too loud", 4), (4, "Comfy", 1)])

    async def run() -> list[int]:
        config = SearchConfig(home=tmp_path, db={"url": str(db)})
        handler = create_handler(config, assistant_dir=adir)
        try:
            await handler.catalog.load()
            reviews = handler.catalog.find("reviews")
            assert reviews is not None
            rel = reviews.schema.relation("product")
            assert rel is not None and rel.model == "agents.demo.product"
            r = await handler.search(Context(config=config), Request(
                type="db", query="reviews of Wireless Headphones WH-100",
                models=["reviews"], limit=10))
            assert r.error is None, r.error
            return sorted(i.record_id for i in r.items)
        finally:
            await handler.aclose()

    assert anyio.run(run) == [1, 3]
