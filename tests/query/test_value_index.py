"""The value index (query.nl._reading._value_index): known values, cached by content."""

from __future__ import annotations

from agent_search.query.nl._reading._value_index import build_index, value_index, value_serials
from tests.support.query_schemas import music, read


def test_values_by_lower_case_text_odd_ones_apart() -> None:
    schemas = music()
    schemas[0].fields[1].values.append("!!!")  # punctuation at an end: found as a phrase
    q = read("tracks", "Track", schemas)
    index = build_index(q.candidates)
    paths = {q.candidates[pos].path for pos, _ in index.exact["ac/dc"]}
    assert paths == {"album.artist.Name"}
    assert ("Rock" in [v for _, v in index.exact["rock"]])
    assert [v for _, v, _ in index.odd] == ["!!!"]
    assert "u2" not in index.choices  # too short to be fuzzy-matched
    assert index.max_words == 2


def test_equal_content_shares_an_index_changed_values_do_not() -> None:
    """The cache is keyed by what the index holds, not by which objects hold it."""
    first = read("tracks", "Track")
    second = read("tracks", "Track")  # new schema objects, same values
    assert first.target is not second.target
    assert value_index(first.candidates, first.serials) is value_index(
        second.candidates, second.serials)
    changed = music()
    next(s for s in changed if s.id == "Genre").fields[1].values.append("Bossa Nova")
    third = read("tracks", "Track", changed)
    index = value_index(third.candidates, third.serials)
    assert "bossa nova" in index.exact
    assert "bossa nova" not in value_index(first.candidates, first.serials).exact


def test_serials_stand_for_values() -> None:
    a, b = value_serials(music()), value_serials(music())
    assert a == b and set(a) == {"artist", "album", "genre", "track", "invoice"}
    changed = music()
    changed[0].fields[1].values.pop()
    c = value_serials(changed)
    assert c["artist"] != a["artist"] and c["genre"] == a["genre"]
