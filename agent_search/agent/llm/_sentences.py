"""Sentences of a reference's text for the offline responder, split without cutting a
name at an abbreviation or an initial ("Ms. Okafor", "J.R.R. Tolkien", "Dr. No").

A full stop ends a sentence unless the word it closes is an initial or a dotted
abbreviation ("J.", "J.R.R.", "U.S.", "e.g."), a title that stands before a name ("Ms.",
"Dr.", "Prof."), or an abbreviation that stands before a number ("No. 5", "Jan. 3"), and
unless the next sentence would start with a lower-case letter ("approx. five"). ``!``,
``?``, the Chinese full stops, blank lines and the start of a list item or heading
always end one; a single line break inside a paragraph does not.

pySBD (which the grounding uses on the short answer) decides the same cases, but took
~0.25 s for the 20,000 characters the responder reads of one reference; these rules are
a regular expression pass.
"""

from __future__ import annotations

import re

from agent_search.language import CHINESE, ENGLISH

_BOUNDARY = re.compile(rf"(?P<end>[{re.escape(ENGLISH.sentence_ends)}])[\"'”’)\]]*(?P<gap>\s+)"
                       rf"|[{re.escape(CHINESE.sentence_ends)}]+[”’」』）]*\s*"
                       r"|\n[ \t]*\n\s*|\n(?=[ \t]*(?:[-*+•]\s|\d{1,3}[.)]\s|#|\||>))")
"""Where a sentence may end (the ends on the English and Chinese records): after ``.!?``
and a space or line break, after a Chinese full stop, at a blank line, or before a line
that starts a list item, a heading, a table row or a quote. A single line break inside a
paragraph (a wrapped .txt note: "Ms.⏎Okafor") is a space."""
_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_BLOCK_START = re.compile(r"[-*+•]\s|\d{1,3}[.)]\s|#|\||>")
_INITIALS = re.compile(r"(?:[A-Za-z]\.)+")
_BEFORE_NAMES = frozenset({
    "mr", "mrs", "ms", "mx", "dr", "prof", "sr", "jr", "st", "mt", "rev", "hon", "fr",
    "sgt", "capt", "col", "lt", "gen", "adm", "cmdr", "maj", "cpl", "pvt", "gov", "sen",
    "rep", "pres", "supt", "insp", "det", "messrs", "mme", "mlle"})
"""Titles written before a name: the name goes on in the same sentence."""
_BEFORE_NUMBERS = frozenset({
    "no", "nos", "vol", "vols", "fig", "figs", "p", "pp", "ch", "chap", "sec", "art",
    "par", "eq", "ref", "op", "ed", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
    "sept", "oct", "nov", "dec"})
"""Abbreviations written before a number ("No. 5", "Fig. 2", "Jan. 3")."""
_ALWAYS = frozenset({"vs", "al", "approx", "ca", "cf"})
"""Abbreviations that never end a sentence in practice ("vs. Arsenal", "et al. Smith")."""


def _ends_sentence(text: str, match: re.Match[str]) -> bool:
    if match.group("end") is None:  # a Chinese full stop, a blank line, a new block
        return True
    if "\n" in match.group("gap") and (
            _PARAGRAPH.search(match.group("gap")) or _BLOCK_START.match(text, match.end())):
        return True
    after = text[match.end():match.end() + 1]
    if after.islower():
        return False
    return match.group("end") != "." or not _abbreviation(text, match.start("end"), after)


def _abbreviation(text: str, stop: int, after: str) -> bool:
    """Does the full stop at ``stop`` end an abbreviation rather than the sentence:
    initials, a title before a name, one never at a sentence's end, or one before a
    number when a digit (``after``) follows?"""
    words = text[max(0, stop - 40):stop].split()
    token = (words[-1] if words else "").lstrip("([\"'“‘") + "."
    if _INITIALS.fullmatch(token):
        return True
    word = token[:-1].lower()
    return word in _BEFORE_NAMES or word in _ALWAYS or (
        word in _BEFORE_NUMBERS and after.isdigit())


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped, empty ones left out."""
    out: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        if not _ends_sentence(text, match):
            continue
        cut = match.start("gap") if match.group("gap") is not None else \
            match.start() if match.group(0).isspace() else match.end()
        piece = text[start:cut].strip()
        if piece:
            out.append(piece)
        start = match.end()
    piece = text[start:].strip()
    if piece:
        out.append(piece)
    return out
