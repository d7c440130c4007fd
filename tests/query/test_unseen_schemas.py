"""Readings that held-out schemas asked for (names written as the world writes them):
a function word that is part of a field's name, a field of the model the subject points
at, "date of birth" in the plural, "the school with the largest …" when no model is
named, and silence when the rows shown would not hold what is asked."""

from __future__ import annotations

from agent_search.query.dsl import ModelSchema, RelationSchema, validate_dsl
from agent_search.query.nl._parser import parse
from tests.support.query_schemas import NOW, f


def _sport() -> list[ModelSchema]:
    """gymnast → people (hasOne by the gymnast's id), points per apparatus and in total."""
    return [
        ModelSchema(id="people", table="people", primary_key="People_ID", title_field="Name",
                    fields=[f("People_ID", "integer", primary=True), f("Name"),
                            f("Age", "integer"), f("Weight", "number"),
                            f("Date_of_Birth")],
                    relations=[RelationSchema(name="gymnasts", type="hasMany",
                                              model="gymnast", key="People_ID",
                                              foreign="Gymnast_ID")]),
        ModelSchema(id="gymnast", table="gymnast", primary_key="Gymnast_ID",
                    fields=[f("Gymnast_ID", "integer", primary=True),
                            f("Floor_Exercise_Points", "number"),
                            f("Rings_Points", "number"), f("Total_Points", "number"),
                            f("Coach", values=["Simon Woodroffe", "Peter Jones"])],
                    relations=[RelationSchema(name="people", type="hasOne", model="people",
                                              key="Gymnast_ID", foreign="People_ID")]),
    ]


def test_total_named_in_a_field_is_not_a_sum() -> None:
    out = parse("Show the gymnasts in descending order of total points.", _sport(), now=NOW)
    assert out["model"] == "gymnast"
    assert not out.get("aggregates")
    assert out["orders"] == [{"field": "Total_Points", "order": "desc"}]
    # said as a function of another field, it is one
    out = parse("What is the total of the rings points of gymnasts?", _sport(), now=NOW)
    assert out["aggregates"] == ["sum(Rings_Points)"]


def test_the_field_of_the_model_pointed_at_answers_on_that_model() -> None:
    out = parse("What is the name of the gymnast with the greatest weight?", _sport(),
                now=NOW)
    validate_dsl(out, _sport())
    assert out["model"] == "people"
    assert out["orders"] == [{"field": "Weight", "order": "desc"}]
    assert out["limit"] == 1
    assert {"field": "count(gymnasts)", "op": ">", "value": 0} in out["wheres"]


def test_date_of_birth_is_named_in_the_plural() -> None:
    out = parse('What are the dates of birth of gymnasts with coach "Peter Jones"?',
                _sport(), now=NOW)
    assert out["model"] == "people"
    assert out["wheres"] == [{"field": "gymnasts.Coach", "op": "=", "value": "Peter Jones"}]


def test_one_is_asked_for_when_the_subject_is_singular_but_not_a_model_name() -> None:
    schemas = [ModelSchema(id="university", table="university", primary_key="School_ID",
                           title_field="School",
                           fields=[f("School_ID", "integer", primary=True), f("School"),
                                   f("Founded", "integer"), f("Enrollment", "integer")])]
    out = parse("When was the school with the largest enrollment founded?", schemas,
                now=NOW)
    assert out["orders"] == [{"field": "Enrollment", "order": "desc"}]
    assert out["limit"] == 1
    out = parse("Which schools have the largest enrollment?", schemas, now=NOW)
    assert out.get("limit") != 1


def test_a_field_asked_of_the_model_pointed_at_that_cannot_be_said_there_is_silent() -> None:
    """The gymnast's own rows do not hold a name; when the question cannot be said of the
    people (a count of the gymnast's medals), nothing is shown, and the warning says why
    (before, the gymnasts were shown: rows without the names asked for)."""
    schemas = _sport()
    schemas[1] = schemas[1].model_copy(update={"relations": [
        *schemas[1].relations,
        RelationSchema(name="medals", type="hasMany", model="medal", key="Gymnast_ID",
                       foreign="Gymnast_ID")]})
    schemas.append(ModelSchema(id="medal", table="medal", primary_key="Medal_ID",
                               fields=[f("Medal_ID", "integer", primary=True),
                                       f("Gymnast_ID", "integer")],
                               relations=[RelationSchema(name="gymnast", type="hasOne",
                                                         model="gymnast", key="Gymnast_ID",
                                                         foreign="Gymnast_ID")]))
    out = parse("the names of gymnasts with more than 2 medals", schemas, now=NOW)
    assert out["queries"] == []
    assert any("'Name' is asked, a field of people" in w for w in out["warnings"])
    # their own field asked, the same condition is answered
    out = parse("the total points of gymnasts with more than 2 medals", schemas, now=NOW)
    assert out["model"] == "gymnast"
    assert out["wheres"] == [{"field": "count(medals)", "op": ">", "value": 2}]


