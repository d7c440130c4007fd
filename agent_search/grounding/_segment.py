"""Splitting an answer into sentences with their character offsets.

pySBD (rule-based, the Golden Rules of sentence boundaries; English and Chinese among
others) decides the boundaries; this module only feeds it prose and maps its sentences
back onto the answer. Markdown is taken apart first: its blocks are CommonMark's, as
markdown-it-py (a CommonMark parser, with GFM tables) reads them and as the page's marked
renders them, so what is skipped here as code is what the page shows as code. A fence
after a tab, a no-break space or U+2028, or one whose info string holds a backtick, is
no fence there, and was one here, hiding its claim; where marked departs from CommonMark
(tabs in list items, what a container's end does to a fence), the lines are checked.
A code block (fenced or indented) is one unit with nothing to check; the other blocks
are taken line by line (lines end at ``\n``, ``\r\n`` and ``\r`` only, as in
Markdown), list items, headings and table rows being units of their own (a list item
without a full stop must not run into the next one). A citation marker the model put
after the full stop (``... 30%. #ref:3 Next ...``) belongs to the sentence before it,
and so do closing quotes and brackets pySBD leaves at the start of the next sentence.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from agent_search._markdown import block_parser
from agent_search.language import HAN, classify

_BLOCK_PREFIX = re.compile(
    r"^\s*(?:>\s*)*(?:#{1,6}\s+|[-*+•·]\s+(?:\[[ xX]\]\s+)?|\d{1,9}[.)]\s+"
    # Chinese enumerations: 1、 一、 (1) （一） ① 第一， — a list mark, not a claimed number
    r"|(?:\d{1,3}|[一二三四五六七八九十]{1,3})[、．]\s*|\d{1,3}\.(?=[^\d\s.])|[(（](?:\d{1,3}|[一二三四五六七八九十]{1,3})[)）]\s*"
    r"|[\u2460-\u2473\u2776-\u277f]\s*|第[一二三四五六七八九十]{1,3}[，,、]\s*)?")
_HEADING = re.compile(r"^[ \t>]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)*#{1,6}(?:[ \t]+|$)")
_HEADING_END = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
"""An ATX heading's optional closing sequence (``## Title ##``)."""
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_INNER_END = re.compile(r"[.!?;…。！？；]\s*\S")
_CLOSERS = "”’」』)]）】》"
_LANGUAGE_CHANGE = re.compile(
    r"[。！？]+[”’」』）】》]*(?=\s*[A-Za-z])"
    r"|(?<=[A-Za-z0-9)\]%])[.!?]+[\"')\]]*(?=\s+(?:#\S+\s+)?[" + HAN + "])")
"""Where a Chinese sentence ends and a Latin one begins, or the other way round."""


@dataclass(frozen=True, slots=True)
class Span:
    """One sentence: ``text == answer[start:end]``; ``kind`` is ``prose``, ``code`` (a
    fenced block) or ``heading`` (a Markdown heading or a line that introduces a list)."""

    text: str
    start: int
    end: int
    kind: str = "prose"


PYSBD_RULES = {"en": "en", "zh": "zh"}
"""pySBD's rules by the language's name (its codes are ISO 639-1, as the names are): a
language it has no rules for here is split by the English ones."""


def _rules(text: str) -> str:
    """The pySBD rules ``text`` is split by: its language's (:data:`PYSBD_RULES`)."""
    return PYSBD_RULES.get(classify(text).name, "en")


@functools.lru_cache(maxsize=4)
def _segmenter(language: str) -> Any:
    import pysbd  # a light import, but only needed here

    return pysbd.Segmenter(language=language, clean=False)


_LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""Markdown's line endings (str.splitlines also breaks at U+2028, \\v, \\x1c..., which
Markdown does not)."""


def _markdown() -> Any:
    """The package's one Markdown reader, the kb's for documents too."""
    return block_parser()


def _line_spans(answer: str) -> list[tuple[int, int]]:
    """(start, end) of each Markdown line of ``answer``, line ending excluded."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _LINE_BREAK.finditer(answer):
        spans.append((pos, m.start()))
        pos = m.end()
    spans.append((pos, len(answer)))
    return spans


_CONTAINER_INDENT = re.compile(r"(?: {0,3}(?:>|[-*+]|\d{1,9}[.)])(?= |$))* *")
"""Spaces, block quote and list markers: the indentation both readers measure alike."""
_ODD_BLANK = re.compile(r"[^\S \n]")
"""A blank other than the space (tab, no-break space, U+0085, U+2028...)."""


