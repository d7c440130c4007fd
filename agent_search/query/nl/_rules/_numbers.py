"""Numbers of a question: comparisons with currency and units ("under $100", "more than 5",
"longer than 5 minutes", "15 or more"), ranges ("between 10 and 20") and stock ("in
stock", "out of stock"), each on the field it is about."""

from __future__ import annotations

import re

from agent_search.query.dsl import NUMERIC_KINDS, TEMPORAL_KINDS
from agent_search.query.nl._lexicon import WordTable
from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._reading._schema import Candidate, field_for, is_plain
from agent_search.query.nl._reading._units import (
    CURRENCY_UNITS,
    MONEY_WORDS,
    MULTIPLIERS,
    convert,
    stated_dimension,
    typed,
)
from agent_search.query.nl._rules._aggregates import stated_aggregate
from agent_search.query.nl._rules._dates import is_year
from agent_search.query.nl._rules._measures import measured_by

NUMBER = (r"(?P<cur>[$€£¥])?\s*(?P<num>-?\d{1,3}(?:,\d{3})+(?:\.\d{1,15})?(?!\d)|"
          r"-?\d{1,15}(?:[.,]\d{1,15})?)\s*"
          r"(?P<mult>k|m|thousand|million)?"
          r"(?:\s*(?P<unit>milliseconds?|ms|seconds?|secs?|s|minutes?|mins?|hours?|hrs?|h|"
          r"bytes|kb|mb|gb|usd|dollars?|eur|euros?|gbp|pounds?|percent|%))?\b")
"""An amount: currency, number, multiplier and unit ("$1.5k", "5 minutes")."""
CMP_WORDS = WordTable((
    (r"between", "between"),
    (r"(?:less|fewer|lower|cheaper|shorter|smaller|younger|earlier|lighter|poorer) than|"
     r"under|below|"
     r"beneath|<", "<"),
    (r"at most|no more than|not more than|up to|a maximum of|maximum|<=", "<="),
    (r"(?:more|greater|higher|bigger|larger|longer|older|pricier|costlier|later|taller|"
     r"heavier|richer|wealthier) than|"
     r"exceeding|exceeds|over|above|>", ">"),
    (r"at least|no less than|not less than|a minimum of|minimum|>=", ">="),
    (r"equal to|exactly|costing|priced at|=", "="),
))
"""The comparators said before an amount, and their operators."""
_CMP = re.compile(r"\b(?P<cmp>" + CMP_WORDS.alternatives + r")\s*"
                  + NUMBER, re.I)
_BETWEEN = re.compile(r"\bbetween\s+" + NUMBER.replace("?P<", "?P<a_") + r"\s+and\s+"
                      + NUMBER.replace("?P<", "?P<b_"), re.I)
_OR_MORE = re.compile(NUMBER + r"\s+or\s+(?P<dir>more|less|fewer|higher|lower|above|below)\b",
                      re.I)
_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_STOCK = re.compile(r"\b(?:(?P<out>out\s+of|not\s+in)|in)\s+stock\b", re.I)
_STOCK_FIELD = re.compile(r"stock|inventory|available", re.I)


def amount(m: re.Match[str], prefix: str = "") -> tuple[float, str | None, bool]:
    """The value, unit (lower-cased, if any) and whether it is money, of a :data:`NUMBER`
    match (its groups named with ``prefix``)."""
    num = m.group(prefix + "num")
    thousands = _THOUSANDS.fullmatch(num) is not None  # "1,000" and "1,000.5"; "1,5" is 1.5
    value = float(num.replace(",", "") if thousands or "." in num else num.replace(",", "."))
    mult = m.group(prefix + "mult")
    if mult:
        value *= MULTIPLIERS[mult.lower()]
    unit = (m.group(prefix + "unit") or "").lower() or None
    money = bool(m.group(prefix + "cur")) or unit in CURRENCY_UNITS or unit in MONEY_WORDS
    return value, unit, money


def _comparison_matches(low: str) -> list[tuple[re.Match[str], str]]:
    """Each "<comparator> <amount>" and "<amount> or more/less" with its operator."""
    matches: list[tuple[re.Match[str], str]] = []
    for m in _CMP.finditer(low):
        op = CMP_WORDS[m.group("cmp").lower()]
        if op != "between":
            matches.append((m, op))
    for m in _OR_MORE.finditer(low):
        op = ">=" if m.group("dir").lower() in ("more", "higher", "above") else "<="
        matches.append((m, op))
    return matches


