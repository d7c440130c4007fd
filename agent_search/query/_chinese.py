"""Moved to :mod:`agent_search.language` (the Chinese record and its helpers); kept for
one release so imports of ``agent_search.query._chinese`` keep working. A reader that
branches on :func:`has_cjk` should classify the text once instead
(:func:`agent_search.language.classify`) and keep its rules in a table keyed by the
language's name."""

from __future__ import annotations

from agent_search.language import (
    HALF_WIDTH,
    HAN,
    HAN_CHAR,
    fold_width,
    jieba_tokenizer,
    normal_form,
    segments,
    to_simplified,
    tokenizer_ready,
    word_share,
)

CJK_CHARS = HAN
CJK = HAN_CHAR


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a Han character (the Chinese record's script test)."""
    return CJK.search(text) is not None


def is_cjk(char: str) -> bool:
    """Whether ``char`` is a Han character."""
    return bool(char) and CJK.match(char) is not None


__all__ = ["CJK", "CJK_CHARS", "HALF_WIDTH", "fold_width", "has_cjk", "is_cjk",
           "jieba_tokenizer", "normal_form", "segments", "to_simplified", "tokenizer_ready",
           "word_share"]
