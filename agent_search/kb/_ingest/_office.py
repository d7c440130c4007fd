"""Office files and CSV: ``.docx``, ``.pptx``, ``.xlsx`` (python-docx, python-pptx,
openpyxl: pure-Python readers on lxml) and ``.csv`` (the standard library).

Structure is kept for the chunker. Headings — Word's heading styles (and ``Title``), a
slide's title, a sheet's name — become the heading path of the blocks under them, so a
chunk never spans two sections. A table is read row by row, one block per row that names
its columns (``"Name: Ada; Born: 1815"``) when its first row is a header, so a chunk
never holds half a row and a row found alone still says what its cells are. A slide is a
page (``Chunk.page`` is its number); its notes come under its title > ``Notes``.

Bounded: an office file is a ZIP, and before it is parsed the declared sizes of its
entries are summed against ``Limits.max_decompressed`` (:mod:`zipfile` never inflates an
entry past its declared size) and their number is capped; the text out is capped at
``Limits.max_chars``, slides at ``Limits.max_pages``. Time and memory are bounded by the
child process these run in (:mod:`agent_search.kb._ingest._sandbox`). A sheet's rows are read as
its file holds them, never padded to the size it declares. A CSV is streamed like a text
file, in this process, by the standard library's reader (linear, in C); its delimiter is
found in one pass over its start, not by ``csv.Sniffer``.
"""

from __future__ import annotations

import csv
import re
import zipfile
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from agent_search.kb._ingest._document import Block, Document, Limits, ParseLimit, TextTooLarge

MAX_ZIP_ENTRIES = 10_000
CSV_SNIFF_CHARS = 1 << 16
CSV_SNIFF_LINES = 50
CSV_DELIMITERS = ",;\t|"
_HEADING_STYLE = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)
_NUMBER = re.compile(r"^[\d\s.,:%/+-]+$")


def check_zip(path: Path, limits: Limits) -> None:
    """Refuse an office file whose parts would decompress to more than the cap."""
    with zipfile.ZipFile(path) as archive:
        entries = archive.infolist()
    if len(entries) > MAX_ZIP_ENTRIES:
        raise ParseLimit(f"{len(entries):,} parts in the file, over the cap of "
                         f"{MAX_ZIP_ENTRIES:,}")
    total = sum(e.file_size for e in entries)
    if total > limits.max_decompressed:
        raise ParseLimit(f"decompresses to {total / 1e6:.1f} MB, over the cap of "
                         f"{limits.max_decompressed / 1e6:g} MB (kb.max_decompressed_mb)")


class _Blocks:
    """Blocks as they are read, with the heading path and the character cap."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.blocks: list[Block] = []
        self.chars = 0
        self.path: list[str] = []

    def heading(self, level: int, text: str) -> None:
        del self.path[level - 1:]
        self.path.extend([""] * (level - 1 - len(self.path)))
        self.path.append(text)

    def add(self, text: str, *, extra: tuple[str, ...] = (), page: int | None = None) -> None:
        text = _clean(text)
        if not text:
            return
        self.chars += len(text)
        if self.chars > self.limits.max_chars:
            raise TextTooLarge(f"text over the cap of {self.limits.max_chars:,} characters "
                               "(kb.max_file_mb)")
        headings = tuple(h for h in self.path if h) + extra
        self.blocks.append(Block(text, headings, page))


def _clean(text: Any) -> str:
    return " ".join(str(text).split()) if text is not None else ""


def table_rows(rows: Iterable[Sequence[Any]]) -> Iterator[str]:
    """One text per non-empty row; with a header row (the first, of two or more cells of
    words, not numbers), each later row names its cells by their column."""
    return table_cells(enumerate(row) for row in rows)


def table_cells(rows: Iterable[Iterable[tuple[int, Any]]]) -> Iterator[str]:
    """:func:`table_rows` of rows given as the ``(column, value)`` of the cells they hold,
    in column order: a sheet's rows as its file holds them, so the work is the cells
    present, never the width or height a file declares."""
    header: dict[int, str] | None = None
    first = True
    for raw in rows:
        cells = _dedupe([(column, _clean(value)) for column, value in raw])
        if not cells:
            continue
        if first:
            first = False
            if len(cells) >= 2 and not any(_NUMBER.match(c) for _, c in cells):
                header = dict(cells)
                continue
        if header is None:
            yield " | ".join(c for _, c in cells)
        else:
            yield "; ".join(f"{header[column]}: {c}" if header.get(column) else c
                            for column, c in cells)


def _dedupe(cells: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The non-empty cells; a merged cell, repeated in every column it spans, kept once
    (a cell equal to the one in the column just before it is dropped)."""
    out: list[tuple[int, str]] = []
    previous: tuple[int, str] | None = None
    for column, cell in cells:
        repeated = previous is not None and previous[0] == column - 1 and previous[1] == cell
        if cell and not repeated:
            out.append((column, cell))
        previous = (column, cell)
    return out


def load_docx(path: Path, source: str, doc_id: str, limits: Limits) -> Document:
    import docx
    from docx.table import Table

    check_zip(path, limits)
    document = docx.Document(str(path))
    out = _Blocks(limits)
    first_heading: str | None = None
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            for row in table_rows([c.text for c in r.cells] for r in item.rows):
                out.add(row)
            continue
        text = _clean(item.text)
        style = item.style.name if item.style is not None and item.style.name else ""
        level = 1 if style.lower() == "title" else (
            int(m.group(1)) if (m := _HEADING_STYLE.match(style)) else 0)
        if level and text:
            out.heading(level, text)
            first_heading = first_heading or text
        else:
            out.add(text)
    title = _clean(document.core_properties.title) or first_heading
    return Document(doc_id, source, title, out.blocks)


