"""Model definition files, settings, DSL validation and the generator interface
(plugged-in generators, retries on validation errors, fallback to the builtin one)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agent_search.config import SearchConfig
from agent_search.context import Context
from agent_search.db import DBSettings, create_handler, load_definitions
from agent_search.db._engine import async_url
from agent_search.db.sample import write_model_files
from agent_search.errors import ConfigError
from agent_search.query.dsl import (
    DSLGenerationError,
    DSLValidationError,
    FieldSchema,
    ModelSchema,
    RelationSchema,
    generate_dsl,
    validate_dsl,
)
from agent_search.query.nl import BuiltinDSLGenerator, words_of
from agent_search.types import Request

pytestmark = pytest.mark.anyio


# -- definition files ---------------------------------------------------------------------


def test_definitions_load_global_nested_and_assistant_ids(tmp_path: Path) -> None:
    config_dir = tmp_path / "config"
    (config_dir / "models" / "shop").mkdir(parents=True)
    (config_dir / "models" / "customer.mod.yao").write_text(
        '// JSONC with comments\n{"name": "Customer", "table": "customers",\n'
        ' "columns": [{"name": "id", "type": "ID"}, {"name": "name", "type": "string"},],}\n')
    (config_dir / "models" / "shop" / "item.mod.yao").write_text(json.dumps(
        {"table": {"name": "items"}, "columns": [{"name": "id", "type": "ID"}],
         "option": {"permission": True, "timestamps": True}}))
    adir = tmp_path / "assistants" / "mybot"
    write_model_files(adir / "models")
    defs = load_definitions(config_dir, adir)
    assert sorted(defs) == ["agents.mybot.order", "agents.mybot.product", "customer",
                            "shop.item"]
    assert defs["customer"].table.name == "customers"
    item_cols = [c.name for c in defs["shop.item"].all_columns()]
    assert {"created_at", "updated_at", "__yao_created_by", "__yao_team_id"} <= set(item_cols)
    assert defs["agents.mybot.product"].file is not None


@pytest.mark.parametrize(("content", "key", "message"), [
    ('{"table": "t", "columns": [{"name": "a", "type": "strnig"}]}', "columns.0.type",
     "unknown column type 'strnig'"),
    ('{"table": "t", "columns": []}', "columns", "at least one column"),
    ('{"columns": [{"name": "a"}]}', "table", "Field required"),
    ('{"table": "t", "columns": [{"name": "a"}, {"name": "A"}]}', "columns",
     "defined twice"),
    ('{"table": "t", "columns": [{"name": "a"}], "relations": {"r": {"type": "belongsTo",'
     ' "model": "x", "key": "id", "foreign": "x_id"}}}', "relations.r.type", "hasOne"),
    ('{"table": "t", "columns": [', None, "invalid JSONC"),
    ('[1, 2]', None, "expected a JSON object"),
])
def test_bad_definitions_name_file_and_key(tmp_path: Path, content: str, key: str | None,
                                           message: str) -> None:
    models = tmp_path / "models"
    models.mkdir()
    (models / "bad.mod.yao").write_text(content)
    with pytest.raises(ConfigError) as info:
        load_definitions(tmp_path, None)
    text = str(info.value)
    assert "bad.mod.yao" in text and message in text
    if key:
        assert info.value.key == key


def test_settings_validate_the_db_section() -> None:
    settings = DBSettings.from_config(SearchConfig(db={"max_results": 5, "value_index_max": 0,
                                                       "wheres": [{"field": "a", "value": 1}]}))
    assert settings.max_results == 5 and settings.wheres[0].field == "a"
    with pytest.raises(ConfigError, match=r"db\.value_index_max"):
        DBSettings.from_config(SearchConfig(db={"value_index_max": -1}))
    with pytest.raises(ConfigError, match=r"db\.wheres\.0\.op"):
        DBSettings.from_config(SearchConfig(db={"wheres": [{"field": "a", "op": "xx"}]}))
    with pytest.raises(ConfigError, match=r"db\.nonsense: unknown key"):
        DBSettings.from_config(SearchConfig(db={"nonsense": 1}))


def test_database_urls_map_to_async_drivers(tmp_path: Path) -> None:
    assert async_url("sqlite:///x.db").drivername == "sqlite+aiosqlite"
    assert async_url(tmp_path / "a.db").database == str(tmp_path / "a.db")
    assert async_url("postgresql://u@h/db").drivername == "postgresql+asyncpg"
    assert async_url("postgres://u@h/db").drivername == "postgresql+asyncpg"
    with pytest.raises(ConfigError, match="unsupported database 'mysql'"):
        async_url("mysql://u@h/db")


async def test_definition_for_a_missing_table_is_skipped_with_a_warning(
        tmp_path: Path, chinook_sqlite_master: Path) -> None:
    models = tmp_path / "config" / "models"
    models.mkdir(parents=True)
    (models / "ghost.mod.yao").write_text('{"table": "ghosts", "columns": [{"name": "id"}]}')
    config = SearchConfig(home=tmp_path, db={"url": f"sqlite:///{chinook_sqlite_master}"})
    handler = create_handler(config, config_dir=tmp_path / "config")
    try:
        r = await handler.search(Context(config=config), Request(
            type="db", query="jazz", models=["ghost", "Genre"], limit=5))
        assert r.error is None and [i.title for i in r.items] == ["Jazz"]
        assert any("ghost skipped: table 'ghosts' not found" in w for w in r.warnings)
    finally:
        await handler.aclose()


def test_words_of_splits_names() -> None:
    assert words_of("UnitPrice") == "unit price"
    assert words_of("unit_price") == "unit price"
    assert words_of("agents.demo.order") == "order"
    assert words_of("HTTPStatus") == "http status"


# -- DSL validation -----------------------------------------------------------------------


def schemas() -> list[ModelSchema]:
    product = ModelSchema(
        id="product", table="products", title_field="name", primary_key="id",
        fields=[FieldSchema(name="id", kind="integer", primary=True),
                FieldSchema(name="name"), FieldSchema(name="price", kind="number", unit="USD"),
                FieldSchema(name="category", values=["audio", "video"]),
                FieldSchema(name="maker_id", kind="integer")],
        relations=[RelationSchema(name="maker", type="hasOne", model="maker", key="id",
                                  foreign="maker_id")])
    maker = ModelSchema(id="maker", table="makers", queryable=False, title_field="name",
                        fields=[FieldSchema(name="id", kind="integer", primary=True),
                                FieldSchema(name="name", values=["Apple", "Sony"])])
    return [product, maker]


def test_validate_canonicalises_names_and_checks_fields() -> None:
    out = validate_dsl({"model": "PRODUCT", "select": ["NAME"],
                        "wheres": [{"field": "Price", "op": "lt", "value": 5},
                                   {"or": [{"field": "MAKER.Name", "value": "Sony"}]}],
                        "orders": [{"field": "price", "order": "ASC"},
                                   {"field": "Maker.NAME"}],
                        "explanation": "x", "confidence": 0.7}, schemas())
    q = out.queries[0]
    assert q.model == "product" and q.select == ["name"]
    assert q.wheres[0].to_json() == {"field": "price", "op": "<", "value": 5}
    assert q.wheres[1].to_json() == {"or": [{"field": "maker.name", "op": "=",
                                             "value": "Sony"}]}
    assert q.orders[0].order == "asc" and out.confidence == 0.7
    assert q.orders[1].field == "maker.name"


@pytest.mark.parametrize(("raw", "message"), [
    ({"model": "nope"}, "unknown model 'nope'"),
    ({"model": "maker"}, "was not asked for"),
    ({"model": "product", "wheres": [{"field": "nope"}]}, "unknown where field 'nope'"),
    ({"model": "product", "wheres": [{"field": "x.name"}]}, "unknown relation 'x'"),
    ({"model": "product", "wheres": [{"field": "maker.nope"}]}, "unknown field 'nope'"),
    ({"model": "product", "orders": [{"field": "nope"}]}, "unknown order field"),
    ({"model": "product", "orders": [{"field": "x.name"}]}, "must be a field or relation"),
    ({"model": "product", "orders": [{"field": "maker.nope"}]}, "unknown field 'nope'"),
    ({"model": "product", "orders": [{"field": "maker.a.b"}]}, "must be a field or relation"),
    ({"model": "product", "select": ["nope"]}, "unknown select field"),
    ({"model": "product", "wheres": [{"field": "name", "value": [[1]]}]}, "values must be"),
    ({"model": "product", "wheres": [{"field": "name", "op": "between", "value": 1}]},
     "between"),
    ({"model": "product", "confidence": 3}, "confidence"),
    ({"model": "product", "warnings": "x"}, "warnings"),
    ({"model": "product", "extra": 1}, "Extra inputs"),
    ("not a dict", "must be an object"),
])
def test_validate_rejects(raw: Any, message: str) -> None:
    with pytest.raises(DSLValidationError, match=message):
        validate_dsl(raw, schemas())


# -- generators ---------------------------------------------------------------------------


class ScriptedGenerator:
    """A generator of the tests' own (standing in for an LLM): answers from a script and
    records the feedback it was given."""

    name = "scripted"

    def __init__(self, answers: list[Any]) -> None:
        self.answers = list(answers)
        self.feedback: list[str | None] = []

    async def generate(self, query: str, schemas: Sequence[ModelSchema], *,
                       feedback: str | None = None) -> dict[str, Any]:
        self.feedback.append(feedback)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return dict(answer)


async def test_generate_dsl_retries_with_feedback() -> None:
    gen = ScriptedGenerator([{"model": "product", "wheres": [{"field": "cost"}]},
                             {"model": "product", "wheres": [{"field": "price", "op": "<",
                                                              "value": 10}]}])
    out = await generate_dsl(gen, "cheap", schemas(), retries=2)
    assert out.generator == "scripted" and out.queries[0].wheres[0].field == "price"
    assert gen.feedback[0] is None
    assert gen.feedback[1] is not None and "unknown where field 'cost'" in gen.feedback[1]


async def test_generate_dsl_gives_up_after_retries() -> None:
    gen = ScriptedGenerator([{"model": "x"}] * 3)
    with pytest.raises(DSLGenerationError, match="after 3 attempts: unknown model 'x'"):
        await generate_dsl(gen, "q", schemas(), retries=2)
    boom = ScriptedGenerator([RuntimeError("LLM down")])
    with pytest.raises(DSLGenerationError, match="LLM down"):
        await generate_dsl(boom, "q", schemas())


async def test_builtin_generator_on_plain_schemas() -> None:
    gen = BuiltinDSLGenerator()
    raw = await gen.generate("audio products from Sony under $100", schemas())
    out = validate_dsl(raw, schemas())
    wheres = [w.to_json() for w in out.queries[0].wheres]
    assert {"field": "price", "op": "<", "value": 100} in wheres
    assert {"field": "category", "op": "=", "value": "audio"} in wheres
    assert {"field": "maker.name", "op": "=", "value": "Sony"} in wheres
    raw = await gen.generate("the 3 most expensive products", schemas())
    assert raw["orders"] == [{"field": "price", "order": "desc"}] and raw["limit"] == 3
    raw = await gen.generate("products between 10 and 20.5", schemas())
    assert raw["wheres"] == [{"field": "price", "op": "between", "value": [10, 20.5]}]
    with pytest.raises(DSLGenerationError, match="strict"):
        await BuiltinDSLGenerator(strict=True).generate("qwxz", schemas()[:1])


async def test_plugged_generator_is_used_by_uses_query(chinook_sqlite_master: Path,
                                                       tmp_path: Path) -> None:
    gen = ScriptedGenerator([
        {"model": "Genre", "wheres": [{"field": "nonexistent", "value": "x"}]},
        {"model": "Genre", "wheres": [{"field": "Name", "op": "like", "value": "R%"}],
         "explanation": "genres starting with R", "confidence": 0.8}])
    config = SearchConfig(home=tmp_path, db={"url": f"sqlite:///{chinook_sqlite_master}"},
                          uses={"query": "scripted"})
    handler = create_handler(config, generators={"scripted": gen})
    try:
        r = await handler.search(Context(config=config), Request(
            type="db", query="genres beginning with R", models=["Genre"], limit=10))
        assert r.error is None
        assert sorted(i.title or "" for i in r.items) == ["R&B/Soul", "Reggae", "Rock",
                                                          "Rock And Roll"]
        assert r.dsl is not None and r.dsl["generator"] == "scripted"
        assert r.dsl["explanation"] == "genres starting with R"
        assert r.items[0].score == pytest.approx(0.8)
        assert len(gen.feedback) == 2
    finally:
        await handler.aclose()


async def test_failing_plugged_generator_falls_back_unless_strict(
        chinook_sqlite_master: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{chinook_sqlite_master}"
    config = SearchConfig(home=tmp_path, db={"url": url, "retries": 0},
                          uses={"query": "scripted"})
    gen = ScriptedGenerator([RuntimeError("no LLM reachable")] * 2)
    handler = create_handler(config, generators={"scripted": gen})
    try:
        r = await handler.search(Context(config=config), Request(
            type="db", query="Jazz", models=["Genre"], limit=10))
        assert r.error is None and [i.title for i in r.items] == ["Jazz"]
        assert any("no LLM reachable" in w and "builtin" in w for w in r.warnings)
        strict = config.merged({"query": {"strict": True}})
        r = await handler.search(Context(config=strict), Request(
            type="db", query="Jazz", models=["Genre"], limit=10))
        assert r.error is not None and "no LLM reachable" in r.error
        unknown = config.merged({"uses": {"query": "mcp:nowhere"}})
        r = await handler.search(Context(config=unknown), Request(
            type="db", query="Jazz", models=["Genre"], limit=10))
        assert r.error is None and any("'mcp:nowhere'" in w for w in r.warnings)
    finally:
        await handler.aclose()


def order_schemas() -> list[ModelSchema]:
    return [ModelSchema(id="order", table="orders", primary_key="id",
                        fields=[FieldSchema(name="id", kind="integer", primary=True),
                                FieldSchema(name="total", kind="number"),
                                FieldSchema(name="created_at", kind="datetime")])]


@pytest.mark.parametrize(("query", "wheres"), [
    ("orders in the last 30 days",
     [{"field": "created_at", "op": ">=", "value": "2025-05-16T15:30:00"}]),
    ("orders from the past 2 months",
     [{"field": "created_at", "op": ">=", "value": "2025-04-15T15:30:00"}]),
    ("orders this month", [{"field": "created_at", "op": ">=", "value": "2025-06-01T00:00:00"}]),
    ("orders this week", [{"field": "created_at", "op": ">=", "value": "2025-06-09T00:00:00"}]),
    ("orders last year", [{"and": [
        {"field": "created_at", "op": ">=", "value": "2024-01-01T00:00:00"},
        {"field": "created_at", "op": "<", "value": "2025-01-01T00:00:00"}]}]),
    ("orders last month", [{"and": [
        {"field": "created_at", "op": ">=", "value": "2025-05-01T00:00:00"},
        {"field": "created_at", "op": "<", "value": "2025-06-01T00:00:00"}]}]),
    ("orders from yesterday", [{"and": [
        {"field": "created_at", "op": ">=", "value": "2025-06-14T00:00:00"},
        {"field": "created_at", "op": "<", "value": "2025-06-15T00:00:00"}]}]),
    ("orders today", [{"field": "created_at", "op": ">=", "value": "2025-06-15T00:00:00"}]),
])
async def test_relative_dates(query: str, wheres: list[dict[str, Any]]) -> None:
    import datetime as dt

    now = dt.datetime(2025, 6, 15, 15, 30)  # a Sunday
    gen = BuiltinDSLGenerator(now=lambda: now)
    raw = await gen.generate(query, order_schemas())
    assert raw["wheres"] == wheres, raw
    assert "limit" not in raw  # "last 30" is a period here, not a top-N
    validate_dsl(raw, order_schemas())
