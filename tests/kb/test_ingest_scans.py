"""Scans in the kb: images and image-only PDF pages are read by OCR, in reading order, and
their chunks say they came from OCR and from which page; without the OCR extra a scan is
skipped with a reason that names it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from agent_search import Context, Request, SearchConfig
from agent_search.kb import create_handler, ingest_paths
from agent_search.kb._ingest import Limits, _ocr, load_file
from agent_search.kb._ingest._layout import Box, reading_order
from agent_search.kb._ingest._ocr import needs_ocr

from ..support.scans import (
    columns_page,
    image_bytes,
    pdf_form_image,
    pdf_of_images,
    pdf_outlines,
    pdf_text_page,
    pdf_tiles,
    text_page,
)

REFUNDS = [["Refunds are paid back within fourteen", "business days of the request."],
           ["The billing office keeps a signed copy", "of every contract in its archive."]]
BIKES = [["Lubricate the bicycle chain every", "three hundred kilometres."]]


def _box(left: float, top: float, right: float, bottom: float) -> Box:
    return Box(left, top, right, bottom)


def test_boxes_are_read_as_lines_then_blocks() -> None:
    found = [  # as an engine may return them: out of order, a line in two boxes
        (_box(400, 10, 700, 40), "over the lazy dog"),
        (_box(10, 12, 380, 42), "The quick brown fox jumps"),
        (_box(10, 50, 300, 80), "and runs a-"),
        (_box(10, 90, 300, 120), "way quickly."),
        (_box(10, 200, 300, 230), "A new paragraph."),
        (_box(10, 240, 300, 270), "中文第一行"),
        (_box(10, 280, 300, 310), "第二行。"),
    ]
    assert reading_order(found) == [
        "The quick brown fox jumps over the lazy dog and runs away quickly.",
        "A new paragraph. 中文第一行第二行。",
    ]
    assert reading_order([]) == []


def test_columns_are_read_one_after_the_other() -> None:
    # a title across the page, then two columns whose lines share one baseline grid
    # (every row is a band with a gutter at x 500-540), the right column's last
    # paragraph a line short; then a full-width paragraph and a table of narrow cells
    left = ["Tidal power stations turn the", "rise and fall of the sea into", "electricity.",
            None, "Their turbines sit in a", "barrage across an estuary."]
    right = ["Bees find flowers by their", "colour and scent, and tell", "the hive where.",
             None, "A strong colony keeps its", None]
    found = [(_box(10, 10, 900, 40), "Notes on energy and insects")]
    for row, (one, two) in enumerate(zip(left, right, strict=True)):
        top = 70 + 40 * row
        found += [(_box(10, top, 480, top + 30), one)] if one else []
        found += [(_box(540, top, 1000, top + 30), two)] if two else []
    found += [(_box(10, 400, 990, 430), "A closing note runs across the whole page.")]
    for row, cells in enumerate([("Name", "Price", "Stock"), ("Pump", "12", "4")]):
        found += [(_box(10 + 200 * i, 480 + 40 * row, 90 + 200 * i, 510 + 40 * row), cell)
                  for i, cell in enumerate(cells)]
    assert reading_order(found[::-1]) == [
        "Notes on energy and insects",
        "Tidal power stations turn the rise and fall of the sea into electricity.",
        "Their turbines sit in a barrage across an estuary.",
        "Bees find flowers by their colour and scent, and tell the hive where.",
        "A strong colony keeps its",
        "A closing note runs across the whole page.",
        "Name Price Stock Pump 12 4",
    ]


@pytest.mark.parametrize(("text", "scan"), [
    ("", True),
    ("  12 \n", True),  # a page number on a scanned page
    ("\ue000\ue001\ue002\ue003" * 10, True),  # a font without a Unicode map
    ("\ufffd\x01\x02 abc" * 10, True),
    ("Refunds are paid back within fourteen business days.", False),
    ("退款在申请后十四个工作日内办理完毕。", False),
])
def test_a_page_is_a_scan_when_its_text_layer_is_empty_or_garbage(text: str,
                                                                    scan: bool) -> None:
    assert needs_ocr(text) is scan


def test_without_the_extra_a_scan_is_skipped_naming_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_ocr, "available", lambda: False)
    image = tmp_path / "scan.png"
    image.write_bytes(image_bytes(text_page(BIKES), "PNG"))
    pdf = tmp_path / "scan.pdf"
    pdf.write_bytes(pdf_of_images([text_page(BIKES)]))
    for path in (image, pdf):
        (skipped,) = load_file(path)
        assert "pip install 'agent-searchkit[ocr]'" in getattr(skipped, "reason", ""), skipped


needs_extra = pytest.mark.skipif(not _ocr.available(), reason=(
    "the OCR extra is not installed (pip install 'agent-searchkit[ocr]'; make test does)"))


@needs_extra
def test_image_paragraphs_are_blocks_of_page_one(tmp_path: Path) -> None:
    path = tmp_path / "refunds.jpg"
    path.write_bytes(image_bytes(text_page(REFUNDS).convert("RGB"), "JPEG", quality=80))
    (doc,) = load_file(path)
    texts = [b.text for b in getattr(doc, "blocks", [])]
    assert len(texts) == 2, texts
    assert "fourteen business days" in texts[0] and "signed copy" in texts[1]
    assert [b.page for b in getattr(doc, "blocks", [])] == [1, 1]
    assert getattr(doc, "ocr_pages", None) == [1]


@needs_extra
def test_a_two_column_page_is_read_column_by_column(tmp_path: Path) -> None:
    left = [["Tidal power stations turn the rise", "and fall of the sea into electricity",
             "twice a day, every day."],
            ["Their turbines sit in a barrage", "across the mouth of an estuary."]]
    right = [["Bees find flowers by their colour", "and scent, and tell the hive where",
              "they are with a waggle dance."],
             ["A strong colony keeps its queen", "warm through the whole winter."]]
    path = tmp_path / "journal.png"
    path.write_bytes(image_bytes(columns_page("Notes on energy and insects", [left, right]),
                                 "PNG"))
    (doc,) = load_file(path)
    texts = [b.text for b in getattr(doc, "blocks", [])]
    assert texts == ["Notes on energy and insects"] + [" ".join(p) for p in left + right], texts


@needs_extra
@pytest.mark.parametrize("pdfium", [True, False], ids=["rendered", "images-fallback"])
def test_a_scan_wrapped_in_a_form_xobject_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pdfium: bool) -> None:
    # rendered by PDFium, or (without pypdfium2) its images read through the form
    real = _ocr.renders
    monkeypatch.setattr(_ocr, "renders", lambda: pdfium and real())
    path = tmp_path / "wrapped.pdf"
    path.write_bytes(pdf_form_image(text_page(BIKES)))
    (doc,) = load_file(path)
    assert "Lubricate the bicycle chain every three hundred kilometres." in [
        b.text for b in getattr(doc, "blocks", [])]
    assert getattr(doc, "ocr_pages", None) == [1]


@needs_extra
def test_one_files_pixel_cap_does_not_hold_for_the_next(tmp_path: Path) -> None:
    # Pillow's pixel check is a global: a small cap set for one file must not refuse
    # the pages of the next file read in the same process
    big = tmp_path / "big.png"
    big.write_bytes(image_bytes(text_page(REFUNDS, width=2000), "PNG"))
    (skipped,) = load_file(big, limits=Limits(max_pixels=100_000))
    assert "kb.max_image_megapixels" in getattr(skipped, "reason", ""), skipped
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(pdf_of_images([text_page(BIKES)]))
    (doc,) = load_file(scan)
    assert getattr(doc, "ocr_pages", None) == [1], doc


@needs_extra
def test_tiff_frames_are_pages_within_the_page_cap(tmp_path: Path) -> None:
    path = tmp_path / "pages.tiff"
    first, second = text_page(REFUNDS), text_page(BIKES)
    path.write_bytes(image_bytes(first, "TIFF", save_all=True, append_images=[second]))
    (doc,) = load_file(path, limits=Limits(max_ocr_pages=1))
    assert getattr(doc, "ocr_pages", None) == [1]
    assert any("kb.max_ocr_pages" in w for w in getattr(doc, "warnings", []))
    assert "Lubricate" not in " ".join(b.text for b in getattr(doc, "blocks", []))


def test_pages_read_at_once_are_every_core_locally_and_one_for_an_upload() -> None:
    from agent_search.embedding._local import default_workers

    assert _ocr.ocr_workers(None, uploaded=False, memory_mb=100_000) == default_workers()
    assert _ocr.ocr_workers(None, uploaded=True) == 1
    assert _ocr.ocr_workers(3, uploaded=True) == 3  # kb.ocr_workers, when set, holds
    # as many as fit in the parser's address space (kb.max_parse_memory_mb)
    assert _ocr.ocr_workers(None, uploaded=False, memory_mb=512) == 1
    assert _ocr.ocr_workers(None, uploaded=False, memory_mb=2_048) == min(default_workers(), 2)


def test_pages_read_at_once_fit_the_parsers_address_space(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # on a machine of eight cores: each page read at once takes a page thread and a
    # thread of the lines pool; three at once measured 2.01 GB, too near the default
    # cap of 2,048 MB, so two fit there
    import agent_search.embedding

    monkeypatch.setattr(agent_search.embedding, "default_workers", lambda: 8)
    assert _ocr.ocr_workers(None, uploaded=False, memory_mb=2_048) == 2
    assert _ocr.ocr_workers(None, uploaded=False, memory_mb=4_096) == 8
    assert _ocr.ocr_workers(None, uploaded=False, memory_mb=1_024) == 1


@needs_extra
def test_scans_read_two_at_a_time_keep_the_page_order(tmp_path: Path) -> None:
    # pages 1, 3 and 4 are scans, read two at once; page 2 has a text layer: each page's
    # text stays where the page is
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for part in (pdf_of_images([text_page(REFUNDS)]),
                 pdf_text_page("The second page has a text layer of its own."),
                 pdf_of_images([text_page(BIKES), text_page(REFUNDS[1:])])):
        writer.append(PdfReader(io.BytesIO(part)))
    path = tmp_path / "mixed.pdf"
    with path.open("wb") as out:
        writer.write(out)
    read = {}
    for workers in (1, 2):
        (doc,) = load_file(path, limits=Limits(ocr_workers=workers))
        read[workers] = [(b.page, b.text) for b in getattr(doc, "blocks", [])]
        assert getattr(doc, "ocr_pages", None) == [1, 3, 4]
    assert read[2] == read[1]
    assert [page for page, _ in read[2]] == [1, 1, 2, 3, 4], read[2]
    assert "fourteen business days" in read[2][0][1] and "bicycle chain" in read[2][3][1]


@needs_extra
def test_pages_read_at_once_share_their_lines_between_the_threads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # each page of a file read two at once hands its lines to the lines pool in several
    # groups, so a core whose page is done reads the other page's lines instead of
    # waiting idle for it (the file's last page no longer runs on one core)
    import threading

    path = tmp_path / "two.pdf"
    path.write_bytes(pdf_of_images([text_page(REFUNDS + BIKES), text_page(REFUNDS)]))
    (alone,) = load_file(path, limits=Limits(ocr_workers=1))
    recognizer = _ocr._ocr_engine().recognize_txt
    calls: list[tuple[str, int]] = []
    read = recognizer.recognize

    def spy(crops: list[object]) -> object:
        calls.append((threading.current_thread().name, len(crops)))
        return read(crops)

    monkeypatch.setattr(recognizer, "recognize", spy)
    (shared,) = load_file(path, limits=Limits(ocr_workers=2))
    texts = [[(b.page, b.text) for b in getattr(doc, "blocks", [])] for doc in (alone, shared)]
    assert texts[1] == texts[0] and [p for p, _ in texts[1]] == [1, 1, 1, 2, 2], texts
    assert calls and all(name.startswith("ocr-lines") for name, _ in calls), calls
    # more groups than pages, each of a few lines (at most 2 × LINE_GROUPS a page)
    assert len(calls) > 2 and max(n for _, n in calls) < sum(n for _, n in calls), calls


@needs_extra
def test_a_photos_lines_shared_by_two_threads_read_the_same(tmp_path: Path) -> None:
    path = tmp_path / "refunds.png"
    path.write_bytes(image_bytes(text_page(REFUNDS + BIKES), "PNG"))
    texts = {workers: [b.text for b in getattr(doc, "blocks", [])]
             for workers in (1, 2) for doc in load_file(path, limits=Limits(ocr_workers=workers))}
    assert texts[2] == texts[1] and len(texts[2]) == 3, texts


@needs_extra
@pytest.mark.anyio
async def test_a_scanned_pdf_and_a_photo_are_found_by_a_question(
        config: SearchConfig, tmp_path: Path) -> None:
    folder = tmp_path / "scans"
    folder.mkdir()
    (folder / "contract.pdf").write_bytes(
        pdf_of_images([text_page([["Cover page"]]), text_page(REFUNDS)]))
    (folder / "bike.webp").write_bytes(image_bytes(text_page(BIKES), "WEBP", quality=90))
    (folder / "notes.md").write_text("# Notes\n\nPlants need water and light.\n")
    report = await ingest_paths(config, [folder], "scans")
    assert report.skipped == [] and report.documents == 3, report.to_json()
    handler = create_handler(config)
    for question, source, page in [("how long until I get my money back", "contract.pdf", 2),
                                   ("how often should I oil my bike chain", "bike.webp", 1)]:
        result = await handler.search(Context(config=config), Request(
            type="kb", query=question, collections=["scans"], limit=3))
        top = result.items[0]
        assert str(top.metadata["source"]).endswith(source), result.items
        assert top.metadata["page"] == page and top.metadata["extraction"] == "ocr"
    notes = await handler.search(Context(config=config), Request(
        type="kb", query="what do plants need", collections=["scans"], limit=1))
    assert "extraction" not in notes.items[0].metadata


TILE_CUT = 97
"""The row of :data:`REFUNDS`' page that cuts its second line ("business days of the
request.") through the middle of its letters."""


