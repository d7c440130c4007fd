"""MkDocs hook of ``make docs``: jieba quiet.

Material's search plugin segments the Chinese of the pages with jieba, whose logger prints
"Building prefix dict from the default dictionary ..." and three more lines at DEBUG level
on every build. The project sets jieba's level where it loads jieba itself
(agent_search/language/_chinese.py); here the docs build does the same.
"""

from __future__ import annotations

import logging
from typing import Any


def on_startup(**_: Any) -> None:
    try:
        import jieba
    except ImportError:  # the search plugin then does without it
        return
    jieba.setLogLevel(logging.WARNING)
