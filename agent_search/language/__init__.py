"""Languages as an extension point: one :class:`Language` record per language, a table of
them, and :func:`classify` to say once which one a text is in.

>>> from agent_search.language import classify
>>> classify("无线耳机推荐").name, classify("wireless headphones").name
('zh', 'en')

A record holds what every reader of text asks of a language: its script (how a text is
recognised), its tokenizer, its stop words, its numerals, its sentence and clause ends.
Readers keep their rules in tables keyed by :attr:`Language.name`, so adding a language
is a record (:func:`register_language`) and, where a reader needs more than its generic
rules, one line in that reader's table. English is the fallback, read for text in a
script no language claims.

The script classes (``HAN``, ``CJK_CHAR``...), the Chinese text helpers (width folding,
traditional to simplified, jieba's segmentation) and the Chinese numeral reader (with its
characters: ``DIGIT``, ``UNIT``, ``BIG``, ``NUMERALS``) are exported here too: they are the
data the records are built from, and a few readers (the choice of embedding model, the
knowledge base's sparse terms, the number checks) ask about scripts and numeral
characters rather than languages.
"""

from __future__ import annotations

from agent_search.language._chinese import (
    HALF_WIDTH,
    fold_width,
    jieba_tokenizer,
    normal_form,
    segments,
    to_simplified,
    tokenizer_ready,
    word_share,
)
from agent_search.language._languages import CHINESE, ENGLISH
from agent_search.language._numerals_zh import (
    BIG,
    DIGIT,
    MAX_RUN,
    MAX_VALUE,
    NUMERALS,
    UNIT,
    numeral_value,
)
from agent_search.language._record import (
    Language,
    classify,
    fallback,
    language_named,
    languages,
    register_language,
    sentence_breaks,
    unregister_language,
)
from agent_search.language._scripts import (
    CJK,
    CJK_CHAR,
    HAN,
    HAN_CHAR,
    HANGUL,
    HANGUL_JAMO,
    KANA,
    KANA_LETTERS,
)

__all__ = [
    "BIG",
    "CHINESE",
    "CJK",
    "CJK_CHAR",
    "DIGIT",
    "ENGLISH",
    "HALF_WIDTH",
    "HAN",
    "HANGUL",
    "HANGUL_JAMO",
    "HAN_CHAR",
    "KANA",
    "KANA_LETTERS",
    "MAX_RUN",
    "MAX_VALUE",
    "NUMERALS",
    "UNIT",
    "Language",
    "classify",
    "fallback",
    "fold_width",
    "jieba_tokenizer",
    "language_named",
    "languages",
    "normal_form",
    "numeral_value",
    "register_language",
    "segments",
    "sentence_breaks",
    "to_simplified",
    "tokenizer_ready",
    "unregister_language",
    "word_share",
]
