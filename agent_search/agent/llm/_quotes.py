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
from collections.abc import Sequence
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
    tokens = block_parser().parse(text)
    out: list[Unit] = []
    header: list[str] = []
    row: list[str] | None = None
    in_header = False
    for n, token in enumerate(tokens):
        if token.type in ("fence", "code_block"):
            _attach(out, Code(token.info.strip().split(" ")[0], token.content.rstrip("\n")))
        elif token.type == "thead_open":
            in_header, header = True, []
        elif token.type == "thead_close":
            in_header = False
        elif token.type == "tr_open":
            row = []
        elif token.type == "tr_close" and row is not None:
            if not in_header:
                out.append(Unit(_row_text(header, row), values=" ".join(row)))
            row = None
        elif token.type == "inline" and row is not None:
            (header if in_header else row).append(_plain(token))
        elif token.type == "inline" and _prose(tokens, n):
            out += [Unit(" ".join(s.split())) for s in split_sentences(_plain(token))]
    return [u for u in out if u.text or u.code]


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
    chosen: list[int] = []
    length = 0
    for i in ranked:
        size = _size(found[i])
        if chosen and length + size > max_chars:
            break
        chosen.append(i)
        length += size
    return [_fitted(found[i], 2 * max_chars) for i in sorted(chosen)]


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