def test_a_function_asked_per_group_with_no_group_read_is_silent() -> None:
    """"the average age for different job titles": no group is read ("job title" names no
    field), so one average over every row would be shown as the answer; nothing is."""
    schemas = [ModelSchema(id="Person", table="Person", primary_key="name",
                           fields=[f("name", primary=True), f("age", "integer"),
                                   f("job", values=["engineer", "doctor", "student"])])]
    out = parse("What is average age for different job title?", schemas, now=NOW)
    assert out["queries"] == []
    assert "'for different' asks for one number per group" in out["warnings"][-1]
    grouped = parse("What is the average age for each job?", schemas, now=NOW)
    assert grouped["group_by"] == ["job"] and grouped["aggregates"] == ["avg(age)"]
    assert parse("What is the average age of all people?", schemas,
                 now=NOW)["aggregates"] == ["avg(age)"]


def test_a_superlative_asked_of_each_group_is_the_groups_extreme() -> None:
    schemas = [ModelSchema(id="Person", table="Person", primary_key="name",
                           fields=[f("name", primary=True), f("age", "integer"),
                                   f("job", values=["engineer", "doctor", "student"])])]
    out = parse("How old is the youngest person for each job?", schemas, now=NOW)
    assert out["group_by"] == ["job"] and out["aggregates"] == ["min(age)"]
    assert not any("no condition on it" in w for w in out["warnings"])
    out = parse("the age of the oldest person in each job", schemas, now=NOW)
    assert out["aggregates"] == ["max(age)"]
    # a count asked for stays the count
    out = parse("How many people are in each job?", schemas, now=NOW)
    assert out["aggregates"] == ["count"]


def test_the_model_named_is_counted_not_a_field_of_its_rows_of_the_same_name() -> None:
    """airlines ← routes, and a route's ``airline`` code: "how many airlines" counts the
    airlines (before, routes grouped per airline counting their distinct codes)."""
    schemas = [
        ModelSchema(id="airlines", table="airlines", primary_key="alid", title_field="name",
                    fields=[f("alid", "integer", primary=True), f("name"),
                            f("country", values=["Russia", "France"])],
                    relations=[RelationSchema(name="routes", type="hasMany", model="routes",
                                              key="alid", foreign="alid")]),
        ModelSchema(id="routes", table="routes", primary_key="rid",
                    fields=[f("rid", "integer", primary=True), f("alid", "integer"),
                            f("airline", values=["AF", "SU"])],
                    relations=[RelationSchema(name="al", type="hasOne", model="airlines",
                                              key="alid", foreign="alid")]),
    ]
    out = parse("How many airlines does Russia have?", schemas, now=NOW)
    assert out["model"] == "airlines"
    assert out["wheres"] == [{"field": "country", "op": "=", "value": "Russia"}]
    assert not out.get("group_by")


def _books() -> list[ModelSchema]:
    """book ← publication (a book has many publications, each with a price)."""
    return [
        ModelSchema(id="book", table="book", primary_key="Book_ID", title_field="Title",
                    fields=[f("Book_ID", "integer", primary=True), f("Title"),
                            f("Issues", "number")],
                    relations=[RelationSchema(name="publications", type="hasMany",
                                              model="publication", key="Book_ID",
                                              foreign="Book_ID")]),
        ModelSchema(id="publication", table="publication", primary_key="Publication_ID",
                    fields=[f("Publication_ID", "integer", primary=True),
                            f("Book_ID", "integer"), f("Price", "number"),
                            f("Publisher", values=["Wiley", "Springer"])],
                    relations=[RelationSchema(name="book", type="hasOne", model="book",
                                              key="Book_ID", foreign="Book_ID")]),
    ]


def test_a_table_named_and_not_used_by_the_answer_is_silent() -> None:
    """The books ordered by their own title for "in descending order of publication
    price" do not account for the publications named: nothing, and the warning says
    which table."""
    out = parse("Show the titles of books in descending order of publication price.",
                _books(), now=NOW)
    assert out["queries"] == []
    assert "names the table publication" in out["warnings"][-1]
    # a table the answer reaches (a condition through it) or points at is accounted for
    out = parse("books with publications by Wiley", _books(), now=NOW)
    assert out["model"] == "book"
    out = parse("the prices of publications of books with more than 5 issues", _books(),
                now=NOW)
    assert out["model"] == "publication" and "queries" not in out
