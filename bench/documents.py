"""Files the tests and the benchmarks build: office documents with known headings, tables,
slides and sheets (what the kb's readers must find in them), and the hostile PDF of issue 21
(pages sharing one compressed content stream: megabytes to parse, no text). Used by the kb
and security tests and by :mod:`bench.bench_parse`; here rather than in ``tests/support``
so that the benchmarks import nothing from the tests."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from pathlib import Path

import docx
import openpyxl
from pptx import Presentation
from pptx.util import Inches

__all__ = ["make_docx", "make_pptx", "make_xlsx", "shared_stream_pdf"]


def make_docx(path: Path) -> Path:
    d = docx.Document()
    d.add_heading("Honey bees", 0)
    d.add_paragraph("Bees live in colonies.")
    d.add_heading("Castes", 1)
    table = d.add_table(rows=3, cols=2)
    for r, (a, b) in enumerate([("Caste", "Work"), ("Queen", "lays eggs"),
                                ("Worker", "forages")]):
        table.cell(r, 0).text, table.cell(r, 1).text = a, b
    d.add_heading("Waggle dance", 2)
    d.add_paragraph("The angle of the dance gives the direction.")
    d.save(str(path))
    return path


def make_pptx(path: Path) -> Path:
    deck = Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[1])
    first.shapes.title.text = "Quarterly plan"
    first.placeholders[1].text_frame.text = "Ship the search module."
    first.notes_slide.notes_text_frame.text = "Mention the benchmark."
    second = deck.slides.add_slide(deck.slide_layouts[5])
    second.shapes.title.text = "Budget"
    table = second.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(6), Inches(1)).table
    for r, (a, b) in enumerate([("Item", "Cost"), ("Servers", "1200 EUR")]):
        table.cell(r, 0).text, table.cell(r, 1).text = a, b
    deck.save(str(path))
    return path


def make_xlsx(path: Path) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Prices"
    for row in [("Fruit", "Price", "Unit"), ("Apple", 1.2, "kg"), (None, None, None),
                ("Pear", 2, "kg")]:
        sheet.append(row)
    notes = book.create_sheet("Notes")
    notes.append(["Prices are from the market of 3 June."])
    book.save(str(path))
    return path


def shared_stream_pdf(pages: int, content: bytes) -> bytes:
    """A PDF of ``pages`` pages that all use one Flate-compressed content stream."""
    stream = zlib.compress(content, 9)
    kids = " ".join(f"{4 + i} 0 R" for i in range(pages))
    bodies = [b"<< /Type /Catalog /Pages 2 0 R >>",
              f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
              b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream
              + b"\nendstream"]
    bodies += [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R "
               b"/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 "
               b"/BaseFont /Helvetica >> >> >> >>"] * pages
    return pdf_file(bodies)


def pdf_file(objects: Sequence[bytes]) -> bytes:
    """A PDF file of ``objects`` (numbered from 1), with its cross-reference table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    return bytes(out)
