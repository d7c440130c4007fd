"""Reading files into documents: .txt, .md, .html/.htm, .pdf (text layer), .csv and BEIR
``corpus.jsonl`` (one document per line) here, .docx, .pptx, .xlsx in
:mod:`agent_search.kb._ingest._office`; which reader takes which suffix is the table of
:mod:`agent_search.kb._ingest._formats`.

A document is a title and blocks (paragraphs) each under a heading path, so the chunker
can keep sections together. Text and Markdown files are *streamed*: read in pieces of
:data:`READ_CHARS`, and no block is longer than about :data:`PARAGRAPH_CHARS` (a longer
paragraph, or a file with no line breaks at all, is cut at whitespace), so memory does not
grow with the file; so are CSV files. HTML, PDF and office files are parsed whole, by the
ingest in a child process with a deadline and a memory cap
(:mod:`agent_search.kb._ingest._sandbox`), within :class:`Limits` (text out, pages, decompressed
bytes).

A file that cannot be read yields a :class:`Skipped` with the reason; the caller reports it
and goes on with the rest. Parser warnings (pypdf's, trafilatura's) go into
:attr:`Document.warnings`, never to stderr.

Identity: a file's :func:`source_key` is its resolved path relative to the ingest's root
(or the absolute resolved path when it lies outside), so ``README.md``, ``./README.md`` and
``/abs/README.md`` are one source.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import json
import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

from agent_search._text import path_text, scrub
from agent_search.kb._ingest._document import (
    PARAGRAPH_CHARS,
    Block,
    Document,
    Limits,
    ParseLimit,
    Skipped,
    TextTooLarge,
)
from agent_search.kb._ingest._markdown import markdown_blocks_of_lines, markdown_title

__all__ = ["PARAGRAPH_CHARS", "Block", "Document", "Limits", "ParseLimit", "Skipped",
           "TextTooLarge", "blocks_of_lines", "file_doc_id", "finished", "glue", "joins_unspaced",
           "legacy_file_doc_id", "markdown_blocks", "parse_html", "parse_pdf", "read_csv",
           "read_jsonl", "read_text", "source_key"]

READ_CHARS = 1 << 16
"""Characters read from a text file at a time."""
TITLE_SCAN_CHARS = 1 << 16
"""A Markdown file's title is its first heading within this many leading characters."""

_INDENT = "\u3000"
_NEUTRAL = "“”‘’…"
"""Quotes and ellipses both scripts use: the characters beside them decide the gluing."""

logger = logging.getLogger(__name__)


def source_key(path: Path, root: Path) -> str:
    """The canonical name of a file: resolved (symlinks, ``.``/``..``) and relative to
    ``root`` in POSIX form, or absolute when the file is outside ``root``."""
    resolved = path.resolve()
    try:  # a name that is not UTF-8 is kept apart from others, as text (\xNN)
        return path_text(resolved.relative_to(root.resolve()).as_posix())
    except ValueError:
        return path_text(resolved.as_posix())


def file_doc_id(key: str) -> str:
    """A file's document id, derived from its :func:`source_key`."""
    return hashlib.sha1(f"file\x00{key}".encode()).hexdigest()[:16]


def legacy_file_doc_id(path: Path) -> str:
    """The document id files had before source keys (a hash of the absolute path); used
    to find and replace their chunks on re-ingest."""
    return hashlib.sha1(str(path.resolve()).encode("utf-8")).hexdigest()[:16]


def read_text(path: Path, source: str, limits: Limits, *,
              markdown: bool = False) -> Iterator[Document]:
    """A text or Markdown file as one document whose blocks are read as it is consumed,
    once the whole file was checked to be UTF-8."""
    _check_utf8(path)
    title = _markdown_file_title(path) if markdown else None
    yield Document(file_doc_id(source), source, title or path_text(path.stem),
                   _stream_blocks(path, markdown))


def read_csv(path: Path, source: str, limits: Limits) -> Iterator[Document]:
    """A CSV file as one document of its rows
    (:func:`~agent_search.kb._ingest._office.csv_blocks`)."""
    _check_utf8(path)
    from agent_search.kb._ingest._office import csv_blocks

    warnings: list[str] = []
    yield Document(file_doc_id(source), source, path.stem, csv_blocks(path, warnings), warnings)


def read_jsonl(path: Path, source: str, limits: Limits) -> Iterator[Document | Skipped]:
    """A BEIR corpus, one document per line (:func:`_load_jsonl`), once checked UTF-8."""
    _check_utf8(path)
    yield from _load_jsonl(path, source)


