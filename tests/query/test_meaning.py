"""Phrases matched to names by meaning (``db.match_by_meaning``), with the real offline
embedding model, on a schema made up here: a leftover phrase is read as the model or field
it means only above the schema's own floor, and the second reading is kept only when it
understood more."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from agent_search.embedding import FastEmbedder, prepare_model_dir
from agent_search.query.dsl import ModelSchema, RelationSchema
from agent_search.query.nl import BuiltinDSLGenerator
from agent_search.query.nl._reading._meaning import NameMeanings, Reading, name_text, rewrite
from tests.support.query_schemas import NOW, f

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def meanings(tmp_path_factory: pytest.TempPathFactory) -> NameMeanings:
    home = tmp_path_factory.mktemp("meaning-model")
    model = FastEmbedder(prepare_model_dir(home, 256, "weights"), int8="weights")
    return NameMeanings(model.embed)


def schemas() -> list[ModelSchema]:
    return [
        ModelSchema(id="arena", table="arena", primary_key="arena_id", title_field="title",
                    fields=[f("arena_id", "integer", primary=True), f("title"),
                            f("seats", "integer"), f("opened", "integer")]),
        ModelSchema(id="nation", table="nation", primary_key="code", title_field="label",
                    fields=[f("code", primary=True), f("label", values=["Norway", "Chile"]),
                            f("head_count", "integer"), f("surface_area", "number")]),
        ModelSchema(id="accident", table="accident", primary_key="id",
                    fields=[f("id", "integer", primary=True), f("fatalities", "integer"),
                            f("wounded", "integer"), f("happened_on", "date"),
                            f("code")],
                    relations=[RelationSchema(name="nation", type="hasOne", model="nation",
                                              key="code", foreign="code")]),
        ModelSchema(id="employee", table="employee", primary_key="id", title_field="full_name",
                    fields=[f("id", "integer", primary=True), f("full_name"),
                            f("wage", "number"), f("hired", "date")]),
    ]


def names(readings: Sequence[Reading]) -> dict[str, str]:
    return {r.phrase: r.name for r in readings}


@pytest.mark.parametrize(("question", "leftover", "expected"), [
    ("total deaths in accidents", ["deaths"], {"deaths": "fatalities"}),
    ("employees with a salary over 5000", ["salary"], {"salary": "wage"}),
    ("accidents with many people injured", ["people", "injured"],
     {"people injured": "wounded"}),  # adjacent leftover words read as one phrase
])
async def test_a_leftover_phrase_is_read_as_the_name_it_means(
        meanings: NameMeanings, question: str, leftover: list[str],
        expected: dict[str, str]) -> None:
    assert names(await meanings.readings(question, leftover, schemas())) == expected


@pytest.mark.parametrize(("question", "leftover"), [
    ("arenas with banana", ["banana"]),            # means no name
    ("accidents in Gelderland", ["Gelderland"]),   # written as a name: a value, not a field
    ("accidents with two", ["two"]),               # a number
    ("arenas with at least 2 seats", ["least"]),   # a word of degree, never a name
    ("the most wounded", ["most"]),
])
async def test_nothing_is_read_without_a_meaning_above_the_floor(
        meanings: NameMeanings, question: str, leftover: list[str]) -> None:
    assert await meanings.readings(question, leftover, schemas()) == []


async def test_one_name_is_read_once(meanings: NameMeanings) -> None:
    found = await meanings.readings("countries with more than 10 million inhabitants",
                                    ["countries", "inhabitants"], schemas())
    assert [r.name for r in found] == ["nation"]


async def test_a_schema_of_few_names_has_no_floor_and_no_reading(
        meanings: NameMeanings) -> None:
    small = [ModelSchema(id="employee", table="employee", primary_key="id",
                         fields=[f("id", "integer", primary=True), f("wage", "number")])]
    assert await meanings.readings("salary of employees", ["salary"], small) == []


def test_names_and_rewrite() -> None:
    assert name_text("Net_Worth_Millions") == "net worth millions"
    assert name_text("HireDate") == "hire date" and name_text("IDNumber") == "id number"
    assert rewrite("Total Deaths in accidents", [Reading("deaths", "fatalities", 0.8)]) == (
        "Total fatalities in accidents")


async def test_the_generator_keeps_the_second_reading_only_when_it_understood_more(
        meanings: NameMeanings) -> None:
    plain = BuiltinDSLGenerator(now=lambda: NOW)
    by_meaning = BuiltinDSLGenerator(now=lambda: NOW, meanings=meanings)
    question = "employees ordered by salary"
    before = await plain.generate(question, schemas())
    after = await by_meaning.generate(question, schemas())
    assert not before.get("orders")
    assert after["orders"] == [{"field": "wage", "order": "asc"}], after
    assert any("'salary' read as 'wage' (by meaning" in w for w in after["warnings"])
    # nothing to read: the same DSL as without
    same = "employees hired in 2020"
    assert await by_meaning.generate(same, schemas()) == await plain.generate(same, schemas())


async def test_no_model_leaves_name_matching_alone(tmp_path: Path) -> None:
    def broken(texts: list[str]) -> object:
        raise RuntimeError("embedding model files missing")

    generator = BuiltinDSLGenerator(now=lambda: NOW, meanings=NameMeanings(broken))
    out = await generator.generate("employees ordered by salary", schemas())
    assert not out.get("orders")
    assert any("not matched by meaning: RuntimeError: embedding model files missing" in w
               for w in out["warnings"])


async def test_a_model_read_alone_never_shows_every_record(meanings: NameMeanings) -> None:
    """A word read as a model with nothing asked of it would answer with every row of
    that model: the reading is not kept."""
    question = "how do I reach the staff"
    assert names(await meanings.readings(question, ["reach", "staff"], schemas())) \
        .get("staff") == "employee"
    plain = BuiltinDSLGenerator(now=lambda: NOW)
    by_meaning = BuiltinDSLGenerator(now=lambda: NOW, meanings=meanings)
    assert await by_meaning.generate(question, schemas()) == await plain.generate(
        question, schemas())


# -- models named by a synonym (issue 35) ------------------------------------------------


def school() -> list[ModelSchema]:
    """A table named ``Highschooler`` that questions call "students", with the friends
    and likes tables beside it (made up here, after the shape of a public schema)."""
    return [
        ModelSchema(id="Highschooler", table="Highschooler", primary_key="ID",
                    title_field="name",
                    fields=[f("ID", "integer", primary=True), f("name"),
                            f("grade", "integer")],
                    relations=[RelationSchema(name="friends", type="hasMany", model="Friend",
                                              key="student_id", foreign="ID")]),
        ModelSchema(id="Friend", table="Friend", primary_key="student_id",
                    fields=[f("student_id", "integer", primary=True),
                            f("friend_id", "integer")],
                    relations=[RelationSchema(name="student", type="hasOne",
                                              model="Highschooler", key="ID",
                                              foreign="student_id")]),
        ModelSchema(id="Likes", table="Likes", primary_key="student_id",
                    fields=[f("student_id", "integer", primary=True),
                            f("liked_id", "integer")]),
    ]


async def test_a_table_is_named_by_a_synonym(meanings: NameMeanings) -> None:
    """"students" is nearer ``highschooler`` than any other name, and far ahead of the
    other tables: read as the model (the mixed reading took it for the field ``grade``)."""
    found = await meanings.readings("Which students are in grade 10?", ["students"],
                                    school())
    assert names(found) == {"students": "highschooler"}


async def test_the_generator_answers_on_the_table_a_synonym_names(
        meanings: NameMeanings) -> None:
    plain = BuiltinDSLGenerator(now=lambda: NOW)
    by_meaning = BuiltinDSLGenerator(now=lambda: NOW, meanings=meanings)
    question = "Show the names of students in grade 10"
    before = await plain.generate(question, school())
    after = await by_meaning.generate(question, school())
    assert before.get("model") != "Highschooler" or before.get("terms"), before
    assert after["model"] == "Highschooler", after
    assert after["wheres"] == [{"field": "grade", "op": "=", "value": 10}], after
    assert not after.get("terms") and not after.get("relax"), after
    assert any("'students' read as 'highschooler' (by meaning" in w
               for w in after["warnings"])


def shop() -> list[ModelSchema]:
    """Two tables a word like "buyers" could mean as well as the other."""
    return [
        ModelSchema(id="customer", table="customer", primary_key="id", title_field="name",
                    fields=[f("id", "integer", primary=True), f("name"), f("city")]),
        ModelSchema(id="client", table="client", primary_key="id", title_field="label",
                    fields=[f("id", "integer", primary=True), f("label"),
                            f("budget", "number")]),
        ModelSchema(id="invoice", table="invoice", primary_key="id",
                    fields=[f("id", "integer", primary=True), f("total", "number"),
                            f("issued", "date")]),
    ]


async def test_a_word_two_tables_may_mean_is_read_as_neither(
        meanings: NameMeanings) -> None:
    """"buyers" is nearest ``customer`` (0.53 for "buyer") but ``customer`` and ``client``
    are more alike than that: no reading, a doubt — and the generator, which answered on
    invoices by the total ("budget" is client's), answers nothing and says why."""
    found = await meanings.readings("Which buyers have a budget over 100?", ["buyers"],
                                    shop())
    assert "buyers" not in names(found), found
    assert [d.split(" may name")[0] for d in found.doubts] == ["'buyers'"]
    plain = BuiltinDSLGenerator(now=lambda: NOW)
    by_meaning = BuiltinDSLGenerator(now=lambda: NOW, meanings=meanings)
    question = "Which buyers have a budget over 100?"
    assert (await plain.generate(question, shop())).get("model")  # answered, wrongly
    out = await by_meaning.generate(question, shop())
    assert out["queries"] == [] and out["confidence"] < 0.3, out
    assert any("'buyers' may name the table 'customer'" in w and "no records are shown" in w
               for w in out["warnings"]), out


async def test_a_doubtful_word_beside_a_named_table_is_no_doubt(
        meanings: NameMeanings) -> None:
    """The question names its table: which one is asked about is not open."""
    found = await meanings.readings("Which buyers are customers in Oslo?", ["buyers"],
                                    shop())
    assert found == [] and found.doubts == []


@pytest.mark.parametrize("word", ["bananas", "weather", "guitars"])
async def test_a_far_off_word_names_no_table(meanings: NameMeanings, word: str) -> None:
    found = await meanings.readings(f"{word} in grade 10", [word], school())
    assert found == [] and found.doubts == []  # no table near it: no doubt either
