"""Ingest of hostile files is bounded (issue 21 item 3), and an access record that is
neither public nor owned cannot take over the public document's points (issue 21, found
by reading).

The hostile PDF is built here: a few KB whose pages all point at one compressed content
stream of empty text operators, so every page decompresses and parses megabytes while
no text comes out (the per-file size cap and the text cap never trigger). Before the
limits, such a file parsed for ~1.7 s per page per decompressed MB in-process.
"""

from __future__ import annotations

import re
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_search import SearchConfig
from agent_search.kb import Access, KBSettings, Skipped, ingest_paths
from agent_search.kb._ingest import Limits, ParseSandbox, parse_seconds, run_parse_seconds
from agent_search.kb._ingest._office import csv_blocks, csv_delimiter
from agent_search.kb._store import get_store, scroll_all
from bench.documents import shared_stream_pdf

from ..support.kb import linked_home, prepared_model_home

MB = 1_000_000


@pytest.fixture(scope="module")
def model_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return prepared_model_home(tmp_path_factory, "kb-parse-model")


@pytest.fixture
def home(tmp_path: Path, model_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield from linked_home(tmp_path, model_home, monkeypatch)


def _folder(tmp_path: Path, bomb: bytes) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a-bomb.pdf").write_bytes(bomb)
    (folder / "b-good.html").write_text(
        "<html><head><title>Bees</title></head><body><article><h1>Bees</h1>"
        "<p>Honey bees make honey from the nectar of flowers.</p></article></body></html>")
    (folder / "c-notes.txt").write_text("Wasps do not make honey.\n")
    return folder


def _only_skip(report_skipped: list[object]) -> str:
    (skipped,) = report_skipped
    assert getattr(skipped, "source", "").endswith("a-bomb.pdf")
    return str(getattr(skipped, "reason", ""))


def test_the_hostile_pdf_is_small_and_inflates() -> None:
    bomb = shared_stream_pdf(10, b"BT ET\n" * 400_000)
    assert len(bomb) < 6_000
    assert len(zlib.decompress(bomb.split(b"stream\n", 1)[1].split(b"\nendstream")[0])) \
        == 2_400_000


@pytest.mark.anyio
async def test_pages_sharing_one_big_stream_stop_at_the_decompressed_cap(
        home: Path, tmp_path: Path) -> None:
    folder = _folder(tmp_path, shared_stream_pdf(10, b"q Q\n" * 600_000))  # 10 × 2.4 MB
    config = SearchConfig(home=home).merged({"kb": {"max_decompressed_mb": 5}})
    report = await ingest_paths(config, [folder], "bombs")
    reason = _only_skip(list(report.skipped))
    assert "kb.max_decompressed_mb" in reason and "by page 3" in reason
    assert report.documents == 2  # the files after it were read


@pytest.mark.anyio
async def test_a_pdf_that_parses_too_long_is_cut_at_the_deadline(
        home: Path, tmp_path: Path) -> None:
    # pages sharing one stream are parsed once, so the one stream itself must take long:
    # ~5 s of parsing (4.4 MB of empty text operators) against a deadline of 1 s
    folder = _folder(tmp_path, shared_stream_pdf(10, b"BT /F1 12 Tf () Tj ET\n" * 200_000))
    config = SearchConfig(home=home).merged({"kb": {"max_parse_seconds": 1}})
    report = await ingest_paths(config, [folder], "slow")
    assert "kb.max_parse_seconds" in _only_skip(list(report.skipped))
    assert report.documents == 2  # a fresh parser process read the HTML after it


@pytest.mark.anyio
async def test_a_pdf_with_too_many_pages_is_skipped(home: Path, tmp_path: Path) -> None:
    folder = _folder(tmp_path, shared_stream_pdf(40, b"BT ET\n"))
    config = SearchConfig(home=home).merged({"kb": {"max_pages": 25}})
    report = await ingest_paths(config, [folder], "pages")
    assert "40 pages, over the cap of 25 (kb.max_pages)" in _only_skip(list(report.skipped))
    assert report.documents == 2


@pytest.mark.anyio
async def test_a_private_ownerless_ingest_cannot_hide_the_public_document(
        home: Path, tmp_path: Path) -> None:
    note = tmp_path / "bees.txt"
    note.write_text("Honey bees make honey from the nectar of flowers.\n")
    config = SearchConfig(home=home)
    await ingest_paths(config, [note], "shared")
    with pytest.raises(ValueError, match="needs an owner or a team"):
        await ingest_paths(config, [note], "shared", access=Access.of(public=False))
    store = get_store(KBSettings.from_config(config), home)
    shares = [r.payload["acl_share"] for r in scroll_all(store, "shared")]
    assert shares == ["public"]


# -- issue 32 item 2: work bounded by what the input holds -------------------------------


def _declared_huge_xlsx(path: Path) -> Path:
    """A small workbook whose sheet declares the largest size a sheet may have."""
    import zipfile

    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Fruit"
    for row in (("Fruit", "Price"), ("Apple", 1.2), ("Pear", 0.9)):
        sheet.append(row)
    for number in range(200):
        sheet.append((f"Plum {number}", number))
    sheet.cell(row=1_048_576, column=1, value="Quince")  # the last row a sheet may have
    plain = path.with_suffix(".plain.xlsx")
    book.save(plain)
    with zipfile.ZipFile(plain) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for item in src.infolist():
            data = src.read(item)
            if item.filename.startswith("xl/worksheets/"):
                data = re.sub(rb'<dimension ref="[^"]*"/>',
                              b'<dimension ref="A1:XFD1048576"/>', data)
                assert b"XFD1048576" in data
            out.writestr(item, data)
    plain.unlink()
    return path


@pytest.mark.anyio
async def test_a_sheet_declaring_a_million_rows_reads_only_its_cells(
        home: Path, tmp_path: Path) -> None:
    # before: every row padded to the 16,384 columns declared, and each of the million row
    # numbers skipped yielded as an empty row of them, until the deadline
    sheet = _declared_huge_xlsx(tmp_path / "fruit.xlsx")
    assert sheet.stat().st_size < 8_000
    started = time.monotonic()
    report = await ingest_paths(SearchConfig(home=home), [sheet], "sheets")
    assert report.skipped == [] and report.documents == 1, report.skipped
    assert time.monotonic() - started < 55  # the deadline was 60 s
    store = get_store(KBSettings.from_config(SearchConfig(home=home)), home)
    text = " ".join(str(r.payload["content"]) for r in scroll_all(store, "sheets"))
    assert "Fruit: Apple; Price: 1.2" in text and "Fruit: Pear; Price: 0.9" in text
    assert "Fruit: Plum 199; Price: 199" in text and "Fruit: Quince" in text


@pytest.mark.anyio
async def test_a_few_kb_cannot_buy_a_minute_of_parsing(home: Path, tmp_path: Path) -> None:
    # ten pages sharing one 1 MB stream of empty text: parsed once (or cut by the budget of
    # a 5 KB file), where each page parsed it again until max_parse_seconds (60 s)
    folder = _folder(tmp_path, shared_stream_pdf(10, b"BT /F1 12 Tf () Tj ET\n" * 45_000))
    started = time.monotonic()
    report = await ingest_paths(SearchConfig(home=home), [folder], "budget")
    elapsed = time.monotonic() - started
    for skipped in report.skipped:  # parsed once it holds no text; or cut at its budget
        assert skipped.reason == "no text" or "byte file" in skipped.reason, skipped
    assert report.documents >= 2 and elapsed < 55, (elapsed, report.skipped)


def test_a_files_parse_deadline_follows_its_size() -> None:
    assert parse_seconds(6_000, 60) < 3.5  # a few KB: a few seconds
    assert parse_seconds(20_000_000, 60) == 60  # a large file: kb.max_parse_seconds
    assert parse_seconds(1_000_000, 600) == pytest.approx(33)


def test_the_csv_delimiter_is_found_in_linear_time(tmp_path: Path) -> None:
    # csv.Sniffer took 6-11 s on these 24 KB (quadratic in runs of ,"), in the server process
    hostile = tmp_path / "runs.csv"
    hostile.write_text(',"' * 12_000)
    started = time.monotonic()
    warnings: list[str] = []
    list(csv_blocks(hostile, warnings))
    assert csv_delimiter(',"' * 32_000) == ","
    assert time.monotonic() - started < 2.0
    assert csv_delimiter("a;b;c\n1;2;3\n") == ";"
    assert csv_delimiter("a\tb\n1\t2\n") == "\t"
    assert csv_delimiter('name,note\nx,"a;b;c;d"\n') == ","  # quoted ; are not delimiters


def test_a_runs_parse_time_follows_from_its_files(tmp_path: Path) -> None:
    # one JSON call carries 100 documents: 100 small HTML files get about a minute in all,
    # where each had max_parse_seconds (100 minutes)
    assert run_parse_seconds([10_000] * 100, 60) < 90
    assert run_parse_seconds([20_000_000], 60) == pytest.approx(63)
    page = tmp_path / "a.html"
    page.write_text("<html><body><p>Bees</p></body></html>")
    with ParseSandbox(Limits(), seconds=60, memory_mb=1024, run_seconds=0.2) as sandbox:
        (skipped,) = list(sandbox.load(page, "a.html"))
    assert isinstance(skipped, Skipped) and "parse time" in skipped.reason
