"""Markdown read as Markdown: blocks under their heading path, code kept as code, the
page's title where the author put it, and what is not text of the page left out.

The reader is markdown-it-py's CommonMark parser (tables on), the one grounding reads
answers with (:func:`agent_search._markdown.block_parser`): what is a heading, a fence, a
list or an HTML block is decided by one implementation of the spec, not by a second one
kept in step by tests.

* **Blocks keep the document's own Markdown.** A block is the source lines of one
  top-level element (a paragraph, a list, a table, a quote) as written; a fenced code
  block is one block, verbatim, blank lines and indentation included (an unclosed fence
  runs to the end and is closed). A block larger than
  :data:`~agent_search.kb._ingest._document.PARAGRAPH_CHARS` is cut on line boundaries,
  a fence closed and reopened with its info string.
* **Not text of the page:** front matter (a ``---`` block at the very start: metadata),
  HTML comments (``<!-- … -->``, an author's note to other authors) and raw HTML tags
  (layout). An HTML block keeps only the text a reader sees between its tags; a tag or
  comment inside a paragraph or heading is cut out of it. Code keeps everything.
* **Headings.** ATX and setext headings set the heading path; nothing inside a fence is
  a heading.
* **Title** (:func:`markdown_title`): the front matter's ``title``, else the first H1,
  else none (the caller names the page by its file).

Bounded: the lines are parsed in segments of about :data:`SEGMENT_CHARS`, cut at a blank
line outside a fence and an HTML comment (at twice that size, at any line: a fence or a
comment left open is closed and opened again), so memory holds one segment, never the
file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from agent_search._markdown import block_parser
from agent_search.kb._ingest._document import PARAGRAPH_CHARS, Block

FRONT_MATTER_LINES = 200
"""A front matter block longer than this is not one (its lines are read as text)."""

_INDENT = "\u3000"
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")
_OPENING = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_CLOSING = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
SEGMENT_CHARS = 1 << 16
"""Lines are parsed in segments of about this many characters (cut at a blank line)."""
_TAG = re.compile(r"<!--.*?-->|<!--.*\Z|<[A-Za-z/!?][^<>]*>", re.DOTALL)
"""An HTML comment (or one left open) or tag inside an HTML block."""
_TITLE = re.compile(r"^title[ \t]*:[ \t]*(.*?)[ \t]*$")


@dataclass(frozen=True, slots=True)
class Fence:
    """An open code fence: its opening line as written (with the info string) and the
    marks that close it."""

    opening: str
    marks: str

    def closed_by(self, line: str) -> bool:
        m = _CLOSING.match(line)
        return m is not None and m.group(1)[0] == self.marks[0] \
            and len(m.group(1)) >= len(self.marks)

    @property
    def closing(self) -> str:
        return self.marks


def opening_fence(line: str) -> Fence | None:
    """The fence ``line`` opens, if it opens one (a backtick fence's info string has no
    backtick)."""
    m = _OPENING.match(line)
    if m is None or (m.group(2)[0] == "`" and "`" in m.group(3)):
        return None
    return Fence(line.rstrip(), m.group(2))


def code_block(text: str) -> tuple[Fence, list[str]] | None:
    """A block's fence and code lines when the block is one fenced code block (as
    :func:`markdown_blocks_of_lines` makes them), else None."""
    first, _, rest = text.partition("\n")
    fence = opening_fence(first)
    if fence is None or not rest:
        return None
    lines = rest.split("\n")
    if not fence.closed_by(lines[-1]):
        return None
    return fence, lines[:-1]


def heading(line: str) -> tuple[int, str] | None:
    """(level, text) of an ATX heading line. The closing ``#``s are stripped in Python,
    not by the pattern: a lazy pattern there backtracks quadratically on long lines."""
    if len(line) > 1000 or "#" not in line[:4]:
        return None
    m = _HEADING.match(line)
    if m is None:
        return None
    text = (m.group(2) or "").rstrip()
    stripped = text.rstrip("#")
    if stripped != text and (not stripped or stripped[-1] in " \t"):
        text = stripped.rstrip()  # a closing sequence follows a space, or is all there is
    return len(m.group(1)), text


def markdown_title(head: str) -> str | None:
    """A page's title from its first characters: the front matter's ``title``, else the
    first H1 (ATX or setext) outside code; None when it has neither."""
    lines = head.split("\n")
    body = _after_front_matter(lines)
    if body is None:
        body = lines
    else:
        for line in lines[1:len(lines) - len(body) - 1]:
            if m := _TITLE.match(line.rstrip("\r")):
                title = m.group(1).strip().strip("\"'").strip()
                if title:
                    return title
    fence: Fence | None = None
    previous = ""
    for raw in body:
        line = raw.rstrip("\r")
        if fence is not None:
            fence = None if fence.closed_by(line) else fence
        elif (opened := opening_fence(line)) is not None:
            fence = opened
        elif (found := heading(line)) is not None:
            if found[0] == 1 and found[1]:
                return found[1]
        elif previous.strip() and _SETEXT.match(line) and line.strip()[0] == "=":
            return previous.strip()
        previous = line if fence is None else ""
    return None


def _after_front_matter(lines: list[str]) -> list[str] | None:
    """The lines after a front matter block (``---`` first, closed by ``---`` or
    ``...`` within :data:`FRONT_MATTER_LINES`), or None when there is none."""
    if not lines or lines[0].rstrip("\r").rstrip() != "---":
        return None
    for index in range(1, min(len(lines), FRONT_MATTER_LINES + 1)):
        if lines[index].rstrip("\r").rstrip() in ("---", "..."):
            return lines[index + 1:]
    return None


def _without_front_matter(lines: Iterable[str]) -> Iterator[str]:
    """``lines`` less a front matter block at the start (closed within
    :data:`FRONT_MATTER_LINES` lines; an unclosed or longer one is text)."""
    it = iter(lines)
    first = next(it, None)
    if first is None:
        return
    if first.rstrip("\r").rstrip() != "---":
        yield first
        yield from it
        return
    held = [first]
    for line in it:
        if line.rstrip("\r").rstrip() in ("---", "..."):
            break  # closed: the block is metadata, not text
        held.append(line)
        if len(held) > FRONT_MATTER_LINES:
            yield from held
            break
    else:
        yield from held  # never closed: text
    yield from it


class _Reader:
    """The state of :func:`markdown_blocks_of_lines` across segments: the heading path."""

    def __init__(self) -> None:
        self.path: list[str] = []

    def headings(self) -> tuple[str, ...]:
        return tuple(h for h in self.path if h)

    def set_heading(self, level: int, text: str) -> None:
        del self.path[level - 1:]
        self.path.extend([""] * (level - 1 - len(self.path)))
        self.path.append(text)

    def segment(self, lines: list[str]) -> Iterator[Block]:
        """The blocks of one segment's lines (whole top-level elements)."""
        tokens = block_parser().parse("\n".join(lines))
        i = 0
        while i < len(tokens):
            token = tokens[i]
            if token.level != 0 or token.map is None:
                i += 1
                continue
            first, last = token.map
            if token.type == "heading_open":
                text = " ".join(_without_html(tokens[i + 1]).split())
                self.set_heading(int(token.tag[1:]), text)
            elif token.type == "fence":
                yield from self._code(lines[first:last], token)
            elif token.type == "html_block":
                visible = _TAG.sub(" ", token.content)
                if visible.strip():
                    yield from self._text([" ".join(visible.split())])
            else:
                yield from self._text(_strip_html(lines[first:last], tokens, i))
            i += 1

    def _text(self, lines: list[str]) -> Iterator[Block]:
        """A block of prose lines (trailing spaces and blank edges off), cut on lines at
        :data:`PARAGRAPH_CHARS`; a line that starts with an ideographic space starts a
        block (a paragraph of Chinese text is indented "　　", not set apart)."""
        part: list[str] = []
        size = 0
        for line in lines:
            if part and (size + len(line) >= PARAGRAPH_CHARS or line.startswith(_INDENT)):
                yield from self._flush(part)
                part, size = [], 0
            part.append(line.rstrip())
            size += len(line) + 1
        yield from self._flush(part)

    def _flush(self, part: list[str]) -> Iterator[Block]:
        text = "\n".join(part).strip("\n")
        if text.strip():
            yield Block(text, self.headings())

    def _code(self, lines: list[str], token: Any) -> Iterator[Block]:
        """A fenced code block as written, closed when the file left it open, cut on
        lines at :data:`PARAGRAPH_CHARS` (each part closed, the next reopened)."""
        fence = opening_fence(lines[0].lstrip()) if lines else None
        if fence is None:  # a fence inside a container: its code, fenced plainly
            fence = Fence(token.markup + token.info, token.markup)
            body = token.content.rstrip("\n").split("\n")
        else:
            fence = Fence(lines[0].rstrip(), fence.marks)
            body = lines[1:]
            if body and fence.closed_by(body[-1]):
                body = body[:-1]
            else:  # left open: runs to the end, its last blank lines are the file's
                while body and not body[-1].strip():
                    body.pop()
        part: list[str] = []
        size = 0
        for line in body:
            if part and size + len(line) >= PARAGRAPH_CHARS:
                yield Block("\n".join([fence.opening, *part, fence.closing]), self.headings())
                part, size = [], 0
            part.append(line)
            size += len(line) + 1
        if any(line.strip() for line in part):
            yield Block("\n".join([fence.opening, *part, fence.closing]), self.headings())