def parse_html(path: Path, source: str, limits: Limits) -> Document:
    """An HTML page's main text as Markdown-like blocks (trafilatura)."""
    return _load_html(path, source, _read_text(path, limits.max_chars))


def finished(doc: Document, path: Path) -> Iterator[Document | Skipped]:
    """A document parsed whole, its blocks held and its title found (the first heading,
    else the file's name), or :class:`Skipped` when it has no text."""
    blocks = list(doc.blocks)
    doc.blocks = blocks
    if doc.title is None:
        doc.title = _first_heading(blocks) or path_text(path.stem)
    if not any(b.text.strip() for b in blocks):
        yield Skipped(str(path), "no text")
        return
    yield doc


def _check_utf8(path: Path) -> None:
    """Raise :class:`UnicodeDecodeError` unless the whole file is UTF-8 (read in pieces),
    so a file is refused before any of it is stored."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    with path.open("rb") as fh:
        for piece in iter(lambda: fh.read(READ_CHARS), b""):
            decoder.decode(piece)
    decoder.decode(b"", final=True)


def _read_text(path: Path, max_chars: int) -> str:
    with path.open(encoding="utf-8-sig", errors="strict") as fh:
        text = fh.read(max_chars + 1)
    if len(text) > max_chars:
        raise TextTooLarge(f"text over the cap of {max_chars:,} characters (kb.max_file_mb)")
    return text


def _read_lines(path: Path) -> Iterator[str]:
    """The file's lines (universal newlines, no terminator); a line longer than
    :data:`PARAGRAPH_CHARS` comes in pieces (see :func:`_cut`), so no line is ever held whole."""
    with path.open(encoding="utf-8-sig", errors="strict") as fh:
        rest = ""
        for piece in iter(lambda: fh.read(READ_CHARS), ""):
            rest += piece
            lines = rest.split("\n")
            rest = lines.pop()
            yield from lines
            while len(rest) > PARAGRAPH_CHARS:
                head, rest = _cut(rest, PARAGRAPH_CHARS)
                yield head
        if rest:
            yield rest


def glue(parts: Iterable[str]) -> str:
    """``parts`` joined by a space, except between two CJK characters (Chinese and
    Japanese write no space between words or sentences)."""
    out: list[str] = []
    for part in parts:
        if out and not (joins_unspaced(out[-1].rstrip(_NEUTRAL)[-1:])
                        and joins_unspaced(part.lstrip(_NEUTRAL)[:1])):
            out.append(" ")
        out.append(part)
    return "".join(out)


def joins_unspaced(char: str) -> bool:
    """True for one Han, kana or full-width character (CJK punctuation included): two
    such characters are glued without a space. Wider than the language package's
    script test, which counts letters only."""
    if not char:
        return False
    code = ord(char)
    return (0x3000 <= code <= 0x30FF or 0x3400 <= code <= 0x4DBF or 0x4E00 <= code <= 0x9FFF
            or 0xF900 <= code <= 0xFAFF or 0xFF00 <= code <= 0xFFEF
            or 0x20000 <= code <= 0x2FA1F)


_SENTENCE_ENDS = ("。", "！", "？", ". ", "! ", "? ")


def _cut(text: str, limit: int) -> tuple[str, str]:
    """``text`` split near ``limit``: after the last sentence end in the second half before
    it, else after the last whitespace, else at it. Chinese and Japanese have no spaces, so
    without the sentence ends a long paragraph of them was cut mid-sentence (mid-word)."""
    half = limit // 2
    ends = [text.rfind(end, half, limit) + len(end) for end in _SENTENCE_ENDS]
    cut = max(ends)  # a missing end gives at most len(end) - 1, under half
    if cut <= half:
        cut = max(text.rfind(" ", 0, limit), text.rfind("\t", 0, limit))
    if cut <= 0:
        cut = limit
    return text[:cut], text[cut:]


def _markdown_file_title(path: Path) -> str | None:
    with path.open(encoding="utf-8-sig", errors="strict") as fh:
        return markdown_title(fh.read(TITLE_SCAN_CHARS))


def _stream_blocks(path: Path, markdown: bool) -> Iterator[Block]:
    return blocks_of_lines(_read_lines(path), markdown=markdown)


def blocks_of_lines(lines: Iterable[str], *, markdown: bool) -> Iterator[Block]:
    """Paragraph blocks of text lines, cut into blocks of at most about
    :data:`PARAGRAPH_CHARS`; a paragraph's lines are joined by a space (none between two
    CJK characters). Markdown is read by :mod:`agent_search.kb._ingest._markdown` (the heading
    path, code kept as written)."""
    if markdown:
        yield from markdown_blocks_of_lines(lines)
        return
    buf: list[str] = []
    size = 0

    def flush() -> Iterator[Block]:
        nonlocal size
        if buf:
            # lines of one paragraph; a line wrapped inside Chinese text gets no space
            text = " ".join(glue(line.strip() for line in buf if line.strip()).split())
            buf.clear()
            size = 0
            if text:
                yield Block(text)

    for raw in lines:
        line = raw.rstrip("\r")
        if not line.strip():
            yield from flush()
            continue
        if line.startswith(_INDENT):
            yield from flush()  # a paragraph of Chinese text starts indented "　　"
        buf.append(line)
        size += len(line) + 1
        if size >= PARAGRAPH_CHARS:
            yield from flush()
    yield from flush()


def _first_heading(blocks: list[Block]) -> str | None:
    for block in blocks:
        if block.headings:
            return block.headings[0]
    return None


def _paragraphs(text: str, headings: tuple[str, ...], page: int | None = None) -> list[Block]:
    blocks = list(blocks_of_lines(_bounded(text.split("\n")), markdown=False))
    for block in blocks:
        block.headings, block.page = headings, page
    return blocks


def _bounded(lines: Iterable[str]) -> Iterator[str]:
    """``lines`` with each line longer than :data:`PARAGRAPH_CHARS` cut into pieces."""
    for line in lines:
        while len(line) > PARAGRAPH_CHARS:
            head, line = _cut(line, PARAGRAPH_CHARS)
            yield head
        yield line


def markdown_blocks(text: str) -> list[Block]:
    """Paragraphs of a Markdown text with the heading path they sit under."""
    return list(markdown_blocks_of_lines(_bounded(text.replace("\r\n", "\n").split("\n"))))


def _load_html(path: Path, source: str, html: str) -> Document:
    with _parser_logs() as found:
        doc = _parse_html(source, html)
    doc.warnings = found
    return doc


def _parse_html(source: str, html: str) -> Document:
    import trafilatura

    markdown = trafilatura.extract(html, output_format="markdown", include_tables=True,
                                   include_comments=False, favor_recall=True)
    meta = trafilatura.extract_metadata(html)
    title = meta.title if meta is not None and meta.title else None
    blocks = markdown_blocks(markdown) if markdown else []
    if not blocks:
        import lxml.html  # type: ignore[import-untyped]

        tree = lxml.html.fromstring(html) if html.strip() else None
        text = tree.text_content() if tree is not None else ""
        blocks = _paragraphs(text, ())
    return Document(file_doc_id(source), source, title, blocks)


_PARSER_LOGGERS = ("pypdf", "trafilatura", "htmldate", "courlan", "justext")


class _ParserLogs(logging.Handler):
    """Installed once on the parsers' loggers: while a file is parsed in this thread their
    records are collected for the file's report; any other record goes to our logger.
    Those loggers stop propagating, so nothing reaches stderr through logging's last
    resort (it did under ``--json``)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.local = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        sink: list[str] | None = getattr(self.local, "sink", None)
        message = " ".join(record.getMessage().split())[:300]
        if sink is not None:
            if record.levelno >= logging.WARNING and len(sink) < 20 and message not in sink:
                sink.append(message)
        else:
            logger.log(record.levelno, "%s: %s", record.name, message)


