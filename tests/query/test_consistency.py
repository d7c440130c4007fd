"""The finished reading's shape against the words: a superlative with nothing ordered, a
count with nothing counted, a number per group with no group formed answer nothing
(:mod:`agent_search.query.nl._answer._consistency`), whatever the calibrated floor."""

from __future__ import annotations

from typing import Any

from agent_search.query.nl._answer import _calibration as calibration
from agent_search.query.nl._answer._consistency import unaccounted
from agent_search.query.nl._parser import parse
from tests.support.query_schemas import NOW, f, music

ALBUMS: dict[str, Any] = {"model": "Album", "wheres": [], "orders": []}


def test_a_count_asked_with_nothing_counted_is_unaccounted() -> None:
    schemas = music()
    reason = unaccounted("how many albums are there", ALBUMS, schemas)
    assert reason is not None and "'how many'" in reason
    assert unaccounted("how many albums are there", {**ALBUMS, "total_asked": True},
                       schemas) is None
    assert unaccounted("albums by Queen", ALBUMS, schemas) is None


def test_the_maximum_number_of_is_an_amount_not_a_count() -> None:
    tracks = {"model": "Track", "aggregates": ["max(Bytes)"]}
    assert unaccounted("the maximum number of bytes of a track", tracks, music()) is None


def test_a_field_holding_a_number_of_things_accounts_for_the_count() -> None:
    schemas = music()
    schemas[1].fields.append(f("NumTracks", "integer"))
    album = {"model": "Album", "wheres": [{"field": "NumTracks", "op": ">", "value": 10}]}
    assert unaccounted("albums whose number of tracks is over 10", album, schemas) is None


def test_a_number_per_group_with_no_group_is_unaccounted() -> None:
    schemas = music()
    counted = {**ALBUMS, "total_asked": True}
    reason = unaccounted("the number of albums in different genres", counted, schemas)
    assert reason is not None and "'in different'" in reason
    grouped = {**counted, "group_by": ["GenreId"], "aggregates": ["count"]}
    assert unaccounted("the number of albums in different genres", grouped, schemas) is None
    # "how many different" counts distinct values: no group asked
    assert unaccounted("the number of different albums", counted, schemas) is None


def test_each_row_of_the_table_answered_is_no_group() -> None:
    """"the title and the track count of each album" asked of albums: one value per row."""
    counted = {**ALBUMS, "total_asked": True}
    assert unaccounted("the title and the number of tracks of each album", counted,
                       music()) is None
    reason = unaccounted("the number of albums for each genre", counted, music())
    assert reason is not None and "'for each'" in reason


def test_a_superlative_with_nothing_ordered_is_unaccounted() -> None:
    schemas = music()
    groups = {"model": "Track", "group_by": ["GenreId"], "aggregates": ["count"]}
    reason = unaccounted("the most common genre of tracks", groups, schemas)
    assert reason is not None and "'most'" in reason
    ranked = {**groups, "orders": [{"aggregate": "count", "order": "desc"}], "limit": 1}
    assert unaccounted("the most common genre of tracks", ranked, schemas) is None
    longest = {"model": "Track", "aggregates": ["max(Milliseconds)"]}
    assert unaccounted("the longest track", longest, schemas) is None


def test_a_superlative_naming_a_field_or_inside_a_quoted_value_asks_nothing() -> None:
    schemas = music()
    schemas[1].fields.append(f("Highest_Chart", "integer"))
    assert unaccounted("albums and their highest chart", ALBUMS, schemas) is None
    titled = {"model": "Album", "wheres": [{"field": "Title", "op": "=",
                                            "value": "Greatest Hits"}]}
    assert unaccounted('the album "Greatest Hits"', titled, schemas) is None
    assert unaccounted("the album Greatest Hits", titled, schemas) is None


def test_an_unaccounted_reading_answers_nothing_whatever_the_floor() -> None:
    schemas = music()
    out = parse("albums by Queen", schemas, now=NOW)
    found = calibration.assess("how many of the albums in each genre", out, [], None,
                               schemas)
    assert found.unaccounted is not None
    silent = calibration.gated(dict(out), found, threshold=0.0)
    assert silent["queries"] == [] and silent["warnings"][-1] == found.unaccounted
    plain = calibration.assess("albums by Queen", out, [], None, schemas)
    assert plain.unaccounted is None
    assert calibration.gated(dict(out), plain, threshold=0.0) == out


def test_a_chinese_question_is_left_to_the_parsers_own_checks() -> None:
    assert unaccounted("多少张专辑", ALBUMS, music()) is None
