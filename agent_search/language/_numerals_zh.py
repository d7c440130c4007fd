"""The value of a run of Chinese numeral characters (三千 3000, 三万五 35,000, 二〇二二
2022), for the readers that find such runs: the grounding's number check
(:mod:`agent_search.grounding._numbers_zh`, which decides which runs are numbers at all)
and the database question parser's amounts (:mod:`agent_search.query.nl._rules._numbers_zh`).

The grammar: digits, 十百千 within a section, 万/亿 sections; a run without 十百千万亿
is read digit by digit (a year); a last digit after a unit is one tenth of it (一千二 is
1,200). cn2an, the library for it, was measured and not taken (see the grounding module).

Bounded: a run longer than :data:`MAX_RUN` characters, or one whose value reaches
:data:`MAX_VALUE`, is not a number (None). No number anyone writes in characters is that
long, and an unbounded reading is an attack: 309 digits overflow a float, 4,301 exceed
Python's limit on converting a string to an int, and each 亿 multiplies the value by 10⁸.
"""

from __future__ import annotations

DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
         "七": 7, "八": 8, "九": 9}
UNIT = {"十": 10, "百": 100, "千": 1000}
BIG = {"万": 10_000, "亿": 100_000_000}
NUMERALS = "".join(DIGIT) + "".join(UNIT) + "".join(BIG)
MAX_RUN = 24
"""Characters of the longest run read as a number (九千九百九十九万九千九百九十九 is 15;
an 18-digit identity number written digit by digit is 18)."""
MAX_VALUE = 10**24
"""The value from which a run is not read as a number (far beyond any count, and exact
enough as a float)."""


def _digit_by_digit(run: str) -> int | None:
    """二〇二二 → 2022 (at most MAX_RUN digits: below MAX_VALUE); 两 is no digit of a year."""
    if len(run) > 1 and "两" in run:
        return None
    return int("".join(str(DIGIT[c]) for c in run))


def numeral_value(run: str) -> int | None:
    """The value of a run of numeral characters; None when it is not a well-formed one,
    or too long or too large to be a number (:data:`MAX_RUN`, :data:`MAX_VALUE`)."""
    if not run or len(run) > MAX_RUN:
        return None
    if not any(c in UNIT or c in BIG for c in run):
        return _digit_by_digit(run)
    total = section = number = 0
    last_unit = 1
    for c in run:
        if c in DIGIT:
            number = DIGIT[c]
        elif c in UNIT:
            section += (number or 1) * UNIT[c]
            number, last_unit = 0, UNIT[c]
        elif c == "万":
            total += (section + number) * 10_000
            section = number = 0
            last_unit = 10_000
        else:  # 亿
            total = (total + section + number) * 100_000_000
            section = number = 0
            last_unit = 100_000_000
    value = total + section + _last_digit(run, number, last_unit)
    return value if value < MAX_VALUE else None


def _last_digit(run: str, number: int, last_unit: int) -> int:
    """The value of the run's last digit: one tenth of the unit straight before it (三万五
    = 35,000, 一千二 = 1,200; not after 十: 二十五 is 25), else itself."""
    if number and len(run) > 1 and run[-1] in DIGIT and run[-2] not in DIGIT \
            and last_unit > 10:
        return number * (last_unit // 10)
    return number
