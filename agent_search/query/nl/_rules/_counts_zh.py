"""Counts over relations written in Chinese: what :mod:`._counts` reads in English
("customers with more than 3 orders" → ``count(orders) > 3``).

- the related rows named first: "订单超过3个的客户", "订单数不少于两笔的客户";
- or after the count: "有超过3个订单的客户", "有3个以上订单的客户", "至少有2个订单的客户".

The related model is named by its Chinese name (Yao model name, or a table comment); the
relation is a ``hasMany`` of the target. Runs before the Chinese comparisons, which would
otherwise read "超过3" as a condition on a number field.
"""

from __future__ import annotations

import re

from agent_search.language import HAN_CHAR
from agent_search.query.dsl import RelationSchema
from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._reading._schema import model_phrases
from agent_search.query.nl._rules._numbers_zh import (
    AFTER_OPS,
    BEFORE_OPS,
    OP_OF,
    chinese_number,
)

_NUMERAL = "零〇一二两三四五六七八九十百千"
_N = rf"(?P<n>\d{{1,6}}|[{_NUMERAL}]+)\s*(?:个|条|笔|件|位|家|次|本|张)?"
_BEFORE = r"(?P<cmp>" + "|".join(BEFORE_OPS.values()) + ")"
_AFTER = r"(?P<after>" + "|".join(AFTER_OPS.values()) + ")"


def chinese_counts(q: Question, plan: Plan) -> None:
    """``count(relation) <op> N`` for each count of related rows said in Chinese."""
    for rel in q.target.relations:
        other = q.by_id.get(rel.model.lower())
        if rel.type != "hasMany" or other is None:
            continue
        names = sorted((p for p in model_phrases(other) if HAN_CHAR.search(p)), key=len,
                       reverse=True)
        for name in names:
            said = re.escape(name)
            first = re.compile(said + r"(?:的?(?:数量|数目|个数|数))?\s*(?:有)?\s*" + _BEFORE
                               + r"\s*(?:有)?\s*" + _N)
            after = re.compile(r"(?:有)?\s*(?:" + _BEFORE + r"\s*(?:有)?\s*)?" + _N
                               + r"\s*" + _AFTER + r"?\s*的?\s*" + said)
            for m in [*first.finditer(q.low), *after.finditer(q.low)]:
                _add(plan, rel, m)


def _add(plan: Plan, rel: RelationSchema, m: re.Match[str]) -> None:
    """The count at ``m``, when it states a comparator (before the number, or after it)."""
    n = chinese_number(m.group("n"))
    said = m.group("cmp") or m.groupdict().get("after")
    if n is None or not said or not plan.free((m.start("n"), m.end("n"))):
        return
    op = OP_OF[said]
    path = f"count({rel.name})"
    plan.add(path, op, int(n), (m.start(), m.end()), f"{path} {op} {int(n)} (\"{m.group(0)}\")")
    plan.value_conditions += 1
