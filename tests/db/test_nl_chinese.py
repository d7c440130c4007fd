"""Database questions in Chinese against a shop whose text values are Chinese, on SQLite and
PostgreSQL: customers ← orders → products created through SQLAlchemy, asked through the
db handler as reflected (English table and column names) and as Yao models that give them
Chinese names. Expected rows are computed from the rows written here."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

from agent_search.context import Context
from agent_search.db import DBHandler
from agent_search.db._engine import async_url
from agent_search.types import Request
from tests.support.databases import BACKENDS, make_handler
from tests.support.postgres import create_database

pytestmark = pytest.mark.anyio

CUSTOMERS = [
    {"id": i + 1, "name": n, "city": c, "gender": g, "level": lv}
    for i, (n, c, g, lv) in enumerate([
        ("张伟", "北京", "男", "金卡"), ("王芳", "上海", "女", "银卡"),
        ("李娜", "广州", "女", "普通"), ("刘洋", "南京", "男", "金卡"),
        ("陈静", "北京", "女", "普通"), ("杨磊", "上海", "男", "银卡"),
        ("张伟伟", "杭州", "男", "普通"), ("黄强", "深圳", "男", "普通")])]
PRODUCTS = [
    {"id": i + 1, "name": n, "category": c, "price": p}
    for i, (n, c, p) in enumerate([
        ("华为手机", "电子产品", 3999.0), ("小米手环", "电子产品", 199.0),
        ("联想笔记本", "电脑", 5999.0), ("纯棉T恤", "服装", 89.0), ("羽绒服", "服装", 899.0),
        ("咖啡豆", "食品", 68.0), ("北京烤鸭", "食品", 158.0), ("ＡＢＣ耳机", "电子产品", 299.0)])]
STATUSES = ["已发货", "待付款", "已完成", "已取消", "已发货"]
ORDERS = [{"id": i + 1, "customer_id": i % 8 + 1, "product_id": (i * 3) % 8 + 1,
           "status": STATUSES[i % 5], "amount": float((i * 37) % 60 * 100 + 50),
           "created_at": dt.datetime(2023 + i % 3, i % 12 + 1, i % 28 + 1, 10, 0)}
          for i in range(30)]


def _tables(meta: sa.MetaData, *, comments: bool = False) -> dict[str, sa.Table]:
    text = sa.String(40)

    def said(name: str) -> dict[str, Any]:
        return {"comment": name} if comments else {}

    return {
        "customers": sa.Table("customers", meta, sa.Column("id", sa.Integer, primary_key=True),
                              sa.Column("name", text), sa.Column("city", text, **said("城市")),
                              sa.Column("gender", text), sa.Column("level", text),
                              **said("客户")),
        "products": sa.Table("products", meta, sa.Column("id", sa.Integer, primary_key=True),
                             sa.Column("name", text), sa.Column("category", text),
                             sa.Column("price", sa.Float)),
        "orders": sa.Table("orders", meta, sa.Column("id", sa.Integer, primary_key=True),
                           sa.Column("customer_id", sa.Integer, sa.ForeignKey("customers.id")),
                           sa.Column("product_id", sa.Integer, sa.ForeignKey("products.id")),
                           sa.Column("status", text, **said("状态")),
                           sa.Column("amount", sa.Float, **said("金额")),
                           sa.Column("created_at", sa.DateTime, **said("下单时间")),
                           **said("订单")),
    }


async def _create(url: str, *, comments: bool = False) -> None:
    meta = sa.MetaData()
    tables = _tables(meta, comments=comments)
    engine = create_async_engine(async_url(url))
    try:
        async with engine.begin() as conn:
            await conn.run_sync(meta.drop_all)
            await conn.run_sync(meta.create_all)
            for name, rows in (("customers", CUSTOMERS), ("products", PRODUCTS),
                               ("orders", ORDERS)):
                await conn.execute(tables[name].insert(), rows)
    finally:
        await engine.dispose()


def _column(name: str, kind: str, label: str) -> dict[str, Any]:
    return {"name": name, "type": kind, "label": label, **({"length": 40}
                                                           if kind == "string" else {})}


def _write_models(adir: Path) -> None:
    """Yao models naming the tables and columns in Chinese, as Chinese users write them."""
    models = {
        "customers": {"name": "客户", "table": {"name": "customers"}, "columns": [
            _column("id", "ID", "编号"), _column("name", "string", "姓名"),
            _column("city", "string", "城市"), _column("gender", "string", "性别"),
            _column("level", "string", "等级")],
            "relations": {"orders": {"type": "hasMany", "model": "orders", "key": "customer_id",
                                     "foreign": "id"}}},
        "products": {"name": "产品", "table": {"name": "products"}, "columns": [
            _column("id", "ID", "编号"), _column("name", "string", "名称"),
            _column("category", "string", "类别"), _column("price", "float", "价格")],
            "relations": {"orders": {"type": "hasMany", "model": "orders", "key": "product_id",
                                     "foreign": "id"}}},
        "orders": {"name": "订单", "table": {"name": "orders"}, "columns": [
            _column("id", "ID", "编号"), _column("customer_id", "integer", "客户编号"),
            _column("product_id", "integer", "产品编号"), _column("status", "string", "状态"),
            _column("amount", "float", "金额"), _column("created_at", "datetime", "下单时间")],
            "relations": {
                "customer": {"type": "hasOne", "model": "customers", "key": "id",
                             "foreign": "customer_id"},
                "product": {"type": "hasOne", "model": "products", "key": "id",
                            "foreign": "product_id"}}},
    }
    (adir / "models").mkdir(parents=True)
    for name, model in models.items():
        (adir / "models" / f"{name}.mod.yao").write_text(json.dumps(model, ensure_ascii=False),
                                                          encoding="utf-8")


@pytest.fixture(scope="module", params=BACKENDS)
async def shops(request: pytest.FixtureRequest,
                tmp_path_factory: pytest.TempPathFactory) -> Any:
    """(reflected handler, handler with the Chinese-named models) on one backend."""
    root = tmp_path_factory.mktemp("zh-shop")
    if request.param == "sqlite":
        url = f"sqlite:///{root / 'shop.db'}"
    else:
        server = str(request.getfixturevalue("postgres_server"))
        await create_database(server, "zh_shop")
        url = f"{server}/zh_shop"
    await _create(url)
    adir = root / "assistants" / "zh"
    _write_models(adir)
    reflected = make_handler(url, root / "plain")
    named = make_handler(url, root / "named", assistant_dir=adir)
    yield reflected, named
    await reflected.aclose()
    await named.aclose()


async def ask(handler: DBHandler, query: str, **kw: Any) -> Any:
    kw.setdefault("limit", 50)
    r = await handler.search(Context(config=handler.config),
                             Request(type="db", query=query, **kw))
    assert r.error is None, r.error
    return r


def _ids(r: Any, model: str) -> set[Any]:
    return {i.record_id for i in r.items if i.model.rsplit(".", 1)[-1] == model}


def _customers(**where: Any) -> set[int]:
    return {c["id"] for c in CUSTOMERS if all(c[k] == v for k, v in where.items())}


async def test_a_chinese_value_in_a_chinese_question(shops: Any) -> None:
    reflected, named = shops
    for handler in (reflected, named):
        r = await ask(handler, "北京的客户有多少")
        assert _ids(r, "customers") == _customers(city="北京") and r.total == 2
    r = await ask(named, "北京的客户有多少")
    assert not r.warnings or not any("not understood" in w for w in r.warnings)


async def test_two_values_through_a_relation(shops: Any) -> None:
    _, named = shops
    r = await ask(named, "上海有哪些已发货的订单")
    shanghai = _customers(city="上海")
    want = {o["id"] for o in ORDERS if o["customer_id"] in shanghai and o["status"] == "已发货"}
    assert _ids(r, "orders") == want and want


async def test_an_english_question_naming_a_chinese_value(shops: Any) -> None:
    reflected, _ = shops
    r = await ask(reflected, "orders from 北京")
    beijing = _customers(city="北京")
    assert _ids(r, "orders") == {o["id"] for o in ORDERS if o["customer_id"] in beijing}


async def test_full_width_and_half_width_are_one_value(shops: Any) -> None:
    reflected, _ = shops
    for query in ("ＡＢＣ耳机", "abc耳机", "ABC耳机多少钱"):
        r = await ask(reflected, query)
        assert _ids(r, "products") == {8}, query


async def test_traditional_characters_find_simplified_values(shops: Any) -> None:
    _, named = shops
    r = await ask(named, "張偉的訂單")
    assert _ids(r, "orders") == {o["id"] for o in ORDERS if o["customer_id"] == 1}


async def test_negation_and_the_longest_value(shops: Any) -> None:
    _, named = shops
    r = await ask(named, "不是北京的客户")
    assert _ids(r, "customers") == {c["id"] for c in CUSTOMERS if c["city"] != "北京"}
    r = await ask(named, "张伟伟的订单")
    assert _ids(r, "orders") == {o["id"] for o in ORDERS if o["customer_id"] == 7}


async def test_comparisons_and_superlatives_with_values(shops: Any) -> None:
    _, named = shops
    r = await ask(named, "价格三千元以下的电子产品")
    assert _ids(r, "products") == {p["id"] for p in PRODUCTS
                                   if p["category"] == "电子产品" and p["price"] <= 3000}
    r = await ask(named, "最贵的电子产品是哪个")
    assert [i.record_id for i in r.items] == [1]
    r = await ask(named, "金额超过5000元的已取消订单")
    assert _ids(r, "orders") == {o["id"] for o in ORDERS
                                 if o["amount"] > 5000 and o["status"] == "已取消"}


async def test_stated_dates(shops: Any) -> None:
    _, named = shops
    r = await ask(named, "2024年3月以后的已发货订单")
    assert _ids(r, "orders") == {o["id"] for o in ORDERS if o["status"] == "已发货"
                                 and o["created_at"] >= dt.datetime(2024, 4, 1)}
    r = await ask(named, "2023年的订单有多少")
    assert r.total == sum(1 for o in ORDERS if o["created_at"].year == 2023)


async def test_nothing_understood_shows_nothing_and_says_why(shops: Any) -> None:
    for handler in shops:
        r = await ask(handler, "今天天气怎么样")
        assert r.items == [] and r.warnings


async def test_counts_of_related_rows(shops: Any) -> None:
    _, named = shops
    r = await ask(named, "有4个以上订单的北京客户")
    per: dict[int, int] = {}
    for o in ORDERS:
        per[o["customer_id"]] = per.get(o["customer_id"], 0) + 1
    assert _ids(r, "customers") == {c for c in _customers(city="北京") if per.get(c, 0) >= 4}


async def test_groups_computed_by_the_database(shops: Any) -> None:
    _, named = shops
    r = await ask(named, "每个城市有多少客户")
    rows = {i.data["city"]: i.data["count"] for i in r.items
            if i.metadata.get("kind") == "aggregate" and i.data}
    want: dict[str, int] = {}
    for c in CUSTOMERS:
        want[c["city"]] = want.get(c["city"], 0) + 1
    assert rows == want
    r = await ask(named, "已取消订单的金额总和")
    (row,) = [i.data for i in r.items if i.metadata.get("kind") == "aggregate"]
    assert row is not None and row["sum(amount)"] == pytest.approx(
        sum(o["amount"] for o in ORDERS if o["status"] == "已取消"))


@pytest.mark.postgres
async def test_chinese_comments_name_english_tables(
        postgres_server: str, tmp_path: Path) -> None:
    """PostgreSQL keeps comments (SQLite has none): ``COMMENT ON`` a table or a column in
    Chinese is the name a Chinese question calls it by."""
    await create_database(postgres_server, "zh_comments")
    url = f"{postgres_server}/zh_comments"
    await _create(url, comments=True)
    handler = make_handler(url, tmp_path)
    try:
        r = await ask(handler, "上海有哪些已发货的订单")
        shanghai = _customers(city="上海")
        want = {o["id"] for o in ORDERS
                if o["customer_id"] in shanghai and o["status"] == "已发货"}
        assert _ids(r, "orders") == want and want
        assert not any("not understood" in w for w in r.warnings)
        r = await ask(handler, "金额超过5000元的订单")
        assert _ids(r, "orders") == {o["id"] for o in ORDERS if o["amount"] > 5000}
    finally:
        await handler.aclose()
