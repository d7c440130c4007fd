"""Office files and CSV through the loaders and the ingest (issue 24 item 4): headings and
tables kept as structure, bounded like the PDF path. The files are built here with the
libraries that read them."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from agent_search import SearchConfig
from agent_search.kb import Skipped, ingest_paths
from agent_search.kb._ingest import Document, Limits, approx_tokens, load_file
from agent_search.kb._ingest._chunking import chunk_document
from bench.documents import make_docx, make_pptx, make_xlsx


def _one(path: Path, limits: Limits | None = None) -> Document:
    (doc,) = list(load_file(path, path.name, limits=limits))
    assert isinstance(doc, Document), doc
    return doc


def _rows(doc: Document) -> list[tuple[tuple[str, ...], str, int | None]]:
    return [(b.headings, b.text, b.page) for b in doc.blocks]


def test_docx_headings_and_table_rows(tmp_path: Path) -> None:
    doc = _one(make_docx(tmp_path / "bees.docx"))
    assert doc.title == "Honey bees"
    assert _rows(doc) == [
        (("Honey bees",), "Bees live in colonies.", None),
        (("Castes",), "Caste: Queen; Work: lays eggs", None),
        (("Castes",), "Caste: Worker; Work: forages", None),
        (("Castes", "Waggle dance"), "The angle of the dance gives the direction.", None),
    ]
    chunks = chunk_document(doc, approx_tokens, max_tokens=64, overlap=0)
    assert [c.headings for c in chunks] == [("Honey bees",), ("Castes",),
                                            ("Castes", "Waggle dance")]


def test_pptx_slides_are_pages_under_their_titles(tmp_path: Path) -> None:
    doc = _one(make_pptx(tmp_path / "plan.pptx"))
    assert doc.title == "Quarterly plan"
    assert _rows(doc) == [
        (("Quarterly plan",), "Ship the search module.", 1),
        (("Quarterly plan", "Notes"), "Mention the benchmark.", 1),
        (("Budget",), "Item: Servers; Cost: 1200 EUR", 2),
    ]


def test_xlsx_sheets_are_sections_and_rows_name_their_columns(tmp_path: Path) -> None:
    doc = _one(make_xlsx(tmp_path / "prices.xlsx"))
    assert doc.title == "Prices"  # no document title: the first heading
    assert _rows(doc) == [
        (("Prices",), "Fruit: Apple; Price: 1.2; Unit: kg", None),
        (("Prices",), "Fruit: Pear; Price: 2; Unit: kg", None),
        (("Notes",), "Prices are from the market of 3 June.", None),
    ]


def test_csv_dialect_is_sniffed_and_rows_are_streamed(tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    path.write_text("name;born;known for\nAda Lovelace;1815;the first program\n"
                    "Alan Turing;1912;\n", encoding="utf-8")
    doc = _one(path)
    assert doc.title == "people"
    assert [b.text for b in doc.blocks] == [
        "name: Ada Lovelace; born: 1815; known for: the first program",
        "name: Alan Turing; born: 1912"]
    numbers = tmp_path / "numbers.csv"
    numbers.write_text("1,2\n3,4\n", encoding="utf-8")  # no header: numbers
    assert [b.text for b in _one(numbers).blocks] == ["1 | 2", "3 | 4"]


def test_an_office_file_that_inflates_past_the_cap_is_skipped(tmp_path: Path) -> None:
    path = make_docx(tmp_path / "bomb.docx")
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/media/zeros.bin", b"\0" * 5_000_000)
    assert path.stat().st_size < 100_000
    (skipped,) = list(load_file(path, "bomb.docx", limits=Limits(max_decompressed=2_000_000)))
    assert isinstance(skipped, Skipped)
    assert "over the cap of 2 MB (kb.max_decompressed_mb)" in skipped.reason
    deck = make_pptx(tmp_path / "plan.pptx")
    (few,) = list(load_file(deck, "plan.pptx", limits=Limits(max_pages=1)))
    assert isinstance(few, Skipped) and "2 slides, over the cap of 1" in few.reason
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(b"not a zip")
    (bad,) = list(load_file(broken, "broken.xlsx"))
    assert isinstance(bad, Skipped) and bad.reason.startswith("cannot parse")


@pytest.mark.anyio
async def test_office_files_ingest_through_the_parser_process(
        config: SearchConfig, tmp_path: Path) -> None:
    folder = tmp_path / "office"
    folder.mkdir()
    make_docx(folder / "bees.docx")
    make_pptx(folder / "plan.pptx")
    make_xlsx(folder / "prices.xlsx")
    (folder / "people.csv").write_text("name,born\nAda,1815\n", encoding="utf-8")
    report = await ingest_paths(config, [folder], "office")
    assert report.skipped == [] and report.documents == 4
    assert report.chunks >= 6
