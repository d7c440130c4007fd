"""The parser on Chinese questions and Chinese values: values found inside a question
without spaces (longest wins, on jieba's word boundaries, one-character values only where
they can be one), full-width letters, Chinese names of models and fields, negation,
comparisons, superlatives, and nothing understood → nothing shown."""

from __future__ import annotations

from typing import Any

import pytest

from agent_search.query.dsl import ModelSchema, RelationSchema
from agent_search.query.nl._parser import parse
from agent_search.query.nl._reading._schema import chinese_name
from agent_search.query.nl._rules._numbers_zh import chinese_number
from tests.support.query_schemas import NOW, f


def shop_zh(*, named: bool = False) -> list[ModelSchema]:
    """customers ← orders → products, English names, Chinese values; with ``named`` the
    Chinese names a Yao model or a database comment gives them."""
    def label(text: str) -> str | None:
        return text if named else None

    return [
        ModelSchema(id="customers", table="customers", primary_key="id", title_field="name",
                    label=label("客户"),
                    fields=[f("id", "integer", primary=True),
                            f("name", label=label("姓名"),
                              values=["张伟", "张伟伟", "王芳", "李娜"]),
                            f("city", label=label("城市"),
                              values=["北京", "上海", "南京", "京东"]),
                            f("gender", label=label("性别"), values=["男", "女"]),
                            f("size", values=["大", "中", "小"]),
                            f("level", values=["金卡", "普通"])],
                    relations=[RelationSchema(name="orders", type="hasMany", model="orders",
                                              key="customer_id", foreign="id")]),
        ModelSchema(id="products", table="products", primary_key="id", title_field="name",
                    label=label("产品"),
                    fields=[f("id", "integer", primary=True),
                            f("name", values=["北京烤鸭", "ＡＢＣ耳机", "华为手机"]),
                            f("category", label=label("类别"),
                              values=["电子产品", "食品", "服装"]),
                            f("price", "number", label=label("价格"))],
                    relations=[RelationSchema(name="orders", type="hasMany", model="orders",
                                              key="product_id", foreign="id")]),
        ModelSchema(id="orders", table="orders", primary_key="id", label=label("订单"),
                    fields=[f("id", "integer", primary=True), f("customer_id", "integer"),
                            f("product_id", "integer"),
                            f("status", label=label("状态"),
                              values=["已发货", "待付款", "已取消"]),
                            f("amount", "number", label=label("金额")),
                            f("created_at", "datetime", label=label("下单时间"))],
                    relations=[RelationSchema(name="customer", type="hasOne",
                                              model="customers", key="id",
                                              foreign="customer_id"),
                               RelationSchema(name="product", type="hasOne", model="products",
                                              key="id", foreign="product_id")]),
    ]


def dsl(text: str, *, named: bool = False) -> dict[str, Any]:
    return parse(text, shop_zh(named=named), now=NOW)


def wheres(out: dict[str, Any]) -> list[Any]:
    return list(out.get("wheres", []))


@pytest.mark.parametrize(("text", "model", "where"), [
    ("北京的客户有多少", "customers", {"field": "city", "op": "=", "value": "北京"}),
    ("已发货的订单", "orders", {"field": "status", "op": "=", "value": "已发货"}),
    ("orders from 北京", "orders", {"field": "customer.city", "op": "=", "value": "北京"}),
    ("customers in 上海", "customers", {"field": "city", "op": "=", "value": "上海"}),
    ("南京市的客户", "customers", {"field": "city", "op": "=", "value": "南京"}),
    ("女客户", "customers", {"field": "gender", "op": "=", "value": "女"}),
    ("abc耳机", "products", {"field": "name", "op": "=", "value": "ＡＢＣ耳机"}),
    ("ＡＢＣ耳机多少钱", "products", {"field": "name", "op": "=", "value": "ＡＢＣ耳机"}),
    ("北京和上海的客户", "customers", {"field": "city", "op": "in", "value": ["北京", "上海"]}),
    ("不是北京的客户", "customers", {"field": "city", "op": "!=", "value": "北京"}),
    ("北京以外的客户", "customers", {"field": "city", "op": "!=", "value": "北京"}),
    ("除了上海的客户", "customers", {"field": "city", "op": "!=", "value": "上海"}),
])
def test_a_chinese_value_inside_a_question_is_the_filter(text: str, model: str,
                                                         where: dict[str, Any]) -> None:
    out = dsl(text, named=True)  # the models and fields have Chinese names
    assert out["model"] == model
    assert wheres(out) == [where]
    # without them the value is found all the same; "客户" is then a word not understood,
    # tried as a text match that is dropped when no row has it (relax)
    out = dsl(text)
    assert out["model"] == model
    assert wheres(out)[0] == where and (len(wheres(out)) == 1 or out["relax"])


