"""Comparisons and ranges written in Chinese, on the field the amount is about — the
same conditions as :mod:`._numbers` reads in English.

- a comparator before the amount: "低于100元", "超过3000", "不超过五百块", "至少2件";
- one after it: "三千元以下", "500以上", "100元以内" (以下/以内/以上 include the amount,
  as they do in Chinese usage: "三千元以下" is ``<= 3000``);
- a range: "100到500元之间", "在1000至2000之间", "100-500元".

Amounts are Arabic ("3,000", "1.5万") or Chinese numerals ("三千", "两百", "十五"); 元, 块,
块钱 and 美元 say money, 分钟/小时/秒 a duration (converted to the field's unit). The field
is the one named nearest (by its Chinese label or comment), else the target's only field of
that kind, as in English; an amount no field fits is a warning. Only questions holding
Chinese characters are read here.
"""

from __future__ import annotations

import re

from agent_search.language import DIGIT, NUMERALS, numeral_value
from agent_search.query.dsl import TEMPORAL_KINDS
from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._reading._schema import Candidate
from agent_search.query.nl._reading._units import convert, stated_dimension, typed
from agent_search.query.nl._rules._numbers import field_of_amount


def _amount_re(p: str = "") -> str:
    """An amount: number, multiplier and unit; its groups named with the prefix ``p``."""
    return (rf"(?P<{p}num>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?|[{NUMERALS}]+)"
            rf"\s*(?P<{p}mult>千万|百万|[十百千万亿])?"
            rf"\s*(?P<{p}unit>块钱|元|块|美元|美金|人民币|分钟|小时|秒)?")


_MONEY = frozenset({"块钱", "元", "块", "美元", "美金", "人民币"})
_DURATION = {"分钟": "min", "小时": "h", "秒": "s"}
_MULTIPLIERS = {"十": 10, "百": 100, "千": 1000, "万": 10_000, "亿": 100_000_000,
                "百万": 1_000_000, "千万": 10_000_000}
BEFORE_OPS = {
    "<": "低于|少于|小于|不到|不足|未满",
    "<=": "不超过|不高于|不多于|不大于|至多|最多",
    ">": "高于|大于|多于|超过|超出",
    ">=": "至少|不低于|不少于|不小于|起码",
    "=": "等于",
}
AFTER_OPS = {"<=": "以下|以内|之内|或以下|及以下", ">=": "以上|或以上|及以上|起"}
OP_OF = {word: op for ops in (BEFORE_OPS, AFTER_OPS) for op, words in ops.items()
         for word in words.split("|")}
"""Each comparator word, before or after the amount, → its operator ("以下" → ``<=``)."""
_CMP_BEFORE = re.compile(
    r"(?P<cmp>" + "|".join(BEFORE_OPS.values()) + r")\s*" + _amount_re())
_CMP_AFTER = re.compile(_amount_re() + r"\s*(?P<cmp>" + "|".join(AFTER_OPS.values())
                        + ")")
_RANGE = re.compile(r"(?:在\s*)?" + _amount_re("a_") + r"\s*(?:到|至|-|~|～|—)\s*"
                    + _amount_re("b_") + r"(?:\s*(?:之间|以内|之内))?")


def chinese_number(text: str) -> float | None:
    """"3,000" → 3000, "三千" → 3000, "十五" → 15, "两百" → 200, "三万五" → 35000; None
    for no number (:func:`agent_search.language.numeral_value`)."""
    if text[:1].isdigit():
        return float(text.replace(",", ""))
    if not any(c in DIGIT or c == "十" for c in text):
        return None  # "万" alone is no amount
    value = numeral_value(text)
    return None if value is None else float(value)


def _amount(m: re.Match[str], p: str = "") -> tuple[float, str | None, bool] | None:
    number = chinese_number(m.group(p + "num"))
    if number is None:
        return None
    mult = m.group(p + "mult")
    if mult:
        number *= _MULTIPLIERS[mult]
    unit = m.group(p + "unit")
    return number, _DURATION.get(unit or ""), unit in _MONEY


def chinese_comparisons(q: Question, plan: Plan) -> None:
    """"三千元以下" → ``price <= 3000`` (see module)."""
    _ranges(q, plan)
    _comparisons(q, plan)


def _ranges(q: Question, plan: Plan) -> None:
    """"100到200元": ``between``, in the unit either end states."""
    for m in plan.unclaimed(_RANGE, q.low):
        a, b = _amount(m, "a_"), _amount(m, "b_")
        if a is None or b is None:
            continue
        unit, money = a[1] or b[1], a[2] or b[2]
        cand = _field(q, plan, m, stated_dimension("", unit, money))
        if cand is not None:
            ends = sorted((convert(a[0], unit, cand.field), convert(b[0], unit, cand.field)))
            pair = [typed(ends[0], cand.field), typed(ends[1], cand.field)]
            plan.add(cand.path, "between", pair, m.span(),
                     f"{cand.path} between {pair[0]} and {pair[1]} (\"{m.group(0)}\")")


_SIDES = (_CMP_BEFORE, _CMP_AFTER)
"""Comparators written before the amount ("超过500元") and after it ("500元以上")."""


def _comparisons(q: Question, plan: Plan) -> None:
    """Each amount with its comparator, in question order."""
    found = sorted((m for pattern in _SIDES for m in pattern.finditer(q.low)),
                   key=lambda m: m.start())
    for m in found:
        amount = _amount(m) if plan.free(m.span()) else None
        if amount is None:
            continue
        value, unit, money = amount
        op = OP_OF[m.group("cmp")]
        cand = _field(q, plan, m, stated_dimension("", unit, money))
        if cand is not None:
            v = typed(convert(value, unit, cand.field), cand.field)
            plan.add(cand.path, op, v, m.span(), f"{cand.path} {op} {v} (\"{m.group(0)}\")")


def _field(q: Question, plan: Plan, m: re.Match[str], dim: str) -> Candidate | None:
    """The field the amount at ``m`` is about, or None (and a warning)."""
    cand = field_of_amount(q, dim, m.start())
    if cand is None or cand.field.kind in TEMPORAL_KINDS:
        plan.cannot_place(m.span(), m.group(0).strip())
        return None
    return cand
