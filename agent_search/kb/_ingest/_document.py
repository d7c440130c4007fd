"""What a loader gives: a :class:`Document` of :class:`Block` s (paragraphs under a heading
path, on a page), or a :class:`Skipped` file with the reason; and the :class:`Limits` a
parse works within. Shared by the loaders of :mod:`agent_search.kb._ingest._loaders` and
:mod:`agent_search.kb._ingest._office`, and by the chunker."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from agent_search._text import path_text, scrub
from agent_search.errors import InputError

PARAGRAPH_CHARS = 1 << 15
"""A block is cut once it holds this many characters (at the last whitespace; Markdown
code at a line's end): no block of a loader holds a file's text whole."""


@dataclass(slots=True)
class Block:
    text: str
    headings: tuple[str, ...] = ()
    page: int | None = None

    def __post_init__(self) -> None:
        # whatever a parser decoded (a PDF's broken UTF-16, a "\ud800" escape): text only
        self.text = scrub(self.text)
        self.headings = tuple(scrub(h) for h in self.headings)


@dataclass(slots=True)
class Document:
    doc_id: str
    source: str
    title: str | None
    blocks: Iterable[Block] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    ocr_pages: list[int] = field(default_factory=list)
    """Pages whose text was read by OCR (an image is page 1): their chunks say so."""

    def __post_init__(self) -> None:
        self.source = path_text(self.source)
        self.title = None if self.title is None else scrub(self.title)


@dataclass(frozen=True, slots=True)
class Skipped:
    source: str
    reason: str


class TextTooLarge(InputError):
    """The text extracted from a file is over the cap."""


class ParseLimit(InputError):
    """A file needs more than a parse limit allows (pages, decompressed bytes)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What parsing one file may cost: characters of text out, pages (or slides), and
    bytes decompressed (PDF content streams, each time a page uses one; the parts of an
    office file); for scans, pages read by OCR, pixels of one page image (checked from
    its header, before it is decoded), seconds of OCR, and the pages read at once. Time
    and memory are bounded by the child process that parses
    (:mod:`agent_search.kb._ingest._sandbox`)."""

    max_chars: int = 20_000_000
    max_pages: int = 5_000
    max_decompressed: int = 200_000_000
    max_ocr_pages: int = 100
    max_pixels: int = 50_000_000
    max_ocr_seconds: float = 300.0
    ocr_workers: int = 1
    """Pages of one file read by OCR at once, each on a thread (``kb.ocr_workers``)."""