_PARSER_LOGS = _ParserLogs()
_PARSER_LOGS_LOCK = threading.Lock()


@contextlib.contextmanager
def _parser_logs() -> Iterator[list[str]]:
    """The warnings the parsers log in this thread during this block, as a list (not
    ``warnings.catch_warnings``: it swaps process-wide state, unsafe across threads)."""
    with _PARSER_LOGS_LOCK:
        for name in _PARSER_LOGGERS:
            parser_logger = logging.getLogger(name)
            if _PARSER_LOGS not in parser_logger.handlers:
                parser_logger.addHandler(_PARSER_LOGS)
                parser_logger.propagate = False
    found: list[str] = []
    _PARSER_LOGS.local.sink = found
    try:
        yield found
    finally:
        _PARSER_LOGS.local.sink = None


def parse_pdf(path: Path, source: str, limits: Limits, *,
              scans: Callable[[list[Block], Limits, Path], ScanReader] | None = None) -> Document:
    """A PDF's text layer (pypdf), page by page, within ``limits``; pages that are scans
    read by ``scans`` (OCR), if given."""
    from pypdf import PdfReader

    with _parser_logs() as found:
        doc = _read_pdf(PdfReader, path, source, limits, scans or _NoScans)
    doc.warnings = doc.warnings + found
    return doc


