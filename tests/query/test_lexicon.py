"""Unit tests of the parser's pure pieces: words and phrases (agent_search.query.nl._lexicon)
and calendar arithmetic (agent_search.query.nl._rules._dates). No schema, no database."""

from __future__ import annotations

import datetime as dt

import pytest

from agent_search.query.nl._lexicon import (
    STOPWORDS,
    WORD,
    adjacent,
    escape_like,
    find_phrase,
    overlaps,
    plural_forms,
    stem,
    terms,
    words_of,
)
from agent_search.query.nl._rules._dates import date_bounds, is_year, period_start, shift


@pytest.mark.parametrize(("name", "words"), [
    ("UnitPrice", "unit price"), ("unit_price", "unit price"),
    ("agents.demo.unit-price", "unit price"), ("HTMLPage", "html page"), ("id", "id"),
])
def test_words_of_field_names(name: str, words: str) -> None:
    assert words_of(name) == words


@pytest.mark.parametrize(("phrase", "forms"), [
    ("track", {"track", "tracks"}), ("category", {"category", "categories"}),
    ("box", {"box", "boxes"}), ("invoice line", {"invoice line", "invoice lines"}),
    ("genres", {"genres", "genre", "genreses"}),
])
def test_plural_forms(phrase: str, forms: set[str]) -> None:
    assert forms <= plural_forms(phrase)


def test_find_phrase_only_on_word_boundaries() -> None:
    text = "rock and rockabilly, hard rock"
    assert find_phrase(text, "rock") == [(0, 4), (26, 30)]
    assert find_phrase(text, "abil") == []


def test_spans() -> None:
    assert overlaps((0, 4), (3, 6)) and not overlaps((0, 4), (4, 6))
    assert adjacent((0, 5), (6, 12), "music genres")
    assert not adjacent((0, 5), (10, 16), "music of genres")


def test_words_keep_names_whole() -> None:
    assert WORD.findall("albums by ac/dc, mail luisg@embraer.com.br") == [
        "albums", "by", "ac/dc", "mail", "luisg@embraer.com.br"]
    assert {"the", "of", "named", "records"} <= STOPWORDS


@pytest.mark.parametrize(("word", "want"), [
    ("monitors", "monitor"), ("batteries", "batter"), ("boxes", "box"), ("glass", "glass"),
    ("Jazz", "jazz"),
])
def test_stem(word: str, want: str) -> None:
    assert stem(word) == want


def test_terms_are_distinct_bounded_stems() -> None:
    assert terms(["Monitors", "monitor", "x" * 65, *[f"w{i}" for i in range(20)]])[:2] == [
        "monitor", "w0"]
    assert len(terms([f"w{i}" for i in range(20)])) == 8


def test_escape_like_neutralises_percent() -> None:
    assert escape_like("100%") == "100_"


def test_date_bounds() -> None:
    assert date_bounds("2024") == ("2024-01-01T00:00:00", "2025-01-01T00:00:00")
    assert date_bounds("2024-12") == ("2024-12-01T00:00:00", "2025-01-01T00:00:00")
    assert date_bounds("2024-02-28") == ("2024-02-28T00:00:00", "2024-02-29T00:00:00")
    for bad in ("2024-13", "2024-02-30", "9999-12-31"):
        with pytest.raises((ValueError, OverflowError)):
            date_bounds(bad)


def test_periods_and_shifts() -> None:
    now = dt.datetime(2025, 3, 31, 15, 30)
    assert period_start(now, "month") == dt.datetime(2025, 3, 1)
    assert period_start(now, "week") == dt.datetime(2025, 3, 31)
    assert period_start(now, "year") == dt.datetime(2025, 1, 1)
    assert shift(now, -1, "month") == dt.datetime(2025, 2, 28, 15, 30)  # day clamped
    assert shift(now, -2, "year").year == 2023
    with pytest.raises(ValueError):
        shift(now, -9999, "year")


def test_is_year() -> None:
    assert is_year(2010.0) and not is_year(10.0) and not is_year(2010.5)
