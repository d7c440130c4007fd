"""Moved to :mod:`agent_search.language` (the Chinese record's numeral reader,
``CHINESE.read_numeral``); kept for one release so imports of
``agent_search._numerals_zh`` keep working."""

from __future__ import annotations

from agent_search.language._numerals_zh import (
    BIG,
    DIGIT,
    MAX_RUN,
    MAX_VALUE,
    NUMERALS,
    UNIT,
    numeral_value,
)

__all__ = ["BIG", "DIGIT", "MAX_RUN", "MAX_VALUE", "NUMERALS", "UNIT", "numeral_value"]