def _surely_code(lines: list[str], first: int, last: int, fenced: bool) -> bool:
    """Whether both readers surely see a code block in ``lines[first:last]``. marked
    follows CommonMark closely but not everywhere: tab stops in list items, blanks other
    than the space before or in a fence line, what ends a block quote after a fence.
    Where one of those could decide, the lines are checked as prose: at worst code is
    checked, never prose skipped. So: the opening line indented by spaces and container
    markers only, no odd blank in it nor in the line before; an indented block's lines
    indented by spaces."""
    opening = lines[first]
    indent = _CONTAINER_INDENT.match(opening)
    if opening[indent.end() if indent else 0:][:1].isspace() or _ODD_BLANK.search(opening):
        return False
    if first > 0 and _ODD_BLANK.search(lines[first - 1]):
        return False
    return fenced or not any(_ODD_BLANK.search(line[:len(line) - len(line.lstrip())])
                             for line in lines[first:last])


_CONTAINERS = ("blockquote_open", "list_item_open", "blockquote_close", "list_item_close")


def _closed(lines: list[str], first: int, last: int, markup: str) -> bool:
    """Whether a fence ends with its closing line (not with its container, or the end)."""
    if last - first < 2:
        return False
    line = lines[last - 1]
    indent = _CONTAINER_INDENT.match(line)
    rest = line[indent.end() if indent else 0:].rstrip(" ")
    return len(rest) >= len(markup) and rest == rest[0] * len(rest) and rest[0] == markup[0]


def _block_kinds(answer: str, lines: list[str]) -> list[str]:
    """The kind of each line: ``code`` (in a fenced or indented code block), ``code+``
    (a later line of the same block), ``heading``, ``rule`` (a setext underline or a
    table's delimiter row), ``table`` or ``prose``.

    After a fence that its container ends (a list item or a block quote, not its closing
    line), later fences may pair differently in marked: from there on, code is checked
    as prose. So is an indented code block inside a container (list indentation is
    where the two readers differ most), and a block in a container whose first line
    holds an odd blank (a tab after a list marker moves its content differently)."""
    count = len(lines)
    kinds = ["prose"] * count
    sure = True
    containers: list[int] = []  # the first lines of the open block quotes and list items
    for token in _markdown().parse(answer):
        if token.nesting == -1:
            if token.type in _CONTAINERS:
                containers.pop()
            continue
        if token.map is None:
            continue
        first, last = token.map[0], min(token.map[1], count)
        if token.type in _CONTAINERS:
            containers.append(first)
        elif token.type in ("fence", "code_block") and last > first:
            sure = _code(kinds, lines, token, containers, sure=sure)
        elif token.type in _BLOCK_KINDS:
            _block(kinds, token, first, last)
    return kinds


_BLOCK_KINDS = {"heading_open": "heading", "table_open": "table"}


def _block(kinds: list[str], token: Any, first: int, last: int) -> None:
    """Mark a heading's or a table's lines; a setext heading's underline and a table's
    delimiter row are rules."""
    kind = _BLOCK_KINDS[token.type]
    kinds[first:last] = [kind] * (last - first)
    if last - first < 2:
        return
    if token.markup in ("=", "-"):
        kinds[last - 1] = "rule"
    elif kind == "table":
        kinds[first + 1] = "rule"


def _code(kinds: list[str], lines: list[str], token: Any, containers: list[int], *,
          sure: bool) -> bool:
    """Mark a code block's lines as code where both readers surely see it; whether the
    blocks after it are still sure."""
    first, last = token.map[0], min(token.map[1], len(lines))
    fenced = token.type == "fence"
    if sure and _surely_code(lines, first, last, fenced) and (fenced or token.level == 0) \
            and not any(_ODD_BLANK.search(lines[c]) for c in containers):
        kinds[first:last] = ["code"] + ["code+"] * (last - first - 1)
    return sure and not (fenced and last < len(lines)
                         and not _closed(lines, first, last, token.markup))


