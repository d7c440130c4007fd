"""Moved to :mod:`agent_search.language` (the script classes); kept for one release so
imports of ``agent_search._cjk`` keep working. Import from ``agent_search.language``."""

from __future__ import annotations

from agent_search.language import (
    CJK,
    CJK_CHAR,
    HAN,
    HAN_CHAR,
    HANGUL,
    HANGUL_JAMO,
    KANA,
    KANA_LETTERS,
)

__all__ = ["CJK", "CJK_CHAR", "HAN", "HANGUL", "HANGUL_JAMO", "HAN_CHAR", "KANA",
           "KANA_LETTERS"]
