"""The stop words of the package: moved to the language records
(:attr:`agent_search.language.ENGLISH.stopwords <agent_search.language.Language.stopwords>`,
``CHINESE.stopwords``); these names stay for one release so imports of
``agent_search.query.stopwords`` keep working."""

from __future__ import annotations

from agent_search.language import CHINESE as _CHINESE
from agent_search.language import ENGLISH as _ENGLISH

ENGLISH_FUNCTION_WORDS: frozenset[str] = _ENGLISH.function_words
"""Words that carry grammar, not a subject."""
ENGLISH_REQUEST_WORDS: frozenset[str] = _ENGLISH.request_words
"""The fillers of a request ("can you please help me find ...")."""
ENGLISH: frozenset[str] = _ENGLISH.stopwords
"""The English stop words."""
CHINESE: frozenset[str] = _CHINESE.stopwords
"""The Chinese stop words (function words and request words, on jieba's segmentation)."""

__all__ = ["CHINESE", "ENGLISH", "ENGLISH_FUNCTION_WORDS", "ENGLISH_REQUEST_WORDS"]