def load_pptx(path: Path, source: str, doc_id: str, limits: Limits) -> Document:
    from pptx import Presentation

    check_zip(path, limits)
    deck = Presentation(str(path))
    slides = list(deck.slides)
    if len(slides) > limits.max_pages:
        raise ParseLimit(f"{len(slides):,} slides, over the cap of {limits.max_pages:,} "
                         "(kb.max_pages)")
    out = _Blocks(limits)
    first_title: str | None = None
    for number, slide in enumerate(slides, start=1):
        title = _add_slide(out, slide, number)  # read every slide, titled or not
        first_title = first_title or title or None
    return Document(doc_id, source, _clean(deck.core_properties.title) or first_title,
                    out.blocks)


def _add_slide(out: _Blocks, slide: Any, number: int) -> str:
    """One slide under its title (or "Slide N"): its shapes but the title, then its
    notes; returns the title ("" when it has none)."""
    title_shape = slide.shapes.title
    title = _clean(title_shape.text_frame.text) if title_shape is not None else ""
    out.heading(1, title or f"Slide {number}")
    skip = title_shape.shape_id if title_shape is not None else None
    for shape in _shapes(slide.shapes):
        if shape.shape_id != skip:
            _add_shape(out, shape, number)
    if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
        out.add(slide.notes_slide.notes_text_frame.text, extra=("Notes",), page=number)
    return title


def _add_shape(out: _Blocks, shape: Any, number: int) -> None:
    """A shape's table rows or text paragraphs (other shapes have no text)."""
    if getattr(shape, "has_table", False) and shape.has_table:
        rows = ([c.text for c in r.cells] for r in shape.table.rows)
        for row in table_rows(rows):
            out.add(row, page=number)
    elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        for paragraph in shape.text_frame.paragraphs:
            out.add(paragraph.text, page=number)


def _shapes(shapes: Iterable[Any]) -> Iterator[Any]:
    """Shapes in reading order, the shapes of a group in place of the group."""
    for shape in shapes:
        if getattr(shape, "shape_type", None) == 6:  # MSO_SHAPE_TYPE.GROUP
            yield from _shapes(shape.shapes)
        else:
            yield shape


def load_xlsx(path: Path, source: str, doc_id: str, limits: Limits) -> Document:
    from openpyxl import load_workbook

    check_zip(path, limits)
    book = load_workbook(str(path), read_only=True, data_only=True)
    out = _Blocks(limits)
    try:
        for sheet in book.worksheets:
            out.heading(1, _clean(sheet.title) or "Sheet")
            for row in table_cells(_sheet_cells(book, sheet)):
                out.add(row)
        title = _clean(book.properties.title) or None
    finally:
        book.close()
    return Document(doc_id, source, title, out.blocks)


def _sheet_cells(book: Any, sheet: Any) -> Iterator[list[tuple[int, Any]]]:
    """The rows a sheet's XML holds, each as its cells' ``(column, value)``. Not
    ``iter_rows``: openpyxl's read-only sheet pads every row to the width the file
    *declares* (``<dimension ref="A1:XFD1048576"/>``: 16,384 cells) and yields an empty
    row for every row number skipped, so a 5 KB file made it build billions of cells
    (issue 32 item 2). Its own row parser (the one ``iter_rows`` reads) gives only the
    cells present, with the same values (shared strings, cached formula results,
    dates)."""
    from openpyxl.worksheet._reader import WorkSheetParser

    with sheet._get_source() as src:
        parser = WorkSheetParser(src, sheet._shared_strings, data_only=True,
                                 epoch=book.epoch, date_formats=book._date_formats,
                                 timedelta_formats=book._timedelta_formats)
        for _, cells in parser.parse():
            yield sorted((int(c["column"]), c["value"]) for c in cells
                         if c["value"] is not None)


def csv_blocks(path: Path, warnings: list[str]) -> Iterator[Block]:
    """The rows of a UTF-8 CSV file as blocks, streamed; the delimiter is read from its
    start (:func:`csv_delimiter`). A malformed row ends the file with a warning."""
    with path.open(encoding="utf-8-sig", newline="") as fh:
        delimiter = csv_delimiter(fh.read(CSV_SNIFF_CHARS))
    with path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh, csv.excel, delimiter=delimiter)
        try:
            for row in table_rows(reader):
                yield Block(row)
        except csv.Error as exc:
            warnings.append(f"CSV read stopped at line {reader.line_num}: {exc}")


def csv_delimiter(sample: str) -> str:
    """The delimiter of a CSV file from a sample of its start: of ``, ; tab |``, the one
    that occurs (outside double quotes) the same number of times on the most of the
    sample's lines, more often breaking a tie; ``,`` when none occurs.

    One pass over the sample: ``csv.Sniffer`` is quadratic in runs of ``,"`` (a 64 KB
    file took ~80 s, in the server's own process; issue 32 item 2)."""
    lines: list[Counter[str]] = [Counter()]
    quoted = False
    for char in sample[:CSV_SNIFF_CHARS]:
        if char == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif char == "\n":
            if len(lines) >= CSV_SNIFF_LINES:
                break
            lines.append(Counter())
        elif char in CSV_DELIMITERS:
            lines[-1][char] += 1
    best, best_score = ",", (0, 0)
    for delimiter in CSV_DELIMITERS:
        counts = Counter(line[delimiter] for line in lines if line[delimiter])
        if not counts:
            continue
        times, lines_with = max(counts.items(), key=lambda kv: (kv[1], kv[0]))
        if (lines_with, times) > best_score:
            best, best_score = delimiter, (lines_with, times)
    return best
