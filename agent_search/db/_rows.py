"""Rows as items: ranking terms as words, people's names as titles, values as JSON;
database errors as one line.

Pure helpers of :mod:`agent_search.db.handler` (no I/O)."""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import re
import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from agent_search.db._catalog import ModelEntry
from agent_search.types import QueryWhere


def word_pattern(term: str) -> re.Pattern[str]:
    """``term`` as a word, or as the stem of one with a plural ending ("batter" matches
    "battery" and "batteries", "work" matches "works" but not "Workstation", "monitor"
    not "monitoring")."""
    return re.compile(r"(?<!\w)" + re.escape(term) + r"(?:s|es|y|ies)?(?!\w)",
                      re.IGNORECASE)


def coverage(row: dict[str, Any], terms: list[re.Pattern[str]]) -> float:
    """Share of ``terms`` found as words in the row's text values (related titles
    included)."""
    text = " ".join(str(v) for v in row.values() if isinstance(v, str))
    return sum(1 for t in terms if t.search(text)) / len(terms)


def name_fields(entry: ModelEntry) -> list[str]:
    """``FirstName``/``LastName``-style columns, first name first, for titles of people."""
    return list(_name_columns(tuple(c.name for c in entry.table.columns)))


@functools.lru_cache(maxsize=1024)
def _name_columns(cols: tuple[str, ...]) -> tuple[str, ...]:
    first = [c for c in cols if c.lower().replace("_", "") in ("firstname", "givenname")]
    last = [c for c in cols if c.lower().replace("_", "") in ("lastname", "surname",
                                                               "familyname")]
    return (*first, *last)


def present(entry: ModelEntry, names: Sequence[str | None]) -> list[str]:
    cols = {c.name.lower(): c.name for c in entry.table.columns}
    return [cols[n.lower()] for n in names if n and n.lower() in cols]


def unique(names: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(names))


def render(data: dict[str, Any], *, skip: set[str | None], related: dict[str, Any],
            foreigns: set[str]) -> str:
    parts = [f"{k}: {v}" for k, v in related.items()]
    parts += [f"{k}: {v}" for k, v in data.items()
              if k not in skip and k not in foreigns and v not in (None, "")]
    return "; ".join(parts)


def jsonable(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() and value.as_tuple().exponent \
            == 0 else float(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(bytes(value))} bytes>"
    return value


def title_of(entry: ModelEntry, row: dict[str, Any], record_id: Any) -> str:
    """People first: an Employee's "Title" is a job title, its name is "First Last"; else
    the title field, else the model's label and the record id."""
    names = [str(row[n]) for n in name_fields(entry) if row.get(n) not in (None, "")]
    if names:
        return " ".join(names)
    tf = entry.schema.title_field
    if tf and row.get(tf) not in (None, ""):
        return str(row[tf])
    label = entry.schema.label or entry.id
    return f"{label} {record_id}"


def describe_where(where: QueryWhere) -> str:
    """The words of a (text-match) where, for a warning."""
    clauses = where.or_ or where.and_ or [where]
    words = list(dict.fromkeys(str(c.value).strip("%") for c in clauses if c.field))
    return ", ".join(repr(w) for w in words[:8]) or "the text match"


def db_message(exc: SQLAlchemyError) -> str:
    """The driver's first line of a database error, with its class name."""
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip().splitlines()
    return f"{type(orig or exc).__name__}: {text[0] if text else ''}"
