"""The words of a question: stopwords, word and phrase finding, plural forms, stems.

Pure functions on text (no schema, no state), shared by the parser's extractors; the two
applied to every model and field name on every parse are cached by their text.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from agent_search.language import CHINESE, ENGLISH, HAN, HAN_CHAR, segments

if TYPE_CHECKING:
    import inflect

T = TypeVar("T")

MAX_TERM_CHARS = 64
"""Longer words are not used as text-match terms."""

DATA_WORDS = frozenset("""
record records entry entries item items row rows data details detail different distinct
kind kinds type types word words letter letters text live lives living count number
average avg mean sum median total called named titled containing contain contains
return returns show list give find tell display get provide ordered sorted ascending
descending ascendingly descendingly increasing decreasing corresponding respectively
each across among overall together listed respective
""".split())  # noqa: SIM905
"""Words about records and how a question asks for them ("list the records", "how many
entries", "named", "return ... in descending order"): never a value, never text to
match."""
ZH_DATA_WORDS = frozenset("""
记录 数据 信息 资料 条目 条 项 列表 清单 名单 详情 明细 所有 全部 全都 所有的 列出 列举 显示
返回 给出 统计 一共 总共 共 共有 总数 数量 个数 几条 多少条 多少个 多少位 多少名 多少家 多少笔
分别 各个 各自 对应 按照 按 排序 排列 哪位 哪家 谁 位 名 家 笔 里 中 其中 当中 现在 目前
""".split())  # noqa: SIM905
"""The same words in Chinese ("列出所有记录", "一共多少条"), on jieba's segmentation."""
STOPWORDS = ENGLISH.stopwords | DATA_WORDS | CHINESE.stopwords | ZH_DATA_WORDS
"""What the parser never reads as a value or as text: the English and Chinese stop words
and the words about records (:data:`DATA_WORDS`, :data:`ZH_DATA_WORDS`)."""

_LATIN = rf"[^\W{HAN}]"
WORD = re.compile(rf"[{HAN}]+|{_LATIN}(?:{_LATIN}|['’./@&+-])*{_LATIN}|{_LATIN}")
"""A word of a question (keeps "AC/DC", "e-mail", "luisg@embraer.com.br" whole); a run
of Chinese characters is one word apart from the Latin letters and digits it touches
("iphone15手机": "iphone15", "手机"), cut into words where needed by
:func:`agent_search.language.segments`."""


def word_spans(low: str) -> list[tuple[str, int, int]]:
    """The words of ``low`` with where they start and end: :data:`WORD`'s, each run of
    Chinese characters cut into jieba's words ("北京的客户": 北京, 的, 客户)."""
    if not HAN_CHAR.search(low):  # the common case: no word to cut
        return [(m.group(0), m.start(), m.end()) for m in WORD.finditer(low)]
    out = []
    for m in WORD.finditer(low):
        if not HAN_CHAR.match(m.group(0)):
            out.append((m.group(0), m.start(), m.end()))
            continue
        for start, end in segments(low):  # cached: the question is segmented once
            if m.start() <= start and end <= m.end():
                out.append((low[start:end], start, end))
    return out


@lru_cache(maxsize=4096)
def words_of(name: str) -> str:
    """``UnitPrice`` / ``unit_price`` / ``agents.demo.unit-price`` → ``unit price``."""
    name = name.rsplit(".", 1)[-1]
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name)
    return " ".join(re.split(r"[\s_\-]+", name.lower())).strip()


_Endings = tuple[tuple[re.Pattern[str], str], ...]
_ENDING: _Endings = tuple((re.compile(pattern, re.S), ending) for pattern, ending in (
    (r"(.+[^aeiou])y", r"\1ies"),     # country → countries (not day → daies)
    (r"(.*(?:s|x|ch|sh))", r"\1es"),  # box → boxes
    (r"(.*)", r"\1s"),                # track → tracks
))
"""The regular plural of a word: the first ending that fits."""
_UNENDING: _Endings = tuple((re.compile(pattern, re.S), ending) for pattern, ending in (
    (r"(.*)ies", r"\1y"),             # countries → country
    (r"(.{3,})s", r"\1"),             # tracks → track (not "bus" → "bu")
))
"""The regular singular of a word: the first ending that fits (none: no plural)."""


def _regular(word: str, endings: _Endings) -> str | None:
    """``word`` with the first of ``endings`` that fits it applied; None when none fits."""
    return next((m.expand(ending) for p, ending in endings if (m := p.fullmatch(word))),
                None)


@lru_cache(maxsize=4096)
def plural_forms(phrase: str) -> frozenset[str]:
    """The phrase with its last word in the singular and the plural: ``inflect``'s forms
    ("person" ↔ "people", "country" ↔ "countries") and the regular endings (a set that may
    hold a wrong form too: "genres" → "genreses")."""
    head, _, last = phrase.rpartition(" ")
    prefix = head + " " if head else ""
    forms = {phrase, *(prefix + form for form in (_regular(last, _ENDING),
                                                 _regular(last, _UNENDING)) if form is not None)}
    if last.isalpha() and len(last) > 2:
        forms |= {prefix + f for f in _inflected(last)}
    noun, of, rest = phrase.partition(" of ")
    if of and noun and rest:  # "date of birth": the noun before "of" takes the number
        forms |= {f + of + rest for f in plural_forms(noun)}
    return frozenset(forms)


