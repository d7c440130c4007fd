"""Groups and functions written in Chinese: what :mod:`._aggregates` reads in English, for
the common forms.

- "每个城市", "各城市", "按城市": ``group_by`` the field (or a model the target points at:
  "每个客户的订单" groups orders by customer), with ``count`` when nothing else is computed
  or a count is asked for ("多少", "数量", "几个");
- "平均价格", "价格的平均值": ``avg(price)``; "总金额", "金额总和", "金额合计":
  ``sum(amount)``; "价格的最大值" / "最小值": ``max`` / ``min`` — on a numeric field named
  by its Chinese label or comment, right beside the word.

Only questions holding Chinese characters are read here.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agent_search.query.dsl import NUMERIC_KINDS
from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._reading._schema import Span, is_plain
from agent_search.query.nl._rules._aggregate_words import add_group
from agent_search.query.nl._rules._aggregates import group_field

_EACH = re.compile(r"每一?个|每|各个|各|按照|按|根据")
_COUNT = re.compile(r"多少|几个|几位|几家|几条|数量|个数|总数|计数")
_FN_BEFORE = re.compile(r"(?P<fn>平均|总)的?")
_FN_AFTER = re.compile(r"的?(?P<fn>平均值|平均数|平均|总和|总额|合计|总计|之和|最大值|最高值|"
                       r"最小值|最低值)")
_FN = {"平均": "avg", "平均值": "avg", "平均数": "avg", "总": "sum", "总和": "sum",
       "总额": "sum", "合计": "sum", "总计": "sum", "之和": "sum", "最大值": "max",
       "最高值": "max", "最小值": "min", "最低值": "min"}


_BESIDE: tuple[tuple[re.Pattern[str], Callable[[Span, re.Match[str]], bool]], ...] = (
    (_FN_BEFORE, lambda field, m: field[0] == m.end()),
    (_FN_AFTER, lambda field, m: field[1] == m.start()))
"""The function words and where they stand against the field ("平均价格": right before
it; "价格的平均值": right after)."""


def chinese_aggregates(q: Question, plan: Plan) -> None:
    """Groups and functions said in Chinese (see module)."""
    _functions(q, plan)
    _groups(q, plan)
    if plan.group_by and "count" not in plan.aggregates:
        _count(q, plan)


def _functions(q: Question, plan: Plan) -> None:
    """"平均价格", "价格的平均值": a function right beside a numeric field of the target."""
    numeric = [m for m in q.own_mentions if is_plain(m.candidate)
               and m.candidate.field.kind in NUMERIC_KINDS and plan.free(m.span)]
    for pattern, beside in _BESIDE:
        for m in plan.unclaimed(pattern, q.low):
            field = next((f for f in numeric if beside(f.span, m)), None)
            if field is not None:
                fn = _FN[m.group("fn")]
                plan.compute(f"{fn}({field.candidate.field.name})", fn,
                             (min(m.start(), field.span[0]), max(m.end(), field.span[1])))


def _groups(q: Question, plan: Plan) -> None:
    """"每个城市", "按城市": grouped by the field (or the model pointed at) named next."""
    for m in plan.unclaimed(_EACH, q.low):
        found = group_field(q, m.end())
        names, (_, end) = found if found is not None else ([], (0, 0))
        for name in names:
            add_group(q, plan, name, (m.start(), end), m.group(0))


def _count(q: Question, plan: Plan) -> None:
    """Groups are counted when nothing else is computed or a count is asked for."""
    count = _COUNT.search(q.low)
    if not plan.aggregates or count is not None:
        plan.aggregates.insert(0, "count")
        if count is not None:
            plan.used.append(count.span())
