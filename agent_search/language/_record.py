"""The :class:`Language` record and the table of languages the package reads.

Every reader of text (keywords, follow-ups, research plans, the grounding, the database
question parser) asks the same questions of a text: which language is it in, what are its
words, which of them only carry grammar, where do its sentences end, how are its numbers
written. Each of them used to answer with a branch on "does it hold a Han character" and
word lists of its own. Here each language answers once, as data on one record, and a text
is classified once (:func:`classify`); a reader keeps its rules in a table keyed by
:attr:`Language.name`, both languages' rules side by side.

The order of the table is the order of :func:`classify`: the first language whose script
appears in the text wins, and the fallback (English, read for any text in a script no
language claims) comes last. A language added with :func:`register_language` comes after
the ones already there.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

_NAME = re.compile(r"[a-z]{2,8}")
"""A BCP 47 primary language subtag ("en", "zh", "yue")."""


def _always_ready() -> bool:
    return True


@dataclass(frozen=True, slots=True)
class Language:
    """How one language is read: the answers every reader of text needs, once.

    Only the fallback has no :attr:`script`; every other language is recognised by it.
    """

    name: str
    """Its BCP 47 primary subtag (``"en"``, ``"zh"``): what callers name it by
    (``language="zh-CN"`` is ``zh``) and what rule tables are keyed by."""
    script: re.Pattern[str] | None
    """One character of its script: a text holding one is in this language (Chinese: a
    Han character). None for the fallback, which reads whatever no script claims."""
    tokenize: Callable[[str], list[str]]
    """The tokens of a text in reading order, whitespace left out: words, numbers and
    punctuation marks (English by a regular expression, Chinese by jieba)."""
    function_words: frozenset[str]
    """Words that carry grammar, not a subject (pronouns, articles, particles...)."""
    request_words: frozenset[str] = frozenset()
    """The fillers of a spoken request ("can you please help me find"), where the language
    keeps them apart from its function words (Chinese has them in one list)."""
    spaced: bool = True
    """Words are separated by spaces (English); False for scripts written without them
    (Chinese), whose words are joined back without a space."""
    sentence_ends: str = ".!?"
    """The characters that end a sentence."""
    clause_ends: str = ",;:"
    """The characters that end a clause inside a sentence."""
    numerals: str = ""
    """The characters that write numbers as words, when it has such (三千, 二〇二二)."""
    read_numeral: Callable[[str], int | None] | None = None
    """The value of a run of :attr:`numerals` (None when the run is no number)."""
    ready: Callable[[], bool] = _always_ready
    """Whether :attr:`tokenize` answers without loading anything first (jieba loads its
    dictionary, about a second, on first use): callers on an event loop run the first
    text of a language that is not ready in a worker thread."""
    stopwords: frozenset[str] = field(init=False)
    """:attr:`function_words` and :attr:`request_words`: what a query word that only says
    how something is asked is dropped for."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "stopwords", self.function_words | self.request_words)

    def join(self, words: list[str]) -> str:
        """Words back into text: with spaces, or without for an unspaced script."""
        return (" " if self.spaced else "").join(words)


class _Table:
    """The registered languages, in :func:`classify` order, and the fallback."""

    def __init__(self, fallback: Language) -> None:
        self.fallback = fallback
        self.scripted: dict[str, Language] = {}

    def all(self) -> tuple[Language, ...]:
        return (*self.scripted.values(), self.fallback)


_table: _Table | None = None


def install_fallback(language: Language) -> None:
    """Start the table with its fallback (the package's own records do this once)."""
    global _table
    if language.script is not None:
        raise ValueError(f"the fallback language {language.name!r} must have no script")
    _table = _Table(language)


def _the_table() -> _Table:
    if _table is None:  # pragma: no cover - the package's face installs it on import
        raise RuntimeError("no fallback language installed")
    return _table


def register_language(language: Language, *, replace: bool = False) -> Language:
    """Add ``language`` to the table (after those already there): from now on
    :func:`classify` answers it for text in its script, and every reader reads such text
    with its record (a reader without rules of its own for it uses its generic rules).
    ``replace`` swaps a language of the same name in place. Returns ``language``."""
    table = _the_table()
    if not isinstance(language, Language):
        raise TypeError(f"register_language takes a Language, not {type(language).__name__}")
    if not _NAME.fullmatch(language.name):
        raise ValueError(f"language name {language.name!r} is not a BCP 47 primary "
                         "subtag (2 to 8 lower-case letters, e.g. 'en', 'zh')")
    if language.script is None:
        raise ValueError(f"language {language.name!r} has no script to be recognised by")
    known = language.name in table.scripted or language.name == table.fallback.name
    if known and not replace:
        raise ValueError(f"language {language.name!r} is already registered "
                         "(pass replace=True to swap it)")
    if language.name == table.fallback.name:
        raise ValueError(f"language {language.name!r} is the fallback and cannot be replaced")
    table.scripted[language.name] = language
    _classify_cached.cache_clear()
    sentence_breaks.cache_clear()
    return language


def unregister_language(name: str) -> None:
    """Remove the language called ``name`` (not the fallback); unknown names are an error."""
    table = _the_table()
    if name not in table.scripted:
        raise KeyError(f"no registered language {name!r} (have: {sorted(table.scripted)})")
    del table.scripted[name]
    _classify_cached.cache_clear()
    sentence_breaks.cache_clear()


def languages() -> tuple[Language, ...]:
    """The languages in :func:`classify` order, the fallback last."""
    return _the_table().all()


def fallback() -> Language:
    """The language read when no script is recognised (English)."""
    return _the_table().fallback


def language_named(code: str) -> Language | None:
    """The language a caller names by a BCP 47 tag (``"zh"``, ``"zh-CN"``, ``"EN"``), or
    None when none is registered under its primary subtag."""
    primary = code.strip().lower().replace("_", "-").split("-", 1)[0]
    return next((lang for lang in languages() if lang.name == primary), None)


def classify(text: str) -> Language:
    """The language ``text`` is read as: the first language whose script it holds, else
    the fallback. Classify a text once and pass the record on."""
    if len(text) > 256:
        return _classify(text)
    return _classify_cached(text)


@functools.lru_cache(maxsize=4096)
def _classify_cached(text: str) -> Language:
    return _classify(text)


def _classify(text: str) -> Language:
    table = _the_table()
    for language in table.scripted.values():
        if language.script is not None and language.script.search(text):
            return language
    return table.fallback


@functools.lru_cache(maxsize=1)
def sentence_breaks() -> re.Pattern[str]:
    """Where sentences of any registered language end: after a spaced language's sentence
    end and the whitespace that follows it (which the match covers), or straight after an
    unspaced language's (an empty match)."""
    spaced = "".join(sorted({c for lang in languages() if lang.spaced
                             for c in lang.sentence_ends}))
    unspaced = "".join(sorted({c for lang in languages() if not lang.spaced
                               for c in lang.sentence_ends}))
    every = re.escape("".join(sorted(set(spaced + unspaced))))
    pattern = f"(?<=[{every}])\\s+"
    if unspaced:
        pattern += f"|(?<=[{re.escape(unspaced)}])"
    return re.compile(pattern)
