"""Dates written in Chinese, on the date field they are about: what :mod:`._dates` reads
in English.

- stated: "2024年" (the year), "2024年3月", "2024年3月5日" — a period; with "以后" /
  "之后" after it, from its end; "以来" / "起", from its start; "以前" / "之前", before
  its start; "2023年到2024年" (到, 至, -), a range;
- relative: "今天", "昨天", "本周", "上周", "本月" / "这个月", "上个月", "今年", "去年";
  "最近30天", "过去3个月", "近一年" (rolling, up to now).

Only questions holding Chinese characters are read here; ``now`` is the parser's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._rules._dates import (
    StatedDate,
    date_bounds,
    period_start,
    place_date,
    shift,
)
from agent_search.query.nl._rules._numbers_zh import chinese_number

_DAY = (r"(?P<{p}y>(?:19|20)\d{{2}})\s*年"
        r"(?:\s*(?P<{p}m>\d{{1,2}})\s*月(?:\s*(?P<{p}d>\d{{1,2}})\s*[日号])?)?")
_STATED = re.compile(_DAY.format(p="") + r"(?:\s*(?P<word>以后|之后|以来|起|开始|以前|之前))?")
_RANGE = re.compile(_DAY.format(p="a_") + r"\s*(?:到|至|-|~|～)\s*" + _DAY.format(p="b_"))
_ROLLING = re.compile(r"(?:最近|过去|近)\s*(?P<n>\d{1,4}|[零一二两三四五六七八九十百]+)\s*"
                      r"(?P<u>天|日|周|星期|个月|月|年)")
_ONE = {"今天": ("day", 0), "昨天": ("day", -1), "本周": ("week", 0), "这周": ("week", 0),
        "上周": ("week", -1), "本月": ("month", 0), "这个月": ("month", 0),
        "上个月": ("month", -1), "上月": ("month", -1), "今年": ("year", 0),
        "去年": ("year", -1)}
_ONE_RE = re.compile("|".join(sorted(_ONE, key=len, reverse=True)))
_UNITS = {"天": "day", "日": "day", "周": "week", "星期": "week", "个月": "month",
          "月": "month", "年": "year"}


_AROUND: dict[str | None, str] = {
    None: "in", "以后": "after", "之后": "after", "以前": "before", "之前": "before",
    "以来": "since", "起": "since", "开始": "since"}
"""The word after a stated date → the English word of :data:`~._dates.BOUNDS` that says
the same ("2024年以后" is "after 2024"); none: the period itself."""

Reading = Iterator[StatedDate]


def chinese_dates(q: Question, plan: Plan) -> None:
    """Each date said in Chinese as a condition on the date field it is about
    (:func:`~._dates.place_date`, as in English)."""
    for read in (_ranges, _stated, _rolling, _named_periods):
        for stated in read(q, plan):
            place_date(q, plan, stated)


def _ranges(q: Question, plan: Plan) -> Reading:
    """"2023年到2024年": from the first's start to the second's end."""
    for m in _RANGE.finditer(q.low):
        first, last = _bounds(m, "a_"), _bounds(m, "b_")
        if first and last:
            yield StatedDate(m.span(), "range", first[0], last[1], m.group(0))


def _stated(q: Question, plan: Plan) -> Reading:
    """"2024年3月", "2024年以后": the period, or one side of it (:data:`_AROUND`)."""
    for m in plan.unclaimed(_STATED, q.low):
        bounds = _bounds(m, "")
        if bounds is None:
            plan.warn(f"{m.group(0)!r} is not a valid date; ignored")
            plan.used.append(m.span())
        else:
            yield StatedDate(m.span(), _AROUND[m.group("word")], *bounds, m.group(0))


def _rolling(q: Question, plan: Plan) -> Reading:
    """"最近30天", "过去3个月": from that long ago on."""
    for m in plan.unclaimed(_ROLLING, q.low):
        n = chinese_number(m.group("n"))
        if n is not None:
            start = shift(q.now, -int(n), _UNITS[m.group("u")])
            yield StatedDate(m.span(), "since", start.isoformat(), "", m.group(0))


def _named_periods(q: Question, plan: Plan) -> Reading:
    """"今天", "上个月": this one from its start on; a past one, the whole period."""
    for m in plan.unclaimed(_ONE_RE, q.low):
        unit, back = _ONE[m.group(0)]
        this = period_start(q.now, unit)
        word, end = ("since", "") if back == 0 else ("in", this.isoformat())
        yield StatedDate(m.span(), word, shift(this, back, unit).isoformat(), end, m.group(0))


def _bounds(m: re.Match[str], p: str) -> tuple[str, str] | None:
    """The ISO start and end of the stated year / month / day, None if it does not exist."""
    year, month, day = m.group(p + "y"), m.group(p + "m"), m.group(p + "d")
    text = year + (f"-{int(month):02d}" if month else "") + (f"-{int(day):02d}" if day else "")
    try:
        return date_bounds(text)
    except (ValueError, OverflowError):
        return None