def test_the_longest_value_wins() -> None:
    out = dsl("张伟伟的订单", named=True)
    assert out["model"] == "orders"
    assert wheres(out) == [{"field": "customer.name", "op": "=", "value": "张伟伟"}]
    # a product named after a city is the product, not the city
    out = dsl("北京烤鸭多少钱")
    assert out["model"] == "products"
    assert wheres(out) == [{"field": "name", "op": "=", "value": "北京烤鸭"}]


def test_a_value_across_two_words_is_not_read() -> None:
    # 京东 is a value, but "北京东路" is 北京 | 东路: only the city is read
    out = dsl("北京东路的客户", named=True)
    assert wheres(out) == [{"field": "city", "op": "=", "value": "北京"}]
    assert any("'东路'" in w for w in out["warnings"])


@pytest.mark.parametrize("text", ["最大的客户", "中国的客户", "是什么"])
def test_a_common_single_character_is_no_value(text: str) -> None:
    # 大/中 are values of a short-code field, but inside a word (最大, 中国) or too common
    # a character to stand for one
    out = dsl(text)
    fields = str(out)
    assert "'size'" not in fields and "'gender'" not in fields


def test_mixed_questions_and_several_conditions() -> None:
    out = dsl("上海有哪些已发货的订单", named=True)
    assert out["model"] == "orders"
    assert {"field": "customer.city", "op": "=", "value": "上海"} in wheres(out)
    assert {"field": "status", "op": "=", "value": "已发货"} in wheres(out)
    # in Chinese the noun modified comes last: these are orders, of gold-card customers
    out = dsl("金卡客户的已取消订单", named=True)
    assert out["model"] == "orders"
    assert wheres(out) == [{"field": "customer.level", "op": "=", "value": "金卡"},
                           {"field": "status", "op": "=", "value": "已取消"}]
    assert dsl("已取消订单的金卡客户", named=True)["model"] == "customers"


def test_chinese_names_of_models_and_fields() -> None:
    out = dsl("北京的客户有多少", named=True)
    assert out["model"] == "customers" and out["warnings"] == []
    assert any("count" in n for n in [out["explanation"]])
    out = dsl("订单", named=True)
    assert out["model"] == "orders" and wheres(out) == []
    assert chinese_name("城市") == "城市"
    assert chinese_name("客户的所在城市，用于统计") is None  # a sentence, not a name
    assert chinese_name("City of the customer") is None


def test_without_chinese_names_the_words_left_are_said() -> None:
    out = dsl("北京的客户有多少")
    assert wheres(out)[0] == {"field": "city", "op": "=", "value": "北京"}
    assert any("'客户'" in w for w in out["warnings"])  # never silently ignored


@pytest.mark.parametrize(("text", "where"), [
    ("价格三千元以下的电子产品", {"field": "price", "op": "<=", "value": 3000}),
    ("价格低于100元的食品", {"field": "price", "op": "<", "value": 100}),
    ("价格不超过两百块的食品", {"field": "price", "op": "<=", "value": 200}),
    ("价格在100到500元之间的产品", {"field": "price", "op": "between", "value": [100, 500]}),
    ("价格1.5万元以上的产品", {"field": "price", "op": ">=", "value": 15000}),
])
def test_chinese_comparisons(text: str, where: dict[str, Any]) -> None:
    out = dsl(text, named=True)
    assert out["model"] == "products"
    assert where in wheres(out)


def test_comparison_on_the_field_named_beside_it() -> None:
    out = dsl("金额超过5000元的订单", named=True)
    assert out["model"] == "orders"
    assert wheres(out) == [{"field": "amount", "op": ">", "value": 5000}]


def test_chinese_numbers() -> None:
    assert [chinese_number(t) for t in ("三千", "十五", "两百", "3,000", "一万五千", "万")] == \
        [3000, 15, 200, 3000, 15000, None]
    # the grounding's reader of numeral runs, shared: a last digit after a unit is a tenth
    # of it, and "三四" (three or four) or "两三" is no one amount
    assert [chinese_number(t) for t in ("三万五", "一千二", "两三")] == [35000, 1200, None]
    assert dsl("价格三万五以下的电子产品", named=True)["wheres"][0]["value"] == 35000


def test_chinese_superlatives_and_limits() -> None:
    out = dsl("最贵的电子产品是哪个", named=True)
    assert out["orders"] == [{"field": "price", "order": "desc"}] and out["limit"] == 1
    assert wheres(out) == [{"field": "category", "op": "=", "value": "电子产品"}]
    out = dsl("价格最低的3个产品", named=True)
    assert out["orders"] == [{"field": "price", "order": "asc"}] and out["limit"] == 3
    out = dsl("电子产品的订单", named=True)  # "产品" inside the value names no model
    assert out["model"] == "orders"
    assert wheres(out) == [{"field": "product.category", "op": "=", "value": "电子产品"}]
    out = dsl("最新的订单", named=True)
    assert out["orders"] == [{"field": "created_at", "order": "desc"}]


def test_an_extreme_not_understood_shows_nothing() -> None:
    out = dsl("订单最多的客户", named=True)
    assert out.get("queries") == [] and any("最多" in w for w in out["warnings"])