@lru_cache(maxsize=8192)
def _inflected(word: str) -> frozenset[str]:
    """``word``'s plural and, when it is one, its singular, from ``inflect``."""
    engine = _engine()
    out = {engine.plural_noun(word)}
    singular = engine.singular_noun(word)
    if isinstance(singular, str) and singular:
        out.add(singular)
    return frozenset(w.lower() for w in out if w)


@lru_cache(maxsize=4096)
def is_plural(phrase: str) -> bool:
    """The phrase's last word is a plural noun ("tracks", "people"; not "track", "news")."""
    last = phrase.rpartition(" ")[2]
    if not last.isalpha():
        return last.endswith("s")
    return bool(_engine().singular_noun(last))


@lru_cache(maxsize=1)
def _engine() -> inflect.engine:
    engine: inflect.engine = _inflect().engine()
    return engine


_IMPORT_LOCK = threading.Lock()


def _inflect() -> Any:
    """``inflect``, imported on first use and without typeguard's run-time checks of its
    own arguments: its ``@typechecked`` decorators re-parse and recompile inflect's
    4,000-line module once per decorated function (~3 s of CPU at import, 0.06 s
    without; the checks are typeguard's no-ops under ``python -O`` too). The parser only
    ever passes it words, so no check is lost that could fire (issue 31)."""
    import importlib
    import sys

    with _IMPORT_LOCK:
        if "inflect" not in sys.modules:
            import typeguard

            checked = typeguard.typechecked
            typeguard.typechecked = _unchecked
            try:
                importlib.import_module("inflect")
            finally:
                typeguard.typechecked = checked
    return sys.modules["inflect"]


def _unchecked(target: Any = None, **_: Any) -> Any:
    """``typeguard.typechecked`` as ``python -O`` makes it: the function unchanged."""
    return _unchecked if target is None else target


def find_phrase(low: str, phrase: str, start: int = 0) -> list[tuple[int, int]]:
    """Occurrences of ``phrase`` in ``low`` on word boundaries; Chinese writes no spaces,
    so a Chinese character on either side of a boundary is one ("北京的客户": 客户)."""
    out = []
    i = low.find(phrase, start)
    n = len(phrase)
    while i >= 0 and n:
        before = low[i - 1] if i > 0 else " "
        after = low[i + n] if i + n < len(low) else " "
        if _boundary(before, phrase[0]) and _boundary(after, phrase[-1]):
            out.append((i, i + n))
        i = low.find(phrase, i + 1)
    return out


def _boundary(outside: str, inside: str) -> bool:
    return not outside.isalnum() or bool(HAN_CHAR.match(outside) or HAN_CHAR.match(inside))


class WordTable(Generic[T]):
    """Ways of saying something, each a regular expression of alternatives with what it
    says ("cheapest|lowest[- ]priced" → money, up): a rule finds any of them with one
    pattern (:attr:`alternatives`) and reads what the words it found say (``table[word]``,
    the first row they are)."""

    def __init__(self, rows: Sequence[tuple[str, T]]) -> None:
        self.rows = tuple((re.compile(words, re.I), said) for words, said in rows)
        self.alternatives = "|".join(f"(?:{words})" for words, _ in rows)
        """Every row's words, as one alternation (to be put in a rule's pattern)."""

    def __getitem__(self, word: str) -> T:
        """What ``word`` (words one of the rows matches whole) says; KeyError if none."""
        for pattern, said in self.rows:
            if pattern.fullmatch(word):
                return said
        raise KeyError(word)


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def adjacent(a: tuple[int, int], b: tuple[int, int], text: str) -> bool:
    """Only spaces between the two spans."""
    lo, hi = (a[1], b[0]) if a[0] < b[0] else (b[1], a[0])
    return lo <= hi and not text[lo:hi].strip()


def terms(words: list[str]) -> list[str]:
    """Up to 8 distinct stems of reasonable length."""
    stems = [stem(w) for w in words if len(w) <= MAX_TERM_CHARS]
    return list(dict.fromkeys(stems))[:8]


def stem(word: str) -> str:
    """A crude singular stem for ``like`` matching: "monitors" → "monitor", "batteries"
    → "batter" (matches battery and batteries), "boxes" → "box"."""
    w = word.lower()
    return _regular(w, _STEM) or w


_STEM: _Endings = tuple((re.compile(pattern, re.S), ending) for pattern, ending in (
    (r"(?=.{5})(.*)ies", r"\1"),                 # batteries → batter
    (r"(?=.{5})(.*(?:s|x|ch|sh))es", r"\1"),     # boxes → box
    (r"(?=.{4})(.*[^s])s", r"\1"),               # monitors → monitor (not "glass")
))
"""The endings :func:`stem` takes off (words long enough): the first that fits."""


def escape_like(text: str) -> str:
    """Literal text in a LIKE pattern: its own % and _ match themselves (approximately:
    they are replaced by the single-character wildcard so no escape clause is needed)."""
    return text.replace("%", "_")
