"""Numbers as Chinese writes them: full-width digits, and numerals in characters.

An answer in Chinese may write a reference's "35" as "三十五", its "4.3万" as "四万三千",
its "30%" as "百分之三十" or "三成", its year as "二〇二二"; a model writes full-width
"２０２３" as often as "2023". All of these are read here as values, so the number check
of :mod:`agent_search.grounding._claims` compares what is said, not how it is written.

Reading a run of numeral characters is the easy part, done here in a few lines (the
grammar: digits, 十百千 within a section, 万/亿 sections, 点 for decimals, digit by
digit for years). cn2an, the library for it, was measured and not taken: 0.55 s to
import, it reads "三四" (three or four) as 34, and its sentence mode turns 一些 into 1些.
The hard part is which runs are numbers at all: 统一, 十分, 一直, 万一, 千万 hold numeral
characters and claim no number. In an answer's sentence, a run counts only where
jieba's tagger calls the word a numeral, measure or time word (``m``, ``q``, ``t``); an
approximate number (三四个, 十几, 十来个) claims no exact value, while 两千多, like
"2000多", claims 2000; "一" alone is as weak as English "one". In a reference every run
counts: a value too many there can only spare a sentence, never flag one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from agent_search.language import BIG as _BIG
from agent_search.language import DIGIT as _DIGIT
from agent_search.language import NUMERALS as _NUMERALS
from agent_search.language import numeral_value as _integer

_WIDTH = str.maketrans(
    {**{chr(0xFF10 + i): str(i) for i in range(10)},
     **{chr(0xFF21 + i): chr(0x41 + i) for i in range(26)},
     **{chr(0xFF41 + i): chr(0x61 + i) for i in range(26)},
     "％": "%", "．": ".", "＋": "+", "－": "-", "\u3000": " "})

_RUN = re.compile(
    rf"(?P<pct>百分之|千分之)?(?P<int>[{_NUMERALS}]+)"
    r"(?:点(?P<frac>[零〇一二三四五六七八九]{1,12})(?![零〇一二三四五六七八九])(?P<big>[万亿])?)?"
    r"(?P<tail>成|[多余几来])?")
_TAGGED_NUMERAL = ("m", "x", "q", "t")
"""jieba tags of the words a numeral run may lie in: numeral, non-word (it tags 〇 so),
measure word, time word (八年, 四日)."""


def half_width(text: str) -> str:
    """Full-width digits, Latin letters, ％ ． ＋ － and the ideographic space as their
    ASCII forms (character for character: offsets do not move)."""
    return text.translate(_WIDTH)


def starts_with_number(word: str) -> bool:
    """A word that starts with digits or two numeral characters (三万人): the tagger
    calling part of a number a name. One numeral character starts many names (三城,
    千代田区, 万军)."""
    return word[:1].isdigit() or numeral_runs.match(word) is not None


def _approximate(run: str) -> bool:
    """三四 (three or four), 五六: two neighbouring digits written together."""
    return (len(run) == 2 and run[0] in _DIGIT and run[1] in _DIGIT
            and _DIGIT[run[1]] - _DIGIT[run[0]] == 1)


_NOT_NUMERALS = frozenset({"十分", "万分", "百分"})
"""Words the tagger calls numerals that say "very" ("十分重要")."""
_RUN_CHARS = re.compile(rf"[{_NUMERALS}]+")
numeral_runs = re.compile(rf"[{_NUMERALS}]{{2,}}(?:点[零〇一二三四五六七八九]{{1,12}}[万亿]?)?")
"""Runs of two numeral characters or more (a single one is usually part of a word:
统一, 三星, 十分)."""


def _numeral_positions(tagged: Sequence[tuple[str, str]]) -> set[int]:
    """Positions in the text of characters in words tagged as numerals, but not in a
    four-character idiom made of two numbers (三番五次, 七上八下) or in 十分 ("very")."""
    out: set[int] = set()
    pos = 0
    for word, flag in tagged:
        if flag.startswith(_TAGGED_NUMERAL) and word not in _NOT_NUMERALS and not (
                len(word) == 4 and len(_RUN_CHARS.findall(word)) == 2
                and _RUN_CHARS.fullmatch(word) is None):
            out.update(range(pos, pos + len(word)))
        pos += len(word)
    return out


def _claimed(m: re.Match[str], numeral_at: set[int] | None) -> bool:
    """Whether a numeral run states a number: not a word (千万 "by all means", 万一 "in
    case", 百姓); in an answer's sentence (``numeral_at``: the positions of the tagger's
    numerals), not an approximate number (三四, 十几) nor a run outside a numeral word."""
    run, tail = m.group("int"), m.group("tail") or ""
    if run[0] in _BIG or (run[0] in "百千" and not m.group("pct")):
        return False
    if numeral_at is None:
        return True
    if (tail and tail in "几来") or _approximate(run):
        return False
    # 〇 is in numbers only (jieba cuts 自二〇〇五)
    return "〇" in run or all(i in numeral_at for i in range(m.start("int"), m.end("int")))


def _value(m: re.Match[str]) -> float | None:
    """The value of a numeral run: its integer, decimals after 点, times 万 or 亿 after
    them (二千一百八十四点三万 = 2184.3万)."""
    value = _integer(m.group("int"))
    if value is None:
        return None
    frac = m.group("frac")
    number = float(f"{value}.{''.join(str(_DIGIT[c]) for c in frac)}") if frac \
        else float(value)
    return number * _BIG[m.group("big")] if m.group("big") else number


def chinese_numbers(text: str, tagged: Sequence[tuple[str, str]] | None = None
                    ) -> Iterator[tuple[str, float, int]]:
    """(as written, value, decimals) of each numeral run of ``text`` (百分之三十 and 三成
    are 30, as "30%" is). With
    ``tagged`` (jieba's words and tags of ``text``), an answer's sentence: only runs in
    numeral words, and no approximate ones (三四, 十几)."""
    numeral_at = _numeral_positions(tagged) if tagged is not None else None
    for m in _RUN.finditer(text):
        number = _value(m) if _claimed(m, numeral_at) else None
        if number is None:
            continue
        tail, frac = m.group("tail") or "", m.group("frac")
        if tail == "成":  # 三成 = 30%
            yield m.group(0), number * 10, 0
        else:
            yield m.group(0)[:len(m.group(0)) - len(tail)], number, len(frac or "")


_QUARTERS = re.compile(r"(?P<first>前)?(?:第)?(?P<n>[一二两三四1-4])个?季度")
_QUARTER_NUMBER = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "1": 1, "2": 2, "3": 3, "4": 4}
"""The quarter each numeral :data:`_QUARTERS` admits names (its only ones: 1 to 4)."""
_HALVES = {"上半年": (1.0, 6.0), "下半年": (7.0, 12.0)}
_MONTH_RANGE = re.compile(r"(?<!\d)(?P<a>1[0-2]|[1-9])\s*(?:至|到|-|－|~|～|—)\s*"
                          r"(?P<b>1[0-2]|[1-9])\s*月")


def period_values(text: str) -> set[float]:
    """The months a reference's periods of the calendar bound, and the quarters a month
    range is: a reworded sentence names the same period the other way (1至9月 for
    前三季度, 1-6月 for 上半年, 前三季度 for 1至9月). 前三季度 → 1 and 9; 三季度 (the
    third quarter) → 7 and 9; 上半年 → 1 and 6; 1至9月 → 3 (three quarters from
    January). Values a reference gains can only spare a sentence, never flag one."""
    out: set[float] = set()
    for m in _QUARTERS.finditer(text):
        n = _QUARTER_NUMBER[m.group("n")]
        out.update((1.0, 3.0 * n) if m.group("first") else (3.0 * n - 2, 3.0 * n))
    out.update(v for half, months in _HALVES.items() if half in text for v in months)
    for m in _MONTH_RANGE.finditer(text):
        a, b = int(m.group("a")), int(m.group("b"))
        if a == 1 and b % 3 == 0:
            out.add(b / 3)
    return out