@needs_extra
@pytest.mark.anyio
async def test_a_tiled_scan_and_outlined_text_are_read_and_found(
        config: SearchConfig, tmp_path: Path) -> None:
    # a page drawn as two image tiles that split a line, and a page whose text is drawn
    # as vector paths: PDFium renders each whole, so the line is read across the cut
    # (read tile by tile it came out as "busiress days or tre Tequest.") and the
    # outlines are read at all (no image, no text layer: they read as nothing)
    folder = tmp_path / "scans"
    folder.mkdir()
    (folder / "tiles.pdf").write_bytes(pdf_tiles(text_page(REFUNDS), TILE_CUT))
    (folder / "outlines.pdf").write_bytes(pdf_outlines(text_page(BIKES)))
    (tiles,) = load_file(folder / "tiles.pdf")
    assert next(b.text for b in getattr(tiles, "blocks", [])) == (
        "Refunds are paid back within fourteen business days of the request.")
    report = await ingest_paths(config, [folder], "tiles")
    assert report.skipped == [] and report.documents == 2, report.to_json()
    handler = create_handler(config)
    for question, source, text in [
            ("how many business days until a refund is paid", "tiles.pdf",
             "fourteen business days of the request"),
            ("how often should I oil my bike chain", "outlines.pdf",
             "three hundred kilometres")]:
        result = await handler.search(Context(config=config), Request(
            type="kb", query=question, collections=["tiles"], limit=3))
        top = result.items[0]
        assert str(top.metadata["source"]).endswith(source), result.items
        assert text in top.content and top.metadata["extraction"] == "ocr", top