def comparisons(q: Question, plan: Plan) -> None:
    """"under $100" → ``price < 100`` on the field the amount is about (the one named
    nearest, else the target's field of that dimension); an amount no field fits is a
    warning. Years on date fields are left to the date extractor."""
    for m, op in _comparison_matches(q.low):
        span = m.span()
        if not plan.free(span):
            continue
        value, unit, money = amount(m)
        dim = stated_dimension(m.groupdict().get("cmp") or "", unit, money)
        cand = measured_by(q, (m.groupdict().get("cmp") or "").split(" ")[0]) \
            or field_of_amount(q, dim, span[0])
        if cand is None:
            plan.cannot_place(span, m.group(0).strip())
            continue
        if cand.field.kind in TEMPORAL_KINDS:
            continue
        v = typed(convert(value, unit, cand.field), cand.field)
        on_groups = stated_aggregate(q, plan, cand, span[0])
        if on_groups is not None:  # "whose average age is over 30": on the groups
            plan.having.append({"aggregate": on_groups, "op": op, "value": v})
            plan.notes.append(f"{on_groups} {op} {v} (\"{m.group(0).strip()}\")")
            plan.used.append(span)
            continue
        plan.add(cand.path, op, v, span, f"{cand.path} {op} {v} (\"{m.group(0).strip()}\")")


def field_of_amount(q: Question, dim: str, at: int) -> Candidate | None:
    """The field an amount of dimension ``dim`` (money, duration, size... or a plain
    number) stated at ``at`` is about, in any language: the one named nearest of that
    dimension, else the target's only one (:func:`~._reading._schema.field_for`); for a
    dimension no field has, the same among the plain numbers."""
    return field_for(q.candidates, dim, q.fields, at) or (
        field_for(q.candidates, "number", q.fields, at) if dim != "number" else None)


def between(q: Question, plan: Plan) -> None:
    """"between 10 and 20" → ``between [10, 20]`` (ends sorted, units converted); two
    years with a date field to put them on are left to the date extractor."""
    for m in _BETWEEN.finditer(q.low):
        a, ua, ma = amount(m, "a_")
        b, ub, mb = amount(m, "b_")
        unit = ua or ub
        if not (unit or ma or mb) and _years_of_a_date(q, m.start(), a, b):
            continue
        cand = field_for(q.candidates, stated_dimension("", unit, ma or mb), q.fields,
                         m.start())
        if cand is None or cand.field.kind in TEMPORAL_KINDS:
            continue
        low, high = sorted((convert(a, ua or ub, cand.field), convert(b, ub or ua, cand.field)))
        value = [typed(low, cand.field), typed(high, cand.field)]
        plan.add(cand.path, "between", value, m.span(),
                 f"{cand.path} between {value[0]} and {value[1]}")


def _years_of_a_date(q: Question, at: int, a: float, b: float) -> bool:
    """Two bare years with a date field to put them on ("between 2000 and 2010"): the
    date extractor's."""
    return is_year(a) and is_year(b) and \
        field_for(q.candidates, "date", q.fields, at) is not None


def stock(q: Question, plan: Plan) -> None:
    """"in stock" → ``stock > 0``, "out of stock" → ``stock <= 0`` on the target's
    numeric stock/inventory field; said with no such field it is a warning."""
    for m in plan.unclaimed(_STOCK, q.low):
        cand = next((c for c in q.candidates if _is_stock_field(c)), None)
        if cand is None:
            plan.warnings.append(f"{m.group(0).strip()!r}: no stock field to check; ignored")
            plan.used.append(m.span())
            continue
        op = "<=" if m.group("out") else ">"
        plan.add(cand.path, op, 0, m.span(), f"{cand.path} {op} 0 (\"{m.group(0).strip()}\")")


def _is_stock_field(c: Candidate) -> bool:
    words = " ".join(filter(None, (c.field.name, c.field.label, c.field.description)))
    return (c.relation is None and c.field.kind in NUMERIC_KINDS and is_plain(c)
            and _STOCK_FIELD.search(words) is not None)
