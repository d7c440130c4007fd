"""Dates of a question: calendar periods, shifting by units, the bounds of a stated date
(pure functions: a date that does not exist, or ends after 9999, raises ValueError or
OverflowError), and the two date extractors: relative periods ("last 30 days", "this
month") and stated dates ("in 2024", "after March 2025", "from 2010 to 2012").
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from agent_search.query.nl._lexicon import overlaps
from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._reading._schema import Span, field_for


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


# -- extractors ----------------------------------------------------------------------------

_DATE = r"(?P<date>\d{4}-\d{2}-\d{2}(?:[ t]\d{2}:\d{2}(?::\d{2})?)?|\d{4}-\d{2}|(?:19|20)\d{2})"
_MONTH_NAMES = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|"
                r"aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug",
                                      "sep", "oct", "nov", "dec"), start=1)}
_MONTH_DATE = re.compile(r"\b(?:(?P<cmp>after|since|from|before|until|till|by|in|during)\s+)?"
                         r"(?P<mon>" + _MONTH_NAMES + r")(?:\s+(?:of\s+)?(?P<year>(?:19|20)\d{2}))?"
                         r"(?![\w-])", re.I)
_RANGE_END = (r"(?:(?P<{p}mon>" + _MONTH_NAMES + r")(?:\s+(?P<{p}year>(?:19|20)\d{{2}}))?|"
              r"(?P<{p}iso>\d{{4}}-\d{{2}}-\d{{2}}|\d{{4}}-\d{{2}}|(?:19|20)\d{{2}}))")
_DATE_RANGE = re.compile(r"\b(?:from|between)\s+" + _RANGE_END.format(p="a_")
                         + r"\s*(?:to|and|until|till|through|-|–)\s*"
                         + _RANGE_END.format(p="b_") + r"(?![\w-])", re.I)
_DATE_CMP = re.compile(r"\b(?P<cmp>after|since|from|before|until|till|by|in|during)\s+"
                       + _DATE + r"\b", re.I)
_REL_N = re.compile(r"\b(?:in\s+|within\s+|during\s+)?(?:the\s+)?(?:last|past|previous)\s+"
                    r"(?P<n>\d{1,4})\s+(?P<u>days?|weeks?|months?|years?)\b", re.I)
_REL_ONE = re.compile(r"\b(?P<which>this|last|past|previous)\s+(?P<u>day|week|month|year)\b|"
                      r"\b(?P<word>today|yesterday)\b", re.I)


@dataclass(frozen=True, slots=True)
class Period:
    """A stated period: ``start`` up to ``end`` (open-ended when None)."""

    span: Span
    start: dt.datetime
    end: dt.datetime | None
    text: str


def relative_periods(low: str, now: dt.datetime, plan: Plan) -> list[Period]:
    """"last 30 days", "past week" (rolling, up to now); "this month" (the current
    period); "last year" (the previous calendar period); "today", "yesterday". A period
    reaching before the year 1 is a warning (its words are used up)."""
    found: list[Period] = []
    for m in _REL_N.finditer(low):
        try:
            start = shift(now, -int(m.group("n")), m.group("u").rstrip("s"))
        except (ValueError, OverflowError):
            plan.warnings.append(f"{m.group(0).strip()!r} reaches beyond the year 1; "
                                 "ignored")
            plan.used.append(m.span())
            continue
        found.append(Period(m.span(), start, None, m.group(0).strip()))
    for m in _REL_ONE.finditer(low):
        if any(overlaps(m.span(), f.span) for f in found):
            continue
        unit = (m.group("u") or "day").lower()
        which = (m.group("which") or m.group("word")).lower()
        start, end = _one_period(now, which, unit)
        found.append(Period(m.span(), start, end, m.group(0).strip()))
    return found


def _one_period(now: dt.datetime, which: str, unit: str) -> tuple[dt.datetime,
                                                                  dt.datetime | None]:
    this_start = period_start(now, unit)
    if which in ("today", "this"):
        return this_start, None
    if which == "yesterday":
        return shift(this_start, -1, "day"), this_start
    if which == "past":
        return shift(now, -1, unit), None
    return shift(this_start, -1, unit), this_start  # last / previous: the whole period


def relative_dates(q: Question, plan: Plan) -> None:
    """A relative period on the date field it is about (``>= start``, or a range)."""
    for period in relative_periods(q.low, q.now, plan):
        place_date(q, plan, StatedDate.of_period(period))


@dataclass(frozen=True, slots=True)
class StatedDate:
    """A date the question states, in any language: ``word`` ("after", "in", "range"...;
    a word of :data:`BOUNDS` makes one side of it a condition, any other the period) and
    the bounds ``start``/``end`` (ISO) of the period it names."""

    span: Span
    word: str
    start: str
    end: str
    text: str

    @classmethod
    def of_period(cls, period: Period) -> StatedDate:
        """A relative period: from its start on when open-ended, else the period."""
        if period.end is None:
            return cls(period.span, "since", period.start.isoformat(), "", period.text)
        return cls(period.span, "in", period.start.isoformat(), period.end.isoformat(),
                   period.text)


BOUNDS: dict[str, tuple[str, int]] = {
    "after": (">=", 1), "since": (">=", 0), "before": ("<", 0),
    "until": ("<", 1), "till": ("<", 1), "by": ("<", 1)}
"""The words that make a stated date one-sided → the comparison and which of its bounds
(0: start, 1: end) it is against ("after 2024": from its end; "before": below its
start); the other words ("in", "during", "range") state the period itself."""


def place_date(q: Question, plan: Plan, d: StatedDate) -> None:
    """A stated date as a condition on the date field it is about: one side of it
    (:data:`BOUNDS`), or ``start <= x < end``; nothing when no date field is named or
    near, or its words are used up."""
    cand = field_for(q.candidates, "date", q.fields, d.span[0])
    if cand is None or not plan.free(d.span):
        return
    bound = BOUNDS.get(d.word)
    if bound is None:
        plan.add_period(cand.path, d.start, d.end, d.span, d.text)
        return
    op, value = bound[0], (d.start, d.end)[bound[1]]
    plan.add(cand.path, op, value, d.span, f"{cand.path} {op} {value} (\"{d.text}\")")


Said = tuple[str, str, str]
"""A date as stated: its word (see :data:`BOUNDS`) and the texts of its first and last
periods (``2024``, ``2024-03``, ``2024-03-05``)."""


def _range(m: re.Match[str], now: dt.datetime) -> Said | None:
    """"from 2010 to 2012", "between March 2024 and May 2024"."""
    a, b = month_text(m, "a_", now), month_text(m, "b_", now)
    return ("range", a, b) if a and b else None


def _month(m: re.Match[str], now: dt.datetime) -> Said | None:
    """"in March 2025", "during May" (the latest May up to now); "may", "march" alone
    are words, not dates."""
    text = month_text(m, "", now) if m.group("year") or m.group("cmp") else None
    return ((m.group("cmp") or "in").lower(), text, text) if text else None


def _day(m: re.Match[str], now: dt.datetime) -> Said | None:
    """"after 2024-03-05", "in 2024"; "from 2024-03-01" is that day onwards."""
    word, date = m.group("cmp").lower(), m.group("date")
    if word == "from" and len(m.group(0).split()[-1]) >= 10:
        word = "since"
    return word, date, date


_DATE_READINGS = ((_DATE_RANGE, _range), (_MONTH_DATE, _month), (_DATE_CMP, _day))
"""How dates are stated, longest reading first: a date in a reading already taken is
part of it."""


def stated_dates(low: str, now: dt.datetime, plan: Plan) -> list[StatedDate]:
    """The dates of :data:`_DATE_READINGS`, in question order. A date that does not
    exist is a warning (its words are used up)."""
    found: list[StatedDate] = []
    taken: list[Span] = []
    for pattern, read in _DATE_READINGS:
        for m in pattern.finditer(low):
            said = read(m, now)
            if said is None or any(overlaps(m.span(), t) for t in taken):
                continue
            taken.append(m.span())
            try:
                start, end = date_bounds(said[1])[0], date_bounds(said[2])[1]
            except (ValueError, OverflowError):
                plan.warnings.append(f"{m.group(0).strip()!r} is not a valid date; ignored")
                plan.used.append(m.span())
                continue
            found.append(StatedDate(m.span(), said[0], start, end, m.group(0).strip()))
    return sorted(found, key=lambda f: f.span)


def month_text(m: re.Match[str], prefix: str, now: dt.datetime) -> str | None:
    """``YYYY-MM`` (or the ISO date/year) a range end or month-name match stands for; a
    month without a year is the latest one up to ``now``."""
    groups = m.groupdict()
    if groups.get(prefix + "iso"):
        return str(groups[prefix + "iso"])
    month_name = groups.get(prefix + "mon")
    if not month_name:
        return None
    month = _MONTHS[month_name.lower().rstrip(".")[:3]]
    year_text = groups.get(prefix + "year")
    latest = now.year if month <= now.month else now.year - 1
    year = int(year_text) if year_text else latest
    return f"{year:04d}-{month:02d}"


def dates(q: Question, plan: Plan) -> None:
    """A stated date on the date field it is about: "after X" → ``>= end of X``, "since /
    from <day>" → ``>= start``, "before" → ``< start``, "until / by" → ``< end``; "in /
    during / from <period>", a bare month or a range → ``start <= x < end``."""
    for d in stated_dates(q.low, q.now, plan):
        place_date(q, plan, d)