def _lines(answer: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, kind) of the answer's units: code blocks whole, other lines one by
    one (blank lines and rules dropped)."""
    spans = _line_spans(answer)
    kinds = _block_kinds(answer, [answer[a:b] for a, b in spans])
    i = 0
    while i < len(spans):
        start, end = spans[i]
        kind = kinds[i]
        i += 1
        if kind == "code":
            while i < len(spans) and kinds[i] == "code+":
                end = spans[i][1]
                i += 1
            end = start + len(answer[start:end].rstrip())
            if end > start:
                yield start, end, "code"
        elif kind not in ("rule", "code+") and answer[start:end].strip() \
                and not _TABLE_RULE.match(answer[start:end]):
            yield start, end, kind


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
    """A line in a language with pySBD rules of its own (Chinese), cut first where the
    language changes at a sentence end (``…生效。Mr. Biden …`` and ``… president. 他…``),
    each part then split by pySBD's rules for its language: the Chinese rules cut at
    every ``.``, which would split "Mr." and "U.S." of an English sentence in a Chinese
    answer."""
    spans: list[list[int]] = []
    start = 0
    for cut in [m.end() for m in _LANGUAGE_CHANGE.finditer(text)] + [len(text)]:
        part = text[start:cut]
        if part.strip():
            spans.extend([a + start, b + start] for a, b in _pieces(part, _rules(part)))
        start = cut
    return spans


def whole(text: str, offset: int = 0) -> list[Span]:
    """``text`` (at ``offset``) as one span without its surrounding blanks; none when it
    is blank."""
    core = text.strip()
    at = len(text) - len(text.lstrip())
    return [Span(core, offset + at, offset + at + len(core))] if core else []


def _split_prose(text: str, offset: int, marker: re.Pattern[str]) -> list[Span]:
    if not _INNER_END.search(text):  # no sentence end before the last word: one sentence
        return whole(text, offset)
    rules = _rules(text)
    spans = _mixed_pieces(text) if rules != "en" else _pieces(text, rules)
    # markers and closing quotes at the start of a sentence go back to the one before
    for i in range(1, len(spans)):
        start, end = spans[i]
        moved = _lead_end(text, start, end, marker)
        if moved > start and text[start:moved].strip():
            spans[i - 1][1] = len(text[:moved].rstrip())
            spans[i][0] = moved + (len(text[moved:end]) - len(text[moved:end].lstrip()))
    return [Span(text[start:end], offset + start, offset + end) for start, end in spans
            if end > start]


def _lead_end(text: str, start: int, end: int, marker: re.Pattern[str]) -> int:
    """Where the citation markers, closing quotes and blanks that open the sentence
    ``text[start:end]`` end."""
    moved = start
    while moved < end:
        m = marker.match(text, moved)
        if m:
            moved = m.end()
        elif text[moved] in _CLOSERS or text[moved] in " \t,;":
            moved += 1
        else:
            break
    return moved


def segment(answer: str, marker: re.Pattern[str]) -> list[Span]:
    """The sentences of ``answer`` in order, each with its offsets in ``answer``."""
    out: list[Span] = []
    for start, end, kind in _lines(answer):
        line = answer[start:end]
        if kind == "prose" and line.lstrip().startswith("|"):
            kind = "table"  # a row that is no GFM table's: still cells
        out.extend(_UNITS[kind](line, start, marker))
    return out


def _code_unit(line: str, start: int, marker: re.Pattern[str]) -> list[Span]:
    return [Span(line, start, start + len(line), kind="code")]


def _heading_unit(line: str, start: int, marker: re.Pattern[str]) -> list[Span]:
    """A heading's title, without its marks (``## Title ##``, a list marker)."""
    heading = _HEADING.match(line) or _BLOCK_PREFIX.match(line)
    title = _HEADING_END.sub("", line[heading.end() if heading else 0:]).strip()
    if not title:
        return []
    at = start + line.index(title)
    return [Span(title, at, at + len(title), kind="heading")]


def _row_units(line: str, start: int, marker: re.Pattern[str]) -> list[Span]:
    """A table row: its cells are sentences."""
    return [span for cell in re.finditer(r"[^|]+", line) if cell.group().strip()
            for span in _split_prose(cell.group(), start + cell.start(), marker)]


def _prose_units(line: str, start: int, marker: re.Pattern[str]) -> list[Span]:
    """A line's sentences, after its block prefix (a list or quote marker)."""
    prefix = _BLOCK_PREFIX.match(line)
    skip = prefix.end() if prefix else 0
    return _split_prose(line[skip:], start + skip, marker)


_UNITS: dict[str, Callable[[str, int, re.Pattern[str]], list[Span]]] = {
    "code": _code_unit, "heading": _heading_unit, "table": _row_units, "prose": _prose_units}
"""How a line of each kind (:func:`_lines`) turns into sentences."""
