"""One stop-word list per language (its record's), shared by the keyword extractor and
the parser, and still importable from the old module; the keyword extractor's async
entry point."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agent_search import language
from agent_search.query import _keyword_stopwords as keyword_stopwords
from agent_search.query import stopwords as old_module
from agent_search.query.keyword import extract_keywords, extract_keywords_async
from agent_search.query.nl import _lexicon as lexicon

ENGLISH = language.ENGLISH.stopwords
CHINESE = language.CHINESE.stopwords
ENGLISH_FUNCTION_WORDS = language.ENGLISH.function_words
ENGLISH_REQUEST_WORDS = language.ENGLISH.request_words


def test_the_keyword_extractor_and_the_parser_use_the_same_lists() -> None:
    assert keyword_stopwords.EN_STOPWORDS is ENGLISH
    assert keyword_stopwords.ZH_STOPWORDS is CHINESE
    assert (old_module.ENGLISH, old_module.CHINESE) == (ENGLISH, CHINESE)
    assert old_module.ENGLISH_FUNCTION_WORDS is ENGLISH_FUNCTION_WORDS
    assert lexicon.STOPWORDS == ENGLISH | lexicon.DATA_WORDS | CHINESE | lexicon.ZH_DATA_WORDS
    assert ENGLISH == ENGLISH_FUNCTION_WORDS | ENGLISH_REQUEST_WORDS


def test_what_the_lists_hold() -> None:
    assert {"the", "of", "without", "don't"} <= ENGLISH_FUNCTION_WORDS
    assert {"please", "find", "show", "list"} <= ENGLISH_REQUEST_WORDS
    assert {"records", "named", "count"} <= lexicon.DATA_WORDS
    assert not {"records", "named"} & ENGLISH  # the parser's words stay the parser's
    assert {"的", "请问"} <= CHINESE
    assert {"记录", "所有"} <= lexicon.ZH_DATA_WORDS and not lexicon.ZH_DATA_WORDS & CHINESE
    assert extract_keywords("please list the records without errors") == ["records", "errors"]


@pytest.mark.anyio
async def test_the_async_entry_point_reads_long_text_in_a_thread(
        monkeypatch: pytest.MonkeyPatch) -> None:
    threaded: list[str] = []
    real = anyio.to_thread.run_sync

    async def spy(fn: Any, *args: Any) -> Any:
        threaded.append(args[0][:5])
        return await real(fn, *args)

    monkeypatch.setattr(anyio.to_thread, "run_sync", spy)
    assert await extract_keywords_async("wireless headphones") == ["wireless headphones"]
    long = "wireless headphones " * 60
    assert await extract_keywords_async(long) == extract_keywords(long)
    assert await extract_keywords_async("café crème") == ["café crème"]
    assert threaded == ["wirel", "café "]