@pytest.mark.parametrize("text", ["天气怎么样", "非常好", "请问一下"])
def test_nothing_understood_in_chinese_shows_nothing_and_says_why(text: str) -> None:
    out = dsl(text, named=True)
    queries = out.get("queries", [out])
    # a text match of the words, no condition: never every row
    assert all(q.get("wheres") for q in queries)
    assert out["warnings"]
    out = dsl(text)
    assert all(q.get("wheres") for q in out.get("queries", [out]))


def test_english_questions_are_read_as_before() -> None:
    out = dsl("orders over 500 dollars")
    assert wheres(out) == [{"field": "amount", "op": ">", "value": 500}]


@pytest.mark.parametrize(("text", "group_by", "aggregates"), [
    ("每个城市有多少客户", ["city"], ["count"]),
    ("各城市的客户数量", ["city"], ["count"]),
    ("按状态统计订单总金额", ["status"], ["sum(amount)"]),
    ("电子产品的平均价格", [], ["avg(price)"]),
    ("已取消订单的金额总和", [], ["sum(amount)"]),
    ("价格的最大值", [], ["max(price)"]),
    ("各类别产品的平均价格", ["category"], ["avg(price)"]),
    ("每个客户的订单数", ["customer_id", "customer.name"], ["count"]),
    ("每个客户的订单总金额", ["customer_id", "customer.name"], ["sum(amount)"]),
])
def test_chinese_groups_and_functions(text: str, group_by: list[str],
                                      aggregates: list[str]) -> None:
    out = dsl(text, named=True)
    assert out["group_by"] == group_by and out["aggregates"] == aggregates
    assert not any("not understood" in w for w in out["warnings"])


def test_traditional_and_simplified_are_one_script() -> None:
    out = dsl("上海有哪些已發貨的訂單", named=True)  # traditional question, simplified data
    assert out["model"] == "orders"
    assert {"field": "status", "op": "=", "value": "已发货"} in wheres(out)
    schemas = shop_zh(named=True)
    city = schemas[0].fields[2]
    city.values = ["臺北", "北京"]  # traditional data, simplified question
    out = parse("台北的客户", schemas, now=NOW)
    assert out["model"] == "customers"
    assert wheres(out) == [{"field": "city", "op": "=", "value": "臺北"}]


@pytest.mark.parametrize(("text", "op", "n"), [
    ("订单超过3个的客户", ">", 3),
    ("有超过3个订单的客户", ">", 3),
    ("有4个以上订单的客户", ">=", 4),
    ("至少有两个订单的客户", ">=", 2),
    ("订单数少于2笔的客户", "<", 2),
])
def test_chinese_counts_over_a_relation(text: str, op: str, n: int) -> None:
    out = dsl(text, named=True)
    assert out["model"] == "customers"
    assert wheres(out) == [{"field": "count(orders)", "op": op, "value": n}]


@pytest.mark.parametrize(("text", "where"), [
    ("2024年的订单", {"and": [{"field": "created_at", "op": ">=", "value": "2024-01-01T00:00:00"},
                           {"field": "created_at", "op": "<", "value": "2025-01-01T00:00:00"}]}),
    ("2024年3月以后的订单", {"field": "created_at", "op": ">=", "value": "2024-04-01T00:00:00"}),
    ("2024年3月以来的订单", {"field": "created_at", "op": ">=", "value": "2024-03-01T00:00:00"}),
    ("2023年以前的订单", {"field": "created_at", "op": "<", "value": "2023-01-01T00:00:00"}),
    ("2023年到2024年的订单",
     {"and": [{"field": "created_at", "op": ">=", "value": "2023-01-01T00:00:00"},
              {"field": "created_at", "op": "<", "value": "2025-01-01T00:00:00"}]}),
    ("上个月的订单", {"and": [{"field": "created_at", "op": ">=", "value": "2025-05-01T00:00:00"},
                          {"field": "created_at", "op": "<", "value": "2025-06-01T00:00:00"}]}),
    ("最近30天的订单", {"field": "created_at", "op": ">=", "value": "2025-05-16T15:30:00"}),
    ("今年的订单", {"field": "created_at", "op": ">=", "value": "2025-01-01T00:00:00"}),
])
def test_chinese_dates(text: str, where: dict[str, Any]) -> None:
    out = dsl(text, named=True)  # now: 2025-06-15 15:30
    assert out["model"] == "orders" and wheres(out) == [where]


def test_a_date_that_does_not_exist_is_a_warning() -> None:
    out = dsl("2024年2月30日的订单", named=True)
    assert any("not a valid date" in w for w in out["warnings"])


def test_the_rest_of_a_word_partly_understood_is_left_over() -> None:
    # jieba writes "今天天气" as one word; 今天 is a date, 天气 is still said
    out = dsl("今天天气怎么样", named=True)
    assert any("'天气'" in w for w in out["warnings"]) and out.get("relax")
