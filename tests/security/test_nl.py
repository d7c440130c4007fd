"""The natural-language parser on hostile and odd questions: whatever the words, it
returns a DSL that validates against the schemas (so nothing unknown reaches SQL), or the
one-line strict error; never another exception, and its work stays bounded."""

from __future__ import annotations

import datetime as dt
import time

from hypothesis import given
from hypothesis import strategies as st

from agent_search.query.dsl import DSLGenerationError, FieldSchema, ModelSchema, validate_dsl
from agent_search.query.nl import parse

from ..support.query_schemas import music, people, shop

_NOW = dt.datetime(2025, 6, 15, 15, 30)
# words every rule reacts to, so random sentences exercise all the extractors together
_WORDS = [
    "tracks", "albums", "artists", "genres", "invoices", "products", "employees", "by",
    "in", "the", "not", "except", "between", "and", "or", "from", "to", "after", "before",
    "since", "until", "during", "last", "past", "this", "year", "month", "30", "days",
    "March", "may", "2024", "2024-02-30", "1999", "9999", "$", "€100", "1,000", "1,5", "5k",
    "minutes", "ms", "over", "under", "at least", "more than", "or more", "top", "5",
    "most expensive", "cheapest", "latest", "longest", "sorted by", "name", "desc",
    "alphabetical", "z-a", "highest", "total", "with", "having", "named", "called",
    "titled", "containing", "the word", "in the title", '"', "'", "“", "”", "Jazz", "AC/DC",
    "Metalica", "Iron Maiden", "Rock", "U2", "u2", "Jane", "Calgary", "in stock",
    "out of stock", "how many", "average", "%", "_", "\\", ";", "--", "DROP", "0", "-1",
    "99999999999999999", "work at", "working for", "employed by", "composed by",
    "written by", "hired", "born", "Apple", "ＴＲＡＣＫＳ", "ß", "İ", "\u200b", "\x00", "𝔍𝔞𝔷𝔷",
]
_SENTENCES = st.lists(st.one_of(st.sampled_from(_WORDS), st.text(max_size=12)),
                      max_size=40).map(" ".join)
_SCHEMA_SETS = st.sampled_from(["music", "shop", "people", "odd"])


def _schemas(name: str) -> list[ModelSchema]:
    if name == "odd":  # a title field that names no field, a relation to nowhere
        return [ModelSchema(id="thing", table="things", title_field="missing",
                            fields=[FieldSchema(name="id", kind="integer", primary=True),
                                    FieldSchema(name="kind", values=["a b", "%", "x" * 300])],
                            relations=[])]
    return {"music": music, "shop": shop, "people": people}[name]()


@given(query=_SENTENCES, which=_SCHEMA_SETS, strict=st.booleans())
def test_any_question_gives_a_valid_dsl_or_the_strict_error(query: str, which: str,
                                                             strict: bool) -> None:
    schemas = _schemas(which)
    started = time.perf_counter()
    try:
        out = parse(query[:500], schemas, now=_NOW, strict=strict)
    except DSLGenerationError as exc:
        assert strict and "query.strict" in str(exc) and "\n" not in str(exc)
        return
    validate_dsl(out, schemas, allow_empty=True)
    assert time.perf_counter() - started < 2.0


def test_a_title_field_that_names_no_field_is_no_crash() -> None:
    """A schema handed in directly may name a title field it lacks: "called X" used to
    raise StopIteration out of the parser (a RuntimeError in the coroutine)."""
    schemas = _schemas("odd")
    out = parse("things called Bob", schemas, now=_NOW)
    validate_dsl(out, schemas, allow_empty=True)
