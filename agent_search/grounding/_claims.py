"""What a sentence claims, in the form a check needs: its numbers (with units, percents,
years), its named entities and its content words.

No model: numbers come from a pattern (thousands separators, decimals, percents,
"2.5 million", small number words; in Chinese, full-width digits and numerals written in
characters, see :mod:`agent_search.grounding._numbers_zh`), entities are the capitalised
or alphanumeric words of an English sentence that are not capitalised merely for standing
first, and the person, place and organisation names jieba's part-of-speech tagger finds in Chinese.
Content words are the sentence's words without stop words, cut to a five-letter stem
("reduced", "reduces", "reduction" → "reduc") so a light rewording still overlaps.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent_search.grounding._budget import Budget
from agent_search.grounding._numbers_zh import (
    chinese_numbers,
    half_width,
    numeral_runs,
    period_values,
    starts_with_number,
)
from agent_search.grounding._related import related_stems
from agent_search.language import CHINESE, ENGLISH, HAN_CHAR, classify

# bounded: a longer run of digits is an identifier, not a number (and 309 digits would
# read as infinity, equal to any other such run)
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])(?<![A-Za-z]-)"
    r"(?P<num>\d{1,3}(?:,\d{3}){1,7}(?:\.\d{1,12})?|\d{1,24}(?:\.\d{1,12})?|\.\d{1,12})"
    r"(?P<tail>\s*(?:%|percent\b|per\s?cent\b|％)|\s*(?:thousand|million|billion|trillion)\b"
    r"|[十百千万亿]{1,3}|成)?"
    r"(?![A-Za-z0-9])", re.IGNORECASE)
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12,
          "十": 10, "百": 1e2, "千": 1e3, "万": 1e4, "亿": 1e8, "成": 10}
"""成 is tenths: 5成 = 50%."""
_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "twice": 2, "double": 2,
    "triple": 3, "half": 0.5, "dozen": 12,
}
# words too common in other senses to count as a claimed number in an answer
_WEAK_NUMBER_WORDS = frozenset({"one", "half", "double", "zero", "一", "零"})
_WORD = re.compile(r"[^\W_][\w'’\-]*", re.UNICODE)
_LETTERS_AND_DIGITS = re.compile(r"(?=.*[A-Za-z])(?=.*\d)")
_ZH_NAME_TAGS = ("nr", "ns", "nt", "nz")
_STOP = ENGLISH.function_words | frozenset(
    ["also", "both", "however", "thus", "therefore", "moreover", "furthermore", "although",
     "though", "whereas", "may", "might", "can", "could", "would", "should", "will", "shall",
     "one", "ones"])
_STEM = 5


@dataclass(frozen=True, slots=True)
class Number:
    """A number as written (``text``) and the values it may stand for."""

    text: str
    values: tuple[float, ...]
    decimals: int


@dataclass(slots=True)
class Claims:
    numbers: list[Number] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    related: dict[str, frozenset[str]] = field(default_factory=dict)
    """Per content word (its stem), the stems WordNet relates to it (English only): what
    a rewording may write in its place (:mod:`agent_search.grounding._related`)."""
    weights: dict[str, float] = field(default_factory=dict)
    """Per content word (its stem), its weight in the overlap (1 when not listed): a
    common word says less than a rare one."""
    memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    """What the check has worked out about these claims against references (the
    grounding's cache for one verdict)."""

    @property
    def checkable(self) -> bool:
        return bool(self.numbers or self.entities or self.words)


def _values(raw: str, tail: str) -> tuple[tuple[float, ...], int]:
    plain = raw.replace(",", "")
    value = float(plain)
    decimals = len(plain.split(".", 1)[1]) if "." in plain else 0
    tail = tail.strip().lower()
    scale = _SCALE.get(tail, 1.0)
    if len(tail) > 1 and tail[0] in "十百千万亿":  # 5百万 = 5,000,000
        scale = math.prod(_SCALE[c] for c in tail)
    values = (value, value * scale) if scale != 1.0 else (value,)
    return values, decimals


def numbers(text: str, *, words: bool = True,
            tagged: list[tuple[str, str]] | None = None) -> list[Number]:
    """The numbers of ``text``; ``words`` also takes number words ("three" → 3) and
    numerals in Chinese characters (三十五 → 35; with ``tagged``, jieba's words and tags
    of ``text``, only those the tagger calls numerals)."""
    text = half_width(text)
    found: list[Number] = []
    for m in _NUMBER.finditer(text):
        values, decimals = _values(m.group("num"), m.group("tail") or "")
        found.append(Number(m.group(0).strip(), values, decimals))
    if not words:
        return found
    if HAN_CHAR.search(text):
        found.extend(Number(written, (value,), decimals)
                     for written, value, decimals in chinese_numbers(text, tagged))
    for m in _WORD.finditer(text):  # number words, in mixed text too
        low = m.group(0).lower()
        if low in _NUMBER_WORDS:
            found.append(Number(m.group(0), (float(_NUMBER_WORDS[low]),), 0))
    return found


def number_found(number: Number, values: frozenset[float]) -> bool:
    """Whether a reference value is the number, allowing for rounding at the precision
    the sentence wrote it with ("30%" for 29.7%, "1.8" for 1.83)."""
    for v in number.values:
        if v in values:
            return True
        for r in values:
            if math.isclose(round(r, number.decimals), v, rel_tol=1e-9, abs_tol=1e-9):
                return True
    return False


def reference_numbers(text: str) -> frozenset[float]:
    """Every value a reference states, number words included, signs dropped, and the
    bounds of the calendar periods it names in Chinese (:func:`period_values`)."""
    out: set[float] = set()
    for n in numbers(text):
        out.update(abs(v) for v in n.values)
    if HAN_CHAR.search(text):
        out.update(period_values(text))
    return frozenset(out)


@functools.lru_cache(maxsize=1)
def _posseg() -> Any:
    import jieba
    import jieba.posseg

    jieba.setLogLevel(60)
    return jieba.posseg


def load_chinese() -> None:
    """Load jieba's dictionaries now (~1 s, once per process): a one-time cost that must
    not count against the first answer's bound."""
    _posseg().dt.tokenizer.check_initialized()
    _posseg().dt.word_tag_tab.get("")


def _english_entities(text: str) -> list[str]:
    """Capitalised words not at a sentence (or clause, list item, quote) start; words
    mixing letters and digits (IL-6, BRCA1, COVID-19); acronyms anywhere."""
    out: list[str] = []
    for i, m in enumerate(_WORD.finditer(text)):
        word = m.group(0).rstrip("'’-").removesuffix("'s").removesuffix("’s")
        before = text[:m.start()].rstrip()
        starts = i == 0 or not before or before[-1] in _OPENERS
        if word and word.lower() not in _NUMBER_WORDS and _is_entity(word, starts):
            out.append(word)
    return out


_OPENERS = ".:;!?\"“("
"""The characters after which a word starts a sentence, clause, list item or quote."""


def _is_entity(word: str, starts: bool) -> bool:
    """Letters with digits (not a number); else, no stop word: an acronym or CamelCase
    name even first in the sentence, a capitalised word not at a start ("I" is none)."""
    if _LETTERS_AND_DIGITS.match(word) and not _NUMBER.fullmatch(word):
        return True
    if word.lower() in _STOP:
        return False
    return sum(c.isupper() for c in word) >= 2 or (word[0].isupper() and not starts
                                                   and word != "I")


def _tagged(text: str, budget: Budget | None = None) -> list[tuple[str, str]]:
    """jieba's words of ``text`` with their part-of-speech tags. The dictionary tags
    first; then each run of two or more single characters it does not know as a word
    (where a name it does not list would be) is tagged again with the HMM, as jieba's
    own tagger does, while ``budget`` allows (its HMM costs ~5 ms a character: it is
    what made a long Han answer cost minutes). Without ``budget``, every short run is."""
    budget = budget if budget is not None else Budget(cpu_seconds=float("inf"))
    pairs = [(pair.word, pair.flag) for pair in _posseg().lcut(text, HMM=False)]
    out: list[tuple[str, str]] = []
    for single, same in itertools.groupby(pairs, key=_single_han):
        group = list(same)
        run = "".join(word for word, _ in group) if single else ""
        if len(run) >= 2 and not _posseg().dt.tokenizer.FREQ.get(run) \
                and budget.take_hmm(len(run)):
            out.extend((pair.word, pair.flag) for pair in _posseg().lcut(run))
        else:
            out.extend(group)
    return out


def _single_han(pair: tuple[str, str]) -> bool:
    """Whether a tagged word is one Han character (of a run the dictionary may not know)."""
    return len(pair[0]) == 1 and HAN_CHAR.match(pair[0]) is not None


def _chinese_entities(text: str, tagged: list[tuple[str, str]]) -> list[str]:
    # a "name" that starts with a numeral is the tagger misreading a number (三万人)
    out = [word for word, flag in tagged if len(word) >= 2 and flag.startswith(_ZH_NAME_TAGS)
           and not starts_with_number(word) and not _phrase(word, flag)]
    # the Latin words of a mixed sentence (RCEP, GDP, COVID-19), not the Han text after them
    return out + _english_entities(" ".join(re.findall(r"[A-Za-z0-9][A-Za-z0-9\-]*", text)))


def _phrase(word: str, flag: str) -> bool:
    """Whether a word jieba's dictionary tags a person's name (``nr``) is two common
    two-character words ("同比增加", "严格执法", "今天上午": about a thousand such entries,
    none a name): a Chinese name is a surname and a given name, not two words of the
    dictionary that are no names themselves."""
    if flag != "nr" or len(word) != 4:
        return False
    tags = _posseg().dt.word_tag_tab
    return all(tags.get(part, "x") != "x" and not tags[part].startswith(_ZH_NAME_TAGS)
               for part in (word[:2], word[2:]))


def stem(word: str) -> str:
    return word[:_STEM]


def without_numbers(text: str) -> str:
    """Chinese ``text`` with its numbers (2185.8万, 二〇二三, 四万三千) blanked: they are
    checked as numbers, and as words jieba would cut them differently in each form
    ("2023" "年" but "二" "〇" "二三年")."""
    return numeral_runs.sub(" ", _NUMBER.sub(" ", text))


def content_words(text: str) -> list[str]:
    """Stemmed, lower-cased content words (Chinese: jieba words and latin words), by
    the text's language (:data:`CONTENT_WORDS`; the English rule for a language without
    one of its own)."""
    return CONTENT_WORDS.get(classify(text).name, _english_content)(text)


def _english_content(text: str) -> list[str]:
    return [stem(w) for w in _english_words(text)]


def _english_words(text: str) -> list[str]:
    """The lower-cased content words of English ``text``, whole."""
    return [w for w in (m.group(0).lower().rstrip("'’-") for m in _WORD.finditer(text))
            if w and w not in _STOP and not w[0].isdigit() and len(w) > 1]


def _related(words: list[str]) -> tuple[dict[str, frozenset[str]], dict[str, float]]:
    """Each content word's stem → the stems WordNet relates to its word (of ``words``,
    English, whole), and its weight (the least weight of the words of one stem)."""
    related: dict[str, frozenset[str]] = {}
    weights: dict[str, float] = {}
    for word in words:
        found, weight = related_stems(word)
        key = stem(word)
        if found:
            related[key] = related.get(key, frozenset()) | found
        weights[key] = min(weights.get(key, 1.0), weight)
    return related, weights


def _chinese_words(text: str) -> list[str]:
    """jieba's words of Chinese ``text`` (its numbers blanked), Latin ones stemmed."""
    out = []
    for w in CHINESE.tokenize(without_numbers(half_width(text))):
        w = w.strip().lower()
        if w and w not in CHINESE.stopwords and _WORD.fullmatch(w) and not _NUMBER.fullmatch(w):
            out.append(stem(w) if w.isascii() else w)
    return out



CONTENT_WORDS: dict[str, Callable[[str], list[str]]] = {
    "en": _english_content, "zh": _chinese_words}
"""How the content words of a text are read, by its language's name."""

def extract(text: str, budget: Budget | None = None) -> Claims:
    """The claims of one sentence (its citation markers already removed); ``budget``
    bounds the costly part of reading Chinese (:mod:`agent_search.grounding._budget`)."""
    text = half_width(text)
    tagged = _tagged(text, budget) if classify(text).name == "zh" else None
    nums = [n for n in numbers(text, tagged=tagged) if n.text.lower() not in _WEAK_NUMBER_WORDS]
    entities = _english_entities(text) if tagged is None else _chinese_entities(text, tagged)
    if tagged is not None:
        return Claims(numbers=nums, entities=list(dict.fromkeys(entities)),
                      words=_chinese_words(text))
    whole = _english_words(text)
    related, weights = _related(whole)
    return Claims(numbers=nums, entities=list(dict.fromkeys(entities)),
                  words=[stem(w) for w in whole], related=related, weights=weights)


def normalise_entity(word: str) -> str:
    return re.sub(r"[\W_]+", "", word.lower())
