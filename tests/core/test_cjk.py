"""The CJK character classes (issue 36 item 2): one vocabulary, and what it says."""

from __future__ import annotations

import re
from pathlib import Path

import agent_search
from agent_search.language import CJK_CHAR, HAN_CHAR, KANA, KANA_LETTERS


def test_han_is_the_three_blocks_and_nothing_else() -> None:
    for char in "中㐀豈":  # unified, extension A, compatibility
        assert HAN_CHAR.fullmatch(char), char
    for char in "あカ한a1。・":
        assert not HAN_CHAR.fullmatch(char), char


def test_cjk_is_kana_han_and_hangul() -> None:
    assert all(CJK_CHAR.fullmatch(c) for c in "中あカ한")
    assert not any(CJK_CHAR.fullmatch(c) for c in "aé1。，")


def test_kana_letters_leave_out_the_middle_dot_chinese_writes_too() -> None:
    assert re.fullmatch(f"[{KANA}]", "・")
    assert not re.fullmatch(f"[{KANA_LETTERS}]", "・")
    assert re.fullmatch(f"[{KANA_LETTERS}]", "カ")


_RANGE = re.compile(r"\\u(?:3400|4e00|3040|ac00)-|[\u3400\u4e00\u3040\uac00]-")


def test_no_module_keeps_its_own_copy_of_the_ranges() -> None:
    """The ranges are written in agent_search/language/_scripts.py only (they had drifted
    apart in six copies: a character was Chinese in one reader and not the next)."""
    root = Path(agent_search.__file__).parent
    home = root / "language" / "_scripts.py"
    copies = [str(p.relative_to(root)) for p in root.rglob("*.py")
              if p != home and _RANGE.search(p.read_text(encoding="utf-8"))]
    assert copies == []
