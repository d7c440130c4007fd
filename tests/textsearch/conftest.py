"""Fixtures of the text-search tests: a Searcher over ``CorpusHandler``s, a real (if
small) word-overlap handler per search type (tests/support/corpus.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_search import SearchConfig, Searcher

from ..support.corpus import DB_DOCS, KB_DOCS, WEB_DOCS, CorpusHandler, Handlers


@pytest.fixture
def handlers() -> Handlers:
    return Handlers(CorpusHandler("web", WEB_DOCS), CorpusHandler("kb", KB_DOCS),
                    CorpusHandler("db", DB_DOCS))


@pytest.fixture
def searcher(handlers: Handlers, tmp_path: Path) -> Searcher:
    # the corpus handlers score by word overlap, not on the calibrated scale: no floors
    s = Searcher(SearchConfig(home=tmp_path).merged(
        {t: {"min_score": 0} for t in ("web", "kb", "db")}))
    for h in (handlers.web, handlers.kb, handlers.db):
        s.registry.register(h)
    return s