def _without_html(inline: Any) -> str:
    """A heading's text less its inline HTML (tags and comments)."""
    text = str(inline.content)
    for child in inline.children or ():
        if child.type == "html_inline":
            text = text.replace(child.content, " ", 1)
    return text


def _strip_html(lines: list[str], tokens: list[Any], start: int) -> list[str]:
    """A top-level element's source lines less the inline HTML its paragraphs hold
    (found by the parser, so a tag in a code span stays), cut out where it stands."""
    html = [child.content for token in _element(tokens, start) if token.type == "inline"
            for child in token.children or () if child.type == "html_inline"]
    if not html:
        return lines
    text = "\n".join(lines)
    out: list[str] = []
    pos = 0
    for piece in html:
        at = text.find(piece, pos)
        if at < 0:
            continue
        left = text[pos:at]
        out.append(left)
        pos = at + len(piece)
        if (left.endswith(" ") or not left) and text[pos:pos + 1] == " ":
            pos += 1
    out.append(text[pos:])
    return "".join(out).split("\n")


def _element(tokens: list[Any], start: int) -> Iterator[Any]:
    """The tokens of the top-level element that opens at ``start`` (up to its close)."""
    yield tokens[start]
    for token in tokens[start + 1:]:
        if token.level == 0:
            return
        yield token


