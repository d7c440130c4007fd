"""Units: what a field's unit or name says it measures, and converting a stated amount
("5 minutes", "$1.5k") into the field's own unit and type."""

from __future__ import annotations

import re

from agent_search.query.dsl import FieldSchema

SECONDS = {"ms": 0.001, "s": 1.0, "min": 60.0, "h": 3600.0}
"""Seconds in each canonical duration unit."""
QUERY_UNITS = {
    "ms": "ms", "millisecond": "ms", "milliseconds": "ms",
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "min": "min", "mins": "min", "minute": "min", "minutes": "min",
    "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
}
"""Duration units as a question writes them → canonical unit."""
FIELD_UNITS = {"ms": "ms", "millisecond": "ms", "milliseconds": "ms", "s": "s",
               "sec": "s", "second": "s", "seconds": "s", "min": "min",
               "minute": "min", "minutes": "min", "h": "h", "hour": "h", "hours": "h"}
"""Duration units as a schema declares them → canonical unit."""
CURRENCY_UNITS = frozenset({"currency", "usd", "eur", "gbp", "cny", "jpy", "$", "€", "£",
                            "dollar", "dollars", "euro", "euros"})
MONEY_WORDS = frozenset({"dollar", "dollars", "euro", "euros", "pound", "pounds"})
MONEY_NAME = re.compile(r"(price|cost|total|amount|fee|revenue|salary)", re.I)
SIZE_NAME = re.compile(r"(bytes|size)", re.I)
SIZE_UNITS = frozenset({"bytes", "kb", "mb", "gb"})
MULTIPLIERS = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6}


def convert(value: float, unit: str | None, field: FieldSchema) -> float:
    """``value`` in ``unit`` (as written in the question) expressed in the field's duration
    unit; unchanged when either is not a duration."""
    q = QUERY_UNITS.get(unit or "")
    f = FIELD_UNITS.get((field.unit or "").lower())
    if q and f:
        value = value * SECONDS[q] / SECONDS[f]
    return value


def typed(value: float, field: FieldSchema) -> int | float:
    """An integer for an integer field (rounded) or a whole number, else the float."""
    if field.kind == "integer" or value.is_integer():
        return round(value) if field.kind == "integer" else int(value)
    return value


def stated_dimension(cmp_word: str, unit: str | None, money: bool) -> str:
    """What a comparison is about, from its words and unit: money ("cheaper than", "$"),
    duration ("longer than", "minutes"), size ("MB") or a plain number."""
    w = cmp_word.lower()
    if money or w.startswith(("cheaper", "pricier", "costlier", "costing", "priced")):
        return "money"
    if unit in QUERY_UNITS or w.startswith(("longer", "shorter")):
        return "duration"
    if unit in SIZE_UNITS:
        return "size"
    return "number"
