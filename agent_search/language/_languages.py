"""The two languages the package reads out of the box: English (the fallback) and
Chinese. Each is one :class:`~agent_search.language.Language` record built from the
package's data for it: stop words (:mod:`._stopwords`), Chinese numerals
(:mod:`._numerals_zh`), jieba's segmentation (:mod:`._chinese`), and the script classes
(:mod:`._scripts`).
"""

from __future__ import annotations

import re

from agent_search.language._chinese import jieba_tokenizer, tokenizer_ready
from agent_search.language._numerals_zh import NUMERALS, numeral_value
from agent_search.language._record import Language, install_fallback, register_language
from agent_search.language._scripts import HAN_CHAR
from agent_search.language._stopwords import (
    CHINESE_WORDS,
    ENGLISH_FUNCTION_WORDS,
    ENGLISH_REQUEST_WORDS,
)

_TOKEN_EN = re.compile(r"[\w][\w'’./+#-]*[\w+#]|[\w]|[^\w\s]")
"""A word (with inner apostrophes, dots, hyphens: "don't", "U.S.", "e-mail", "C++"), a
number, or one punctuation mark."""


def _tokens_en(text: str) -> list[str]:
    return _TOKEN_EN.findall(text)


def _tokens_zh(text: str) -> list[str]:
    return [word for word in jieba_tokenizer().lcut(text) if word.strip()]


ENGLISH = Language(
    name="en",
    script=None,
    tokenize=_tokens_en,
    function_words=ENGLISH_FUNCTION_WORDS,
    request_words=ENGLISH_REQUEST_WORDS,
)
"""English, also the fallback: text in a script no language claims is read as English
(a space-separated language with the generic rules)."""

CHINESE = Language(
    name="zh",
    script=HAN_CHAR,
    tokenize=_tokens_zh,
    function_words=CHINESE_WORDS,
    spaced=False,
    sentence_ends="。！？",
    clause_ends="，；：、",
    numerals=NUMERALS,
    read_numeral=numeral_value,
    ready=tokenizer_ready,
)
"""Chinese: a text holding a Han character; words by jieba; numbers in characters."""

install_fallback(ENGLISH)
register_language(CHINESE)
