"""Chinese text, behind the Chinese record: which characters are Chinese, one width for
Latin letters and digits, one script (simplified) for Chinese, and jieba's segmentation
(the record's tokenizer; shared by keyword extraction, the research planner and the
database question parser).

Chinese writes no spaces between words, so both readers ask jieba where words end. The
tokenizer is built once per process on first use (its dictionary loads in about a second):
callers on an event loop run the first Chinese text in a worker thread.
"""

from __future__ import annotations

import logging
import threading
from functools import lru_cache
from typing import Any

from agent_search.language._scripts import HAN, HAN_CHAR

CJK_CHARS = HAN
"""Han characters (CJK unified ideographs, extension A, compatibility ideographs)."""
CJK = HAN_CHAR
HALF_WIDTH = {**{c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}, 0x3000: 0x20}
"""Full-width ASCII (``５００元``, ``ＡＢＣ``, ``？``) and the ideographic space as their
ASCII forms: the same characters in another width. One character for one, so positions
in the folded text are positions in the original."""

_tokenizer: Any = None
_converter: Any = None
_lock = threading.Lock()


def has_cjk(text: str) -> bool:
    return CJK.search(text) is not None


def is_cjk(char: str) -> bool:
    return bool(char) and CJK.match(char) is not None


def fold_width(text: str) -> str:
    """``text`` with full-width ASCII as half-width (same length, see :data:`HALF_WIDTH`)."""
    return text.translate(HALF_WIDTH)


def to_simplified(text: str) -> str:
    """Traditional characters as simplified ("訂單" → "订单", "張偉" → "张伟") by OpenCC's
    ``t2s`` (phrase-aware; about a microsecond for a question, its dictionary loads in a
    few milliseconds). Only text holding Chinese is converted, and a conversion that
    changes the length is not used: positions in the result must be positions in the
    text."""
    if not has_cjk(text):
        return text
    global _converter
    if _converter is None:
        with _lock:
            if _converter is None:
                import opencc

                _converter = opencc.OpenCC("t2s.json")
    out = str(_converter.convert(text))
    return out if len(out) == len(text) else text


@lru_cache(maxsize=8192)
def normal_form(text: str) -> str:
    """How the parser compares a question with values and names: one width
    (:func:`fold_width`), one script (:func:`to_simplified`), lower case; one character
    for one."""
    return to_simplified(fold_width(text)).lower()


def jieba_tokenizer() -> Any:
    """One jieba tokenizer for the process, built on first use (see module)."""
    global _tokenizer
    if _tokenizer is None:
        with _lock:
            if _tokenizer is None:
                import jieba

                logging.getLogger("jieba").setLevel(logging.WARNING)
                # jieba's own default tokenizer, the one the kb's BM25 words and the
                # grounding's tagger use: its dictionary is loaded once per process
                tokenizer = jieba.dt
                tokenizer.initialize()
                _tokenizer = tokenizer
    return _tokenizer


def tokenizer_ready() -> bool:
    """The dictionary is loaded: segmenting costs microseconds, no second of loading."""
    return _tokenizer is not None


@lru_cache(maxsize=512)
def segments(text: str) -> tuple[tuple[int, int], ...]:
    """Where jieba's words of ``text`` start and end (whitespace left out); the same text
    is segmented once (a question is read once per model it may be about)."""
    out = []
    start = 0
    for word in jieba_tokenizer().lcut(text):
        end = start + len(word)
        if word.strip():
            out.append((start, end))
        start = end
    return tuple(out)


@lru_cache(maxsize=4096)
def word_share(word: str) -> float:
    """How often ``word`` stands as a word of its own in the text jieba's dictionary was
    counted on, as a share of all words (0 for a word it does not know): a language's
    statistic of how common a word is, e.g. about 0.013 for 是 and 0.0001 for 男."""
    tok = jieba_tokenizer()
    freq = tok.FREQ.get(word, 0) or 0
    return float(freq) / float(tok.total) if tok.total else 0.0

