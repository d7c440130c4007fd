"""Follow-ups read against the previous turn: the builtin parser reads every turn, and
the previous turn's query is the state (swap, narrow, follow a relation, start fresh);
text searches carry the previous topic only when the last turn cannot stand alone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from agent_search.query.dsl import ModelSchema, RelationSchema, validate_dsl
from agent_search.query.followup import (
    FollowUpGenerator,
    partitive,
    points_back,
    read_text,
    stands_alone,
)
from agent_search.query.nl import BuiltinDSLGenerator, named_models
from tests.support.query_schemas import NOW, f

pytestmark = pytest.mark.anyio


def library() -> list[ModelSchema]:
    """Writer ← Book, and Loan: a schema of our own, none of the bench's or the docs'."""
    return [
        ModelSchema(id="Writer", table="writer", primary_key="WriterId", title_field="Name",
                    fields=[f("WriterId", "integer", primary=True),
                            f("Name", values=["Ursula Le Guin", "Jorge Borges", "Sigrid Undset"]),
                            f("Country", values=["Norway", "Chile", "Argentina", "Peru"]),
                            f("BirthYear", "integer")],
                    relations=[RelationSchema(name="books", type="hasMany", model="Book",
                                              key="WriterId", foreign="WriterId")]),
        ModelSchema(id="Book", table="book", primary_key="BookId", title_field="Title",
                    fields=[f("BookId", "integer", primary=True), f("Title"),
                            f("Genre", values=["Poetry", "Drama", "Essay"]),
                            f("Pages", "integer"), f("WriterId", "integer")],
                    relations=[RelationSchema(name="writer", type="hasOne", model="Writer",
                                              key="WriterId", foreign="WriterId")]),
    ]


async def read(*turns: str) -> dict[str, Any]:
    """The validated single query of the last turn read after the others."""
    schemas = library()
    generator = FollowUpGenerator(BuiltinDSLGenerator(now=lambda: NOW), turns[:-1])
    raw = await generator.generate(turns[-1], schemas)
    generated = validate_dsl(raw, schemas)
    assert len(generated.queries) == 1, raw
    query = generated.queries[0].to_json()
    query["explanation"] = generated.explanation
    return query


def conditions(query: dict[str, Any]) -> set[tuple[str, str, Any]]:
    return {(w["field"], w["op"], w["value"] if not isinstance(w["value"], list)
             else tuple(w["value"])) for w in query["wheres"]}


async def test_a_new_value_of_the_same_field_replaces_it() -> None:
    q = await read("Which writers come from Norway?", "and Chile?")
    assert q["model"] == "Writer"
    assert conditions(q) == {("Country", "=", "Chile")}
    assert q["explanation"].startswith("follow-up read swapping Country")


async def test_a_new_bound_of_a_compared_field_replaces_it() -> None:
    q = await read("Poetry books with more than 300 pages", "and under 100?")
    assert q["model"] == "Book"
    assert conditions(q) == {("Genre", "=", "Poetry"), ("Pages", "<", 100)}


async def test_pointing_back_adds_conditions_to_the_previous_query() -> None:
    q = await read("Show me books in the Drama genre", "which of those have over 250 pages?")
    assert q["model"] == "Book"
    assert conditions(q) == {("Genre", "=", "Drama"), ("Pages", ">", 250)}
    assert "narrowing" in q["explanation"]


async def test_pointing_back_to_another_table_follows_the_relation() -> None:
    q = await read("Writers from Argentina", "list their books")
    assert q["model"] == "Book"
    assert conditions(q) == {("writer.Country", "=", "Argentina")}
    assert "following Book.writer" in q["explanation"]


async def test_picking_among_the_previous_rows_narrows_them() -> None:
    q = await read("Writers from Chile", "which of them have more than 3 books?")
    assert q["model"] == "Writer"
    assert conditions(q) == {("Country", "=", "Chile"), ("count(books)", ">", 3)}


async def test_a_question_naming_its_own_table_starts_fresh() -> None:
    q = await read("Writers from Argentina", "Books in the Essay genre")
    assert q["model"] == "Book"
    assert conditions(q) == {("Genre", "=", "Essay")}
    assert q["explanation"].startswith("follow-up read alone")


async def test_a_chain_of_follow_ups_keeps_its_state() -> None:
    q = await read("Which writers come from Norway?", "and Chile?", "show me their books")
    assert q["model"] == "Book"
    assert conditions(q) == {("writer.Country", "=", "Chile")}


async def test_after_a_question_the_database_did_not_understand_the_turn_stands_alone() -> None:
    q = await read("How do I reset my password?", "Books in the Poetry genre")
    assert conditions(q) == {("Genre", "=", "Poetry")}


class Scripted:
    """A generator of our own that answers each text with a fixed reading."""

    name = "scripted"

    def __init__(self, answers: dict[str, dict[str, Any]]) -> None:
        self.answers = answers

    async def generate(self, query: str, schemas: Sequence[ModelSchema], *,
                       feedback: str | None = None) -> dict[str, Any]:
        return self.answers[query]


async def test_a_text_match_of_words_not_understood_is_kept_not_swapped() -> None:
    sea = {"or": [{"field": "Title", "op": "like", "value": "%sea%"},
                  {"field": "Genre", "op": "like", "value": "%sea%"}]}
    generator = Scripted({
        "Books of the sea": {"model": "Book", "wheres": [sea], "terms": ["sea"]},
        "only the ones in the Poetry genre": {
            "model": "Book", "wheres": [{"field": "Genre", "op": "=", "value": "Poetry"}]}})
    raw = await FollowUpGenerator(generator, ["Books of the sea"]).generate(
        "only the ones in the Poetry genre", library())
    assert raw["queries"][0]["wheres"] == [sea, {"field": "Genre", "op": "=",
                                                 "value": "Poetry"}]


async def test_a_reading_the_dsl_cannot_hold_falls_back_to_the_turn_alone() -> None:
    deep = {"field": "writer.books.writer.Country", "op": "=", "value": "Peru"}
    generator = Scripted({
        "Books by writers from Peru": {"model": "Book", "wheres": [deep]},
        "show me their writers": {"model": "Writer", "wheres": []},
        "who are their writers?": {"queries": [], "warnings": ["nothing understood"]}})
    raw = await FollowUpGenerator(generator, ["Books by writers from Peru"]).generate(
        "who are their writers?", library())
    assert raw["queries"] == []
    assert any("not kept" in w for w in raw["warnings"])


async def test_earlier_turns_are_bounded() -> None:
    generator = FollowUpGenerator(BuiltinDSLGenerator(), ["x"] * 50 + ["  ", "y" * 2000])
    assert len(generator.earlier) == 3
    assert max(len(t) for t in generator.earlier) == 500


def test_named_models_reads_plurals_and_ignores_values() -> None:
    schemas = library()
    assert named_models("list the books of these writers", schemas) == ["Book", "Writer"]
    assert named_models("and Chile?", schemas) == []


@pytest.mark.parametrize(("text", "alone"), [
    ("How do I rotate the signing keys of the server?", True),
    ("Invoices from Norway?", True),
    ("and asynchronously?", False),
    ("what about retries?", False),
    ("does that work on Windows too?", False),
    ("can it change the messages?", False),
    ("which of them are overdue?", False),
    ("can I use a bigger one?", False),
    ("Show me cities that have a port", True),
    ("Rivers that cross more than two countries", True),
    ("Is this setting per tenant?", False),
])
def test_stands_alone(text: str, alone: bool) -> None:
    assert stands_alone(text) is alone


@pytest.mark.parametrize(("text", "picks"), [
    ("which of those are overdue?", True), ("only the ones in the red binder", True),
    ("show me their invoices", False), ("what do they cost?", False)])
def test_partitive(text: str, picks: bool) -> None:
    assert partitive(text) is picks


def test_chinese_pronoun_points_back() -> None:
    assert points_back("它们的价格是多少？")
    assert stands_alone("北京的客户有哪些？")


def test_text_reading_carries_the_topic_only_when_needed() -> None:
    carried = read_text(["How do I stream a response body?", "And asynchronously?"])
    assert carried.query == "How do I stream a response body? And asynchronously?"
    assert carried.how == "with the previous question's topic"
    alone = read_text(["How do I stream a response body?", "Invoices from Norway?"])
    assert (alone.query, alone.how) == ("Invoices from Norway?", "alone")
    assert read_text(["  "]).how == "empty"
    chained = read_text(["How are tokens refreshed?", "and revoked?", "what about expiry?"])
    assert chained.query.startswith("How are tokens refreshed? and revoked?")


async def test_a_bad_history_is_a_clear_error_of_the_db_search(tmp_path) -> None:
    import sqlite3

    from agent_search import Request, Searcher
    from agent_search.config import SearchConfig
    from agent_search.db import DBHandler

    sqlite3.connect(tmp_path / "x.sqlite").executescript(
        "CREATE TABLE book (id INTEGER PRIMARY KEY, title TEXT);"
        "INSERT INTO book VALUES (1, 'Whales');")
    config = SearchConfig(home=tmp_path, db={"url": f"sqlite:///{tmp_path}/x.sqlite"})
    searcher = Searcher(config, handlers=[DBHandler(config)])
    try:
        for bad in ("not a list", [1, 2], ["q"] * 101):
            result = await searcher.search(Request(type="db", query="books",
                                                   options={"history": bad}))
            assert result.error and "options.history must be a list" in result.error
        good = await searcher.search(Request(type="db", query="and Whales?",
                                             options={"history": ["books about ships"]}))
        assert good.error is None and good.dsl is not None
        assert good.dsl["explanation"].startswith("follow-up read")
    finally:
        await searcher.aclose()


async def test_the_last_turn_fails_as_its_generator_fails() -> None:
    class Broken:
        name = "broken"

        async def generate(self, query: str, schemas: Sequence[ModelSchema], *,
                           feedback: str | None = None) -> dict[str, Any]:
            if query == "and Chile?":
                raise TimeoutError("the endpoint is slow")
            return {"queries": [], "fallback": True}

    with pytest.raises(TimeoutError):  # the db handler then falls back to builtin
        await FollowUpGenerator(Broken(), ["Writers from Peru"]).generate("and Chile?",
                                                                         library())