def _segments(lines: Iterable[str]) -> Iterator[list[str]]:
    """Lines in segments of about :data:`SEGMENT_CHARS`, each ended at a blank line that
    is outside a fence and an HTML comment (so no element is cut between two)."""
    part: list[str] = []
    size = 0
    fence: Fence | None = None
    comment = False
    for raw in lines:
        line = raw.rstrip("\r")
        if fence is not None:
            fence = None if fence.closed_by(line.lstrip(" >")) else fence
        elif comment:
            comment = "-->" not in line
        elif (opened := opening_fence(line.lstrip(" >"))) is not None:
            fence = opened
        elif "<!--" in line:
            comment = "-->" not in line[line.rindex("<!--"):]
        if not line.strip() and fence is None and not comment and size >= SEGMENT_CHARS:
            yield part
            part, size = [], 0
            continue
        if size >= 2 * SEGMENT_CHARS:  # no blank line to cut at: cut here, closing what
            # is open and opening it again (a paragraph cut in two, as a block is)
            yield [*part, fence.closing] if fence is not None else \
                [*part, "-->"] if comment else part
            part = [fence.opening] if fence is not None else ["<!--"] if comment else []
            size = sum(len(x) + 1 for x in part)
        part.append(line)
        size += len(line) + 1
    if part:
        yield part


def markdown_blocks_of_lines(lines: Iterable[str]) -> Iterator[Block]:
    """The blocks of a Markdown text's lines (see the module's doc)."""
    reader = _Reader()
    for segment in _segments(_without_front_matter(lines)):
        yield from reader.segment(segment)
