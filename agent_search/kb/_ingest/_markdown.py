"""Markdown read as its author wrote it: blocks under their heading path, code kept as
code, the page's title where the author put it.

* **Blocks keep the document's own Markdown.** A paragraph's lines stay lines (a list, a
  table, a quote keep their shape); a fenced code block (CommonMark: up to three spaces,
  then three or more backticks or tildes and an info string, closed by the same
  character at least as many times) is one block, verbatim, blank lines and indentation
  included. Before, a fence's lines were joined with spaces (``def f(r):
  r.raise_for_status()``), a blank line inside one split it, and chunks cut fences in two
  (issue 34 item 2). A block larger than :data:`~agent_search.kb._ingest._document.PARAGRAPH_CHARS`
  is cut on line boundaries, the fence closed and reopened with its info string.
* **Headings.** ATX (``#`` … ``######``) and setext (a paragraph underlined by ``===`` or
  ``---``) headings set the heading path; nothing inside a fence is a heading.
* **Title** (:func:`markdown_title`): the front matter's ``title``, else the first H1,
  else none (the caller names the page by its file). A page that starts at ``##`` used
  to take its first H2 as the title of every chunk (issue 34 item 3). Front matter (a
  ``---`` block at the very start) is metadata, not text: it is not a block.

Streaming and bounded: lines are consumed one at a time, a block holds at most about
``PARAGRAPH_CHARS`` characters, the front matter at most :data:`FRONT_MATTER_LINES`
lines (past that, the lines are read as text), and every line is looked at a fixed
number of times.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from agent_search.kb._ingest._document import PARAGRAPH_CHARS, Block

FRONT_MATTER_LINES = 200
"""A front matter block longer than this is not one (its lines are read as text)."""

_INDENT = "\u3000"
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")
_OPENING = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_CLOSING = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
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


class _Builder:
    """The state of :func:`markdown_blocks_of_lines`: the heading path, the paragraph or
    code block being read."""

    def __init__(self) -> None:
        self.path: list[str] = []
        self.lines: list[str] = []
        self.size = 0
        self.fence: Fence | None = None

    def headings(self) -> tuple[str, ...]:
        return tuple(h for h in self.path if h)

    def set_heading(self, level: int, text: str) -> None:
        del self.path[level - 1:]
        self.path.extend([""] * (level - 1 - len(self.path)))
        self.path.append(text)

    def add(self, line: str) -> None:
        self.lines.append(line)
        self.size += len(line) + 1

    def flush(self) -> Iterator[Block]:
        """The paragraph read so far (its lines as written, less trailing spaces)."""
        text = "\n".join(line.rstrip() for line in self.lines).strip("\n")
        self.lines, self.size = [], 0
        if text.strip():
            yield Block(text, self.headings())

    def flush_code(self, *, reopen: bool) -> Iterator[Block]:
        """The code block read so far, closed; with ``reopen`` (a block cut for size) the
        next one starts with the same opening line."""
        assert self.fence is not None
        body = self.lines[1:]
        text = "\n".join([self.fence.opening, *body, self.fence.closing])
        self.lines, self.size = [], 0
        if any(line.strip() for line in body):
            yield Block(text, self.headings())
        if reopen:
            self.add(self.fence.opening)


def markdown_blocks_of_lines(lines: Iterable[str]) -> Iterator[Block]:
    """The blocks of a Markdown text's lines (see the module's doc)."""
    b = _Builder()
    for raw in _without_front_matter(lines):
        line = raw.rstrip("\r")
        if b.fence is not None:
            if b.fence.closed_by(line):
                yield from b.flush_code(reopen=False)
                b.fence = None
                continue
            b.add(line)
            if b.size >= PARAGRAPH_CHARS:
                yield from b.flush_code(reopen=True)
            continue
        if (fence := opening_fence(line)) is not None:
            yield from b.flush()
            b.fence = fence
            b.add(line)
            continue
        found = heading(line)
        if found is None and b.lines and _SETEXT.match(line):
            text = " ".join(" ".join(x.split()) for x in b.lines)
            b.lines, b.size = [], 0
            found = (1 if line.strip()[0] == "=" else 2, text)
        if found is not None:
            yield from b.flush()
            b.set_heading(*found)
        elif not line.strip():
            yield from b.flush()
        else:
            if line.startswith(_INDENT):
                yield from b.flush()  # a paragraph of Chinese text starts indented "　　"
            b.add(line)
            if b.size >= PARAGRAPH_CHARS:
                yield from b.flush()
    if b.fence is not None:  # a fence left open runs to the end (its last blank lines
        while len(b.lines) > 1 and not b.lines[-1].strip():  # are the file's end)
            b.lines.pop()
        yield from b.flush_code(reopen=False)
    else:
        yield from b.flush()
