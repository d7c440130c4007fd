"""Dates of a question: calendar periods, shifting by units, the bounds of a stated date.

Pure functions; a date that does not exist (or ends after 9999) raises ValueError or
OverflowError, which the parser turns into a warning.
"""

from __future__ import annotations

import datetime as dt


def is_year(value: float) -> bool:
    return value.is_integer() and 1900 <= value <= 2099


def period_start(now: dt.datetime, unit: str) -> dt.datetime:
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "week":
        return day - dt.timedelta(days=day.weekday())
    if unit == "month":
        return day.replace(day=1)
    if unit == "year":
        return day.replace(month=1, day=1)
    return day


def shift(moment: dt.datetime, n: int, unit: str) -> dt.datetime:
    """``moment`` moved by ``n`` days/weeks/months/years (day clamped to the month)."""
    if unit == "day":
        return moment + dt.timedelta(days=n)
    if unit == "week":
        return moment + dt.timedelta(weeks=n)
    months = n * (12 if unit == "year" else 1)
    index = moment.year * 12 + moment.month - 1 + months
    year, month = divmod(index, 12)
    month += 1
    last_day = (dt.date(year + month // 12, month % 12 + 1, 1) - dt.timedelta(days=1)).day
    return moment.replace(year=year, month=month, day=min(moment.day, last_day))


def date_bounds(text: str) -> tuple[str, str]:
    """The first instant of a date/month/year and the first instant after it (ISO).
    ValueError/OverflowError for a date that does not exist or ends after 9999."""
    if len(text) == 4:
        y = int(text)
        return dt.datetime(y, 1, 1).isoformat(), dt.datetime(y + 1, 1, 1).isoformat()
    if len(text) == 7:
        y, mo = int(text[:4]), int(text[5:7])
        ny, nm = (y + 1, 1) if mo == 12 else (y, mo + 1)
        return dt.datetime(y, mo, 1).isoformat(), dt.datetime(ny, nm, 1).isoformat()
    start = dt.datetime.fromisoformat(text.replace(" ", "T"))
    end = start + (dt.timedelta(days=1) if len(text) == 10 else dt.timedelta(seconds=1))
    return start.isoformat(), end.isoformat()
