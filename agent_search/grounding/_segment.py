"""Splitting an answer into sentences with their character offsets.

pySBD (rule-based, the Golden Rules of sentence boundaries; English and Chinese among
others) decides the boundaries; this module only feeds it prose and maps its sentences
back onto the answer. Markdown is taken apart first, line by line: a fenced code block
is one unit with nothing to check, and list items, headings and table rows are units of
their own (a list item without a full stop must not run into the next one). A citation
marker the model put after the full stop (``... 30%. #ref:3 Next ...``) belongs to the
sentence before it, and so do closing quotes and brackets pySBD leaves at the start of
the next sentence.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_BLOCK_PREFIX = re.compile(
    r"^\s*(?:>\s*)*(?:#{1,6}\s+|[-*+•·]\s+(?:\[[ xX]\]\s+)?|\d{1,9}[.)]\s+"
    # Chinese enumerations: 1、 一、 (1) （一） ① 第一， — a list mark, not a claimed number
    r"|(?:\d{1,3}|[一二三四五六七八九十]{1,3})[、．]\s*|\d{1,3}\.(?=[^\d\s.])|[(（](?:\d{1,3}|[一二三四五六七八九十]{1,3})[)）]\s*"
    r"|[\u2460-\u2473\u2776-\u277f]\s*|第[一二三四五六七八九十]{1,3}[，,、]\s*)?")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_INNER_END = re.compile(r"[.!?;…。！？；]\s*\S")
_CLOSERS = "”’」』)]）】》"
_LANGUAGE_CHANGE = re.compile(
    r"[。！？]+[”’」』）】》]*(?=\s*[A-Za-z])"
    r"|(?<=[A-Za-z0-9)\]%])[.!?]+[\"')\]]*(?=\s+(?:#\S+\s+)?[\u3400-\u9fff])")
"""Where a Chinese sentence ends and a Latin one begins, or the other way round."""


@dataclass(frozen=True, slots=True)
class Span:
    """One sentence: ``text == answer[start:end]``; ``kind`` is ``prose``, ``code`` (a
    fenced block) or ``heading`` (a Markdown heading or a line that introduces a list)."""

    text: str
    start: int
    end: int
    kind: str = "prose"


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


@functools.lru_cache(maxsize=4)
def _segmenter(language: str) -> Any:
    import pysbd  # a light import, but only needed here

    return pysbd.Segmenter(language=language, clean=False)


def _lines(answer: str) -> Iterator[tuple[int, int, bool]]:
    """(start, end, is_code) of the answer's units: code blocks whole, other lines one
    by one (blank lines and table rules dropped)."""
    pos = 0
    fence: str | None = None
    code_start = 0
    for line in answer.splitlines(keepends=True):
        start, end = pos, pos + len(line.rstrip("\r\n"))
        pos += len(line)
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1) == fence:
                yield code_start, end, True
                fence = None
            continue
        if m:
            fence, code_start = m.group(1), start
            continue
        if line.strip() and not _TABLE_RULE.match(line):
            yield start, end, False
    if fence is not None:  # an unclosed fence runs to the end
        yield code_start, len(answer.rstrip()), True


def _find(text: str, pieces: list[str]) -> list[list[int]] | None:
    """[start, end] of each piece in ``text`` in order; None if one is not found."""
    spans: list[list[int]] = []
    cursor = 0
    for piece in pieces:
        core = piece.strip()
        if not core:
            continue
        at = text.find(core, cursor)
        if at < 0:
            return None
        spans.append([at, at + len(core)])
        cursor = at + len(core)
    return spans


def _pieces(text: str, language: str) -> list[list[int]]:
    """pySBD's sentences as spans of ``text``. Its ``processor`` gives the sentences; its
    ``segment`` would then find each one again through a regex compiled per sentence
    (most of its time, thrashing the ``re`` cache): a plain ``find`` does the same here,
    and ``segment`` is the fallback should a sentence not be found as it is."""
    segmenter = _segmenter(language)
    spans = _find(text, [str(p) for p in segmenter.processor(text).process()])
    if spans is None:
        spans = _find(text, segmenter.segment(text)) or []
    return spans


def _mixed_pieces(text: str) -> list[list[int]]:
    """A line with CJK in it, cut first where the language changes at a sentence end
    (``…生效。Mr. Biden …`` and ``… president. 他…``), each part then split by pySBD's
    rules for its language: the Chinese rules cut at every ``.``, which would split
    "Mr." and "U.S." of an English sentence in a Chinese answer."""
    spans: list[list[int]] = []
    start = 0
    for cut in [m.end() for m in _LANGUAGE_CHANGE.finditer(text)] + [len(text)]:
        part = text[start:cut]
        if part.strip():
            language = "zh" if has_cjk(part) else "en"
            spans.extend([a + start, b + start] for a, b in _pieces(part, language))
        start = cut
    return spans


def _split_prose(text: str, offset: int, marker: re.Pattern[str]) -> list[Span]:
    if not _INNER_END.search(text):  # no sentence end before the last word: one sentence
        core = text.strip()
        at = text.find(core) if core else 0
        return [Span(core, offset + at, offset + at + len(core))] if core else []
    spans = _mixed_pieces(text) if has_cjk(text) else _pieces(text, "en")
    # markers and closing quotes at the start of a sentence go back to the one before
    for i in range(1, len(spans)):
        start, end = spans[i]
        moved = start
        while moved < end:
            m = marker.match(text, moved)
            if m:
                moved = m.end()
            elif text[moved] in _CLOSERS or text[moved] in " \t,;":
                moved += 1
            else:
                break
        if moved > start and text[start:moved].strip():
            spans[i - 1][1] = len(text[:moved].rstrip())
            spans[i][0] = moved + (len(text[moved:end]) - len(text[moved:end].lstrip()))
    out: list[Span] = []
    for start, end in spans:
        if end > start:
            out.append(Span(text[start:end], offset + start, offset + end))
    return out


def segment(answer: str, marker: re.Pattern[str]) -> list[Span]:
    """The sentences of ``answer`` in order, each with its offsets in ``answer``."""
    out: list[Span] = []
    for start, end, code in _lines(answer):
        if code:
            out.append(Span(answer[start:end], start, end, kind="code"))
            continue
        line = answer[start:end]
        heading = _HEADING.match(line)
        if heading:
            title = line[heading.end():].strip()
            at = start + line.index(title, heading.end()) if title else start
            if title:
                out.append(Span(title, at, at + len(title), kind="heading"))
            continue
        prefix = _BLOCK_PREFIX.match(line)
        skip = prefix.end() if prefix else 0
        if line.lstrip().startswith("|"):  # a table row: its cells are its sentences
            for cell in re.finditer(r"[^|]+", line):
                if cell.group().strip():
                    out.extend(_split_prose(cell.group(), start + cell.start(), marker))
            continue
        out.extend(_split_prose(line[skip:], start + skip, marker))
    return out
