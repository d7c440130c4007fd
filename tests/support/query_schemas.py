"""Small hand-written schemas for the parser's unit tests, and helpers to read a question
against one of them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from agent_search.query.dsl import FieldSchema, ModelSchema, RelationSchema
from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._reading._schema import model_mentions
from agent_search.query.nl._reading._value_index import value_serials

NOW = dt.datetime(2025, 6, 15, 15, 30)  # a Sunday


def f(name: str, kind: str = "string", **kw: object) -> FieldSchema:
    return FieldSchema.model_validate({"name": name, "kind": kind, **kw})


def music() -> list[ModelSchema]:
    """Artist ← Album ← Track → Genre, and Invoice with dates and amounts."""
    return [
        ModelSchema(id="Artist", table="Artist", primary_key="ArtistId", title_field="Name",
                    fields=[f("ArtistId", "integer", primary=True),
                            f("Name", values=["AC/DC", "Metallica", "Iron Maiden", "Queen",
                                              "U2"])],
                    relations=[RelationSchema(name="albums", type="hasMany", model="Album",
                                              key="ArtistId", foreign="ArtistId")]),
        ModelSchema(id="Album", table="Album", primary_key="AlbumId", title_field="Title",
                    fields=[f("AlbumId", "integer", primary=True),
                            f("Title", values=["Iron Maiden", "Big Ones", "Greatest Hits"]),
                            f("ArtistId", "integer")],
                    relations=[RelationSchema(name="artist", type="hasOne", model="Artist",
                                              key="ArtistId", foreign="ArtistId"),
                               RelationSchema(name="tracks", type="hasMany", model="Track",
                                              key="AlbumId", foreign="AlbumId")]),
        ModelSchema(id="Genre", table="Genre", primary_key="GenreId", title_field="Name",
                    fields=[f("GenreId", "integer", primary=True),
                            f("Name", values=["Rock", "Jazz", "Metal", "Latin", "Pop"])],
                    relations=[RelationSchema(name="tracks", type="hasMany", model="Track",
                                              key="GenreId", foreign="GenreId")]),
        ModelSchema(id="Track", table="Track", primary_key="TrackId", title_field="Name",
                    fields=[f("TrackId", "integer", primary=True), f("Name"),
                            f("AlbumId", "integer"), f("GenreId", "integer"),
                            f("Composer"), f("Milliseconds", "integer", unit="ms"),
                            f("Bytes", "integer"), f("UnitPrice", "number")],
                    relations=[RelationSchema(name="album", type="hasOne", model="Album",
                                              key="AlbumId", foreign="AlbumId"),
                               RelationSchema(name="genre", type="hasOne", model="Genre",
                                              key="GenreId", foreign="GenreId")]),
        ModelSchema(id="Invoice", table="Invoice", primary_key="InvoiceId",
                    fields=[f("InvoiceId", "integer", primary=True),
                            f("InvoiceDate", "datetime"), f("Total", "number"),
                            f("BillingCountry", values=["Brazil", "Germany", "USA"])]),
    ]


def people() -> list[ModelSchema]:
    return [ModelSchema(id="Employee", table="Employee", primary_key="EmployeeId",
                        fields=[f("EmployeeId", "integer", primary=True),
                                f("FirstName", values=["Jane", "Andrew"]), f("LastName"),
                                f("City", values=["Calgary", "Edmonton"])])]


def staff() -> list[ModelSchema]:
    """People with a workplace and the dates of their life and work."""
    return [ModelSchema(id="Customer", table="Customer", primary_key="CustomerId",
                        title_field="LastName",
                        fields=[f("CustomerId", "integer", primary=True), f("LastName"),
                                f("Company"), f("City", values=["Calgary", "Oslo"])]),
            ModelSchema(id="Staff", table="Staff", primary_key="StaffId",
                        fields=[f("StaffId", "integer", primary=True), f("LastName"),
                                f("BirthDate", "datetime"), f("HireDate", "datetime")])]


def shop() -> list[ModelSchema]:
    return [ModelSchema(id="product", table="products", primary_key="id", title_field="name",
                        fields=[f("id", "integer", primary=True), f("name"),
                                f("description", "text"), f("price", "number"),
                                f("stock", "integer"),
                                f("category", values=["audio", "computers"])])]


def model(schemas: Sequence[ModelSchema], model_id: str) -> ModelSchema:
    return next(s for s in schemas if s.id == model_id)


def read(text: str, target: str, schemas: Sequence[ModelSchema] | None = None,
         now: dt.datetime = NOW) -> Question:
    """``text`` read against the model ``target`` (of :func:`music` by default)."""
    schemas = list(schemas if schemas is not None else music())
    return Question.about(model(schemas, target), text=text, now=now, schemas=schemas,
                          models=model_mentions(text.lower(), schemas), fuzzy_cutoff=88.0,
                          serials=value_serials(schemas))


def fresh_plan(q: Question) -> Plan:
    """An empty plan for ``q`` (model names used up, as the parser starts)."""
    return Plan(target=q.target, used=[s for spans in q.models.values() for s in spans])