def _read_pdf(reader_type: type, path: Path, source: str, limits: Limits,
              scan_reader: Callable[[list[Block], Limits, Path], ScanReader] | None = None
              ) -> Document:
    """The text layer, page by page. Before a page's text is extracted its content streams
    are decompressed and counted against ``limits.max_decompressed`` (pages may share one
    stream, so a small file can make every page decompress and parse megabytes)."""
    max_chars = limits.max_chars
    reader = reader_type(str(path))
    if reader.is_encrypted:
        try:
            reader.decrypt("")
        except Exception as exc:
            raise ValueError("the PDF is encrypted") from exc
    title = None
    if reader.metadata is not None and reader.metadata.title:
        title = str(reader.metadata.title)
    pages = len(reader.pages)
    if pages > limits.max_pages:
        raise ParseLimit(f"{pages:,} pages, over the cap of {limits.max_pages:,} "
                         "(kb.max_pages)")
    blocks: list[Block] = []
    scans = (scan_reader or _NoScans)(blocks, limits, path)
    chars = 0
    unpacked = 0
    seen: dict[tuple[object, ...], tuple[int, str]] = {}  # content + resources → text
    for number, page in enumerate(reader.pages, start=1):
        key = _page_key(page)
        if key is not None and key in seen:
            size, text = seen[key]  # the same stream with the same fonts: parsed once
        else:
            contents = page.get_contents()
            size = len(contents.get_data()) if contents is not None else 0
            text = ""
            if unpacked + size <= limits.max_decompressed:
                text = page.extract_text() or ""
            if key is not None:
                seen[key] = (size, text)
        unpacked += size
        if unpacked > limits.max_decompressed:
            raise ParseLimit(
                f"content decompresses to over {limits.max_decompressed / 1e6:g} MB by page "
                f"{number} (kb.max_decompressed_mb)")
        chars += len(text)
        if chars > max_chars:
            raise TextTooLarge(f"text over the cap of {max_chars:,} characters "
                               "(kb.max_file_mb)")
        if scans.read(page, text, number, pages):
            continue
        blocks.extend(_paragraphs(text, (), number))
    return scans.finish(Document(file_doc_id(source), source, title, blocks))


class ScanReader(Protocol):
    """Reads the pages of a PDF that are scans (empty or garbage text layer) into the
    document's blocks: :class:`agent_search.kb._ingest._ocr.Scans`, given by the formats
    table (this module does not import the OCR module)."""

    def read(self, page: Any, text: str, number: int, pages: int) -> bool:
        """True when the page was a scan (its text, if any, went into the blocks)."""
        ...

    def finish(self, doc: Document) -> Document:
        ...


class _NoScans:
    def __init__(self, blocks: list[Block], limits: Limits, path: Path) -> None:
        pass

    def read(self, page: Any, text: str, number: int, pages: int) -> bool:
        return False

    def finish(self, doc: Document) -> Document:
        return doc


def _page_key(page: dict[object, object]) -> tuple[object, ...] | None:
    """What a page's text follows from, as written in the file: its content streams (by
    object number) and its resources (by object number, or their text when written in
    the page). Pages that share both share their text, so a stream shared by every page
    is parsed once (issue 32 item 2: a 6 KB PDF of pages sharing one large stream ran to
    the deadline). None when the content is not by reference."""
    from pypdf.generic import IndirectObject

    contents = dict.get(page, "/Contents")
    refs = contents if isinstance(contents, list) else [contents]
    if not refs or not all(isinstance(r, IndirectObject) for r in refs):
        return None
    resources = dict.get(page, "/Resources")
    where = (resources.idnum, resources.generation) \
        if isinstance(resources, IndirectObject) else repr(resources)
    return (*((r.idnum, r.generation) for r in refs if isinstance(r, IndirectObject)), where)


def _load_jsonl(path: Path, source: str) -> Iterator[Document | Skipped]:
    """BEIR corpus lines ``{"_id", "title", "text"}``; a bad line is reported, not fatal."""
    with path.open(encoding="utf-8-sig") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except (json.JSONDecodeError, RecursionError) as exc:
                msg = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
                yield Skipped(where, f"invalid JSON: {msg}")
                continue
            if not isinstance(row, dict) or "_id" not in row:
                yield Skipped(where, "not a BEIR corpus record (needs '_id')")
                continue
            # a "\ud800" escape decodes to a lone surrogate, which is not text
            text = scrub(str(row.get("text") or "")).strip()
            title = scrub(str(row.get("title") or "")).strip() or None
            if not text and not title:
                yield Skipped(where, "no text")
                continue
            yield Document(scrub(str(row["_id"])), source, title,
                           _paragraphs(text or title or "", ()) if len(text) > PARAGRAPH_CHARS
                           else [Block(text or title or "")])
