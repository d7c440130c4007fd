"""What the offline responder quotes of a reference: whole sentences, code as code, a
table row with its header.

A reference's text is Markdown (a kb chunk keeps its document's own Markdown), read into
blocks by the package's one Markdown reader (:func:`agent_search._markdown.block_parser`,
which the kb's chunking and the grounding use too) rather than by
lines: quoting by lines had joined two sentences across a code block it dropped and
turned an instruction into its opposite ("To roll back, run the rollback script: Never
roll back during a migration."), and quoted half of a table row. The units quoted:

- a sentence of a paragraph or list item (:func:`split_sentences`; headings are titles);
- a sentence that introduces a code block (it ends with ``:``) together with that block;
- a table row as ``header: value`` pairs, so it reads whole and says what each value is;
- a code block no sentence introduces, only when the text is nothing but code.

The best units for a question (most words shared) are kept, in text order, within a
budget of characters; a sentence is never cut but for one that alone is far past it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_search._markdown import block_parser
from agent_search.agent.llm._sentences import split_sentences

if TYPE_CHECKING:
    from markdown_it.token import Token

MAX_CODE_CHARS = 800
"""A code block longer than this is not quoted: its sentence says where it is instead."""
_LONG_CODE = " (the code is in the reference)"
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Code:
    info: str
    text: str


@dataclass(frozen=True, slots=True)
class Unit:
    """One quotable piece: a sentence (with the code block it introduces), a table row,
    or a code block alone (``text`` empty)."""

    text: str
    code: Code | None = None
    values: str = ""
    """What a table row is matched on: its cells (every row holds the header's words)."""


def units(text: str) -> list[Unit]:
    """The quotable units of ``text`` in order."""
    reader = _Reader(block_parser().parse(text))
    for n, token in enumerate(reader.tokens):
        step = _STEPS.get(token.type)
        if step is not None:
            step(reader, token, n)
    return [u for u in reader.out if u.text or u.code]


class _Reader:
    """One pass over a text's block tokens: the units so far, and the table row (or
    header) being read. Each step reads one kind of token (:data:`_STEPS`)."""

    def __init__(self, tokens: Sequence[Token]) -> None:
        self.tokens = tokens
        self.out: list[Unit] = []
        self.header: list[str] = []
        self.row: list[str] | None = None
        self.in_header = False

    def code(self, token: Token, n: int) -> None:
        _attach(self.out, Code(token.info.strip().split(" ")[0], token.content.rstrip("\n")))

    def header_open(self, token: Token, n: int) -> None:
        self.in_header, self.header = True, []

    def header_close(self, token: Token, n: int) -> None:
        self.in_header = False

    def row_open(self, token: Token, n: int) -> None:
        self.row = []

    def row_close(self, token: Token, n: int) -> None:
        if self.row is not None and not self.in_header:
            self.out.append(Unit(_row_text(self.header, self.row), values=" ".join(self.row)))
        self.row = None

    def inline(self, token: Token, n: int) -> None:
        """A table cell's text, or a paragraph's sentences (a heading's text is neither)."""
        if self.row is not None:
            (self.header if self.in_header else self.row).append(_plain(token))
        elif _prose(self.tokens, n):
            self.out += [Unit(" ".join(s.split())) for s in split_sentences(_plain(token))]


_STEPS: dict[str, Callable[[_Reader, Token, int], None]] = {
    "fence": _Reader.code, "code_block": _Reader.code,
    "thead_open": _Reader.header_open, "thead_close": _Reader.header_close,
    "tr_open": _Reader.row_open, "tr_close": _Reader.row_close,
    "inline": _Reader.inline,
}
"""Token type → the step that reads it; other tokens (openings and closings of
paragraphs, lists, headings) carry nothing of their own."""


def _prose(tokens: Sequence[Token], n: int) -> bool:
    """A paragraph's text (a heading is a title, not something the reference says)."""
    return n > 0 and tokens[n - 1].type == "paragraph_open"


def _plain(token: Token) -> str:
    """An inline token's text as written (its Markdown kept: `code`, **bold**, links)."""
    return token.content


def _attach(out: list[Unit], code: Code) -> None:
    """A code block goes with the sentence before it when that sentence introduces it
    (ends with a colon); otherwise it stands alone."""
    if out and out[-1].code is None and out[-1].text.endswith(":"):
        out[-1] = Unit(out[-1].text, code)
    else:
        out.append(Unit("", code))


def _row_text(header: Sequence[str], row: Sequence[str]) -> str:
    """A table row as ``header: value`` pairs (empty cells left out); the values alone,
    joined by commas, when the table has no header text."""
    pairs = [f"{h}: {v}" if h else v for h, v in zip(header, row, strict=False) if v]
    pairs += [v for v in row[len(header):] if v]
    return ", ".join(pairs) + "." if pairs else ""


def words(text: str, stop: frozenset[str]) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if w.lower() not in stop and len(w) > 1}


def best_units(question: str, text: str, max_chars: int, stop: frozenset[str]
               ) -> list[Unit]:
    """The units sharing most words with the question (best first, given in text order);
    the opening unit when none does. Code alone is a candidate only when the text holds
    nothing else."""
    found = units(text)
    candidates = [i for i, u in enumerate(found) if u.text] or list(range(len(found)))
    if not candidates:
        return []
    q = words(question, stop)
    overlap = {i: len(q & words(_said(found[i]), stop)) for i in candidates}
    ranked = sorted((i for i in candidates if overlap[i] > 0),
                    key=lambda i: (-overlap[i], i)) or candidates[:1]
    chosen = _within_budget([(i, _size(found[i])) for i in ranked], max_chars)
    return [_fitted(found[i], 2 * max_chars) for i in sorted(chosen)]


def _within_budget(sized: list[tuple[int, int]], max_chars: int) -> list[int]:
    """The leading units of ``sized`` (index, characters) whose sizes sum within
    ``max_chars``; the first one always, however long."""
    chosen: list[int] = []
    length = 0
    for i, size in sized:
        if chosen and length + size > max_chars:
            break
        chosen.append(i)
        length += size
    return chosen


def _said(unit: Unit) -> str:
    return unit.values or unit.text or (unit.code.text if unit.code else "")


def _size(unit: Unit) -> int:
    code = unit.code
    return len(unit.text) + (len(code.text) if code and len(code.text) <= MAX_CODE_CHARS
                             else 0)


def _fitted(unit: Unit, limit: int) -> Unit:
    """The unit as quoted: a code block past its bound is left in the reference (the
    sentence says so), and a sentence far past the budget is cut at a word with "…"."""
    text, code = unit.text, unit.code
    if code is not None and len(code.text) > MAX_CODE_CHARS:
        if not text:
            return Unit(code.text[:MAX_CODE_CHARS].rsplit("\n", 1)[0] + "\n…")
        text, code = text.rstrip(":") + _LONG_CODE + ".", None
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0] + " …"
    return Unit(text, code)


def fence(code: Code, indent: str) -> str:
    """``code`` as a fenced block, each line indented by ``indent`` (inside a list item),
    its fence longer than any run of backticks in it."""
    longest = max((len(m) for m in re.findall(r"`+", code.text)), default=0)
    mark = "`" * max(3, longest + 1)
    body = "\n".join(indent + line if line else "" for line in code.text.split("\n"))
    return f"{indent}{mark}{code.info}\n{body}\n{indent}{mark}"
