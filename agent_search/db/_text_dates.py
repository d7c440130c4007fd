"""Dates stored as text, read as dates (issue 35).

Many databases keep dates in ``TEXT`` / ``VARCHAR`` columns ("2009-07-09", "1995-04-01
00:00:00", "18/03/1981"). Whether a column is one is decided from its data, not its name:
every value of a sample of its distinct values (the value index reads them anyway) must
be written in one of the fixed-width forms of :data:`FORMS`, and in only one of them
("03/04/2005" fits day-first and month-first: a column whose every value does is not
read as dates at all — right or silent).

A form whose text sorts as its dates do (year first, zero-padded) is compared as stored,
with the value bound in the same form, so an index on the column still serves. A
day-first or month-first form is rearranged in SQL into ``YYYY-MM-DD`` with ``substr``
and ``||`` (the same on SQLite and PostgreSQL) and compared with an ISO value. The
column's expression carries :class:`TextDate` as its type: it binds a date or datetime
value as text of the right form, and tells the builder (``sa_kind``) the column is a
date.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

MIN_VALUES = 2
"""Fewer distinct values say nothing about a form."""


@dataclass(frozen=True, slots=True)
class Form:
    """One way of writing a date: its pattern, its ``strptime`` form, its kind, and for a
    form that does not sort as text, where year, month and day sit (1-based, for
    ``substr``)."""

    pattern: re.Pattern[str]
    strptime: str
    kind: str
    parts: tuple[tuple[int, int], tuple[int, int], tuple[int, int]] | None = None


_YMD = r"\d{4}-\d{2}-\d{2}"
_DAY_FIRST = ((7, 4), (4, 2), (1, 2))
_MONTH_FIRST = ((7, 4), (1, 2), (4, 2))
FORMS: tuple[Form, ...] = (
    Form(re.compile(_YMD), "%Y-%m-%d", "date"),
    Form(re.compile(_YMD + r" \d{2}:\d{2}:\d{2}"), "%Y-%m-%d %H:%M:%S", "datetime"),
    Form(re.compile(_YMD + r"T\d{2}:\d{2}:\d{2}"), "%Y-%m-%dT%H:%M:%S", "datetime"),
    Form(re.compile(_YMD + r" \d{2}:\d{2}"), "%Y-%m-%d %H:%M", "datetime"),
    Form(re.compile(r"\d{4}/\d{2}/\d{2}"), "%Y/%m/%d", "date"),
    Form(re.compile(r"\d{2}/\d{2}/\d{4}"), "%d/%m/%Y", "date", _DAY_FIRST),
    Form(re.compile(r"\d{2}/\d{2}/\d{4}"), "%m/%d/%Y", "date", _MONTH_FIRST),
    Form(re.compile(r"\d{2}\.\d{2}\.\d{4}"), "%d.%m.%Y", "date", _DAY_FIRST),
    Form(re.compile(r"\d{2}-\d{2}-\d{4}"), "%d-%m-%Y", "date", _DAY_FIRST),
)
"""Fixed-width forms only: positions are what the SQL rearrangement relies on."""


class TextDate(sa.types.TypeDecorator[Any]):
    """A date held as text: binds a date or datetime as text in ``form``; its ``kind``
    (``date`` / ``datetime``) is what the column is compared as."""

    impl = sa.String
    cache_ok = True

    def __init__(self, kind: str, form: str) -> None:
        super().__init__()
        self.kind = kind
        self.form = form

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        if isinstance(value, dt.date):
            return value.strftime(self.form)
        return value


def _fits(form: Form, value: str) -> bool:
    if not form.pattern.fullmatch(value):
        return False
    try:
        dt.datetime.strptime(value, form.strptime)
    except ValueError:
        return False
    return True


def text_date(values: Iterable[Any]) -> Form | None:
    """The one form every value (of at least :data:`MIN_VALUES` distinct ones) is written
    in; None when a value is no text in one form, or when two forms fit them all."""
    sample = list(values)
    if len(sample) < MIN_VALUES or not all(isinstance(v, str) for v in sample):
        return None
    fitting = [f for f in FORMS if all(_fits(f, v) for v in sample)]
    return fitting[0] if len(fitting) == 1 else None


def as_date(col: sa.ColumnElement[Any], form: Form) -> sa.ColumnElement[Any]:
    """The column as a comparable date: as stored when its text sorts as dates, else
    rearranged into ``YYYY-MM-DD``; typed :class:`TextDate` either way."""
    if form.parts is None:
        return sa.type_coerce(col, TextDate(form.kind, form.strptime))
    (y, yn), (m, mn), (d, dn) = form.parts
    year, month, day = (sa.func.substr(col, start, n, type_=sa.String)
                        for start, n in ((y, yn), (m, mn), (d, dn)))
    iso = year + "-" + month + "-" + day
    return sa.type_coerce(iso, TextDate(form.kind, "%Y-%m-%d"))
