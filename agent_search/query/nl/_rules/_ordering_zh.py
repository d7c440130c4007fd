"""Superlatives and top-N written in Chinese: the orders :mod:`._ordering` and
:mod:`._measures` read in English.

- "最贵" / "最便宜": the money field, down / up ("最贵的电子产品");
- "最新" / "最早": the date field, down / up ("最新的订单");
- "最高", "最大", "最多" / "最低", "最小", "最少" beside a field named by its Chinese label
  or comment ("价格最高", "最低的价格"): that field; with no field beside it nothing is
  ordered, and the parser shows no records rather than ones that are not the extreme
  asked for;
- "前5个", "最贵的3个": a limit; "哪个", "哪一个", "是谁" ask for one.

Only questions holding Chinese characters are read here.
"""

from __future__ import annotations

import re

from agent_search.query.dsl import NUMERIC_KINDS, TEMPORAL_KINDS
from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._reading._schema import Candidate, field_for, is_plain, near_field
from agent_search.query.nl._rules._numbers_zh import chinese_number

_BY_KIND = {"最贵": ("money", "desc"), "最昂贵": ("money", "desc"),
            "最便宜": ("money", "asc"), "最新": ("date", "desc"), "最早": ("date", "asc")}
_BY_FIELD = {"最高": "desc", "最大": "desc", "最多": "desc", "最长": "desc",
             "最低": "asc", "最小": "asc", "最少": "asc", "最短": "asc"}
EXTREMES = frozenset({*_BY_KIND, *_BY_FIELD})
"""The Chinese superlatives read here (a leftover one means an extreme not computed)."""
_SUPERLATIVE = re.compile("|".join(sorted(EXTREMES, key=len, reverse=True)))
_NUMERAL = "零〇一二两三四五六七八九十百千"
_COUNTER = r"(?:个|名|位|条|件|款|家|笔)"
_TOP = re.compile(rf"前\s*(?P<n>\d{{1,4}}|[{_NUMERAL}]+)\s*{_COUNTER}?|"
                  rf"(?P<m>\d{{1,4}}|[{_NUMERAL}]+)\s*{_COUNTER}")
_ONE = re.compile(r"哪一?个|哪一?位|哪一?家|哪一?款|是谁")
FIELD_WINDOW = 6
"""Characters between a superlative and the field it is said of ("价格最高", "最高的价格")."""


def chinese_superlatives(q: Question, plan: Plan) -> None:
    """Orders from "最贵", "价格最高" … (see module); a limit when one or N are asked for."""
    ordered = False
    for m in plan.unclaimed(_SUPERLATIVE, q.low):
        word = m.group(0)
        if word in _BY_KIND:
            kind, direction = _BY_KIND[word]
            cand = field_for(q.candidates, kind, q.fields, m.start())
        else:
            direction = _BY_FIELD[word]
            cand = near_field(m.start(), q.fields, _orderable, window=FIELD_WINDOW)
        if cand is None or not _orderable(cand):
            continue
        plan.order(cand.path, direction, m.span(), f"\"{word}\"")
        ordered = True
    if ordered:
        _limit(q, plan)


def _orderable(c: Candidate) -> bool:
    return is_plain(c) and (c.relation is None or c.relation.type == "hasOne") and \
        c.field.kind in NUMERIC_KINDS | TEMPORAL_KINDS


def _limit(q: Question, plan: Plan) -> None:
    for m in plan.unclaimed(_TOP, q.low):
        n = chinese_number(m.group("n") or m.group("m") or "")
        if n is not None and n >= 1:
            plan.limit = int(n)
            plan.notes.append(f"limit {plan.limit} (\"{m.group(0)}\")")
            plan.used.append(m.span())
            return
    one = _ONE.search(q.low)
    if one is not None:
        plan.limit = 1
        plan.notes.append(f"limit 1 (\"{one.group(0)}\": one asked for)")
        plan.used.append(one.span())