@needs_extra
@pytest.mark.parametrize("mode", ["RGB", "L", "1"])
def test_a_page_is_given_to_the_engine_as_contiguous_bgr_within_the_side_cap(mode: str) -> None:
    # OpenCV copies a strided array whole each time it is handed one (every line's crop
    # would copy the page again): the page must arrive contiguous, in BGR order
    from PIL import Image, ImageDraw

    page = Image.new("RGB", (_ocr.MAX_SIDE * 2, 400), "white")
    ImageDraw.Draw(page).rectangle((0, 0, 399, 399), fill=(255, 0, 0))
    image = page.convert(mode)
    pixels = _ocr.page_pixels(image)
    assert pixels.flags["C_CONTIGUOUS"]
    assert pixels.shape == (200, _ocr.MAX_SIDE, 3)
    assert image.size == (_ocr.MAX_SIDE * 2, 400)  # the caller's image is not scaled
    white = [255, 255, 255]
    assert pixels[100, 1500].tolist() == white
    if mode == "RGB":
        assert pixels[100, 100].tolist() == [0, 0, 255]  # red, in OpenCV's order
    else:
        blue, green, red = pixels[100, 100].tolist()
        assert blue == green == red < 255  # grey: three equal channels


def test_thread_pools_are_one_per_kind_and_size() -> None:
    pages = _ocr._pool("pages", 2)
    assert _ocr._pool("pages", 2) is pages  # kept for the parse child's life
    others = [_ocr._pool("lines", 2), _ocr._pool("pages", 3)]
    assert all(pool is not pages for pool in others) and others[0] is not others[1]
    assert ("pages", 2) in _ocr._pools


def test_the_parser_child_started_early_serves_the_first_file(tmp_path: Path) -> None:
    """``spawn`` starts the child without waiting for its imports; the first file waits
    for it, and no second child is started."""
    from agent_search.kb._ingest import ParseSandbox

    page = tmp_path / "page.pdf"
    page.write_bytes(pdf_text_page("Plants need water and light."))
    with ParseSandbox(Limits(), seconds=60, memory_mb=1024) as sandbox:
        sandbox.spawn()
        child = sandbox._proc
        assert child is not None and child.poll() is None
        sandbox.spawn()  # already running: kept
        assert sandbox._proc is child
        docs = list(sandbox.load(page, "page.pdf"))
        assert sandbox._proc is child
    assert [type(d).__name__ for d in docs] == ["Document"]
    text = " ".join(b.text for b in docs[0].blocks)  # type: ignore[union-attr]
    assert "Plants need water" in text
    assert child.poll() is not None  # closed with the sandbox
