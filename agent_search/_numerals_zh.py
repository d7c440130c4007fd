"""The value of a run of Chinese numeral characters (三千 3000, 三万五 35,000, 二〇二二
2022), for the readers that find such runs: the grounding's number check
(:mod:`agent_search.grounding._numbers_zh`, which decides which runs are numbers at all)
and the database question parser's amounts (:mod:`agent_search.query.nl._numbers_zh`).

The grammar: digits, 十百千 within a section, 万/亿 sections; a run without 十百千万亿
is read digit by digit (a year); a last digit after a unit is one tenth of it (一千二 is
1,200). cn2an, the library for it, was measured and not taken (see the grounding module).
"""

from __future__ import annotations

DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
         "七": 7, "八": 8, "九": 9}
UNIT = {"十": 10, "百": 100, "千": 1000}
BIG = {"万": 10_000, "亿": 100_000_000}
NUMERALS = "".join(DIGIT) + "".join(UNIT) + "".join(BIG)


def numeral_value(run: str) -> int | None:
    """The value of a run of numeral characters; None when it is not a well-formed one."""
    if not any(c in UNIT or c in BIG for c in run):
        if len(run) > 1 and "两" in run:
            return None
        return int("".join(str(DIGIT[c]) for c in run))  # 二〇二二 → 2022
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
    if number and run[-1] in DIGIT and len(run) > 1 and run[-2] not in DIGIT \
            and last_unit > 10:
        number *= last_unit // 10  # 三万五 = 35,000, 一千二 = 1,200
    return total + section + number
