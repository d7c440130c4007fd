"""OCR of scans is bounded like every parser: a decompression bomb (an image whose header
declares 50,000 × 50,000 pixels in about a KB, as a PNG or drawn by a PDF page) is refused
from its header, before a pixel is decoded; the pages read by OCR, the seconds of one
page and of one file have caps; all of it in the parse child.

Before OCR, images were refused as an unsupported type and image-only PDF pages read as
nothing; a reader that decodes first would need 2.5 GB for the bomb.

A scanned PDF page is rendered (PDFium) at a scale computed from the page's size before
anything is drawn: a page of 220,000 points (over 40 gigapixels at 150 dpi) is drawn
within ``kb.max_image_megapixels`` and read; one under a pixel wide at that scale, or
drawing forms that draw forms a hundredfold, is refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_search import SearchConfig
from agent_search.kb import ingest_paths
from agent_search.kb._ingest import Limits, ParseSandbox, _ocr, load_file
from agent_search.kb._ingest._document import ParseLimit

from ..support.kb import linked_home, prepared_model_home
from ..support.scans import (
    image_bytes,
    pdf_form_fanout,
    pdf_image_bomb,
    pdf_outlines,
    png_bomb,
    text_page,
)

needs_extra = pytest.mark.skipif(not _ocr.available(), reason=(
    "the OCR extra is not installed (pip install 'agent-searchkit[ocr]'; make test does)"))


@pytest.fixture(scope="module")
def model_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return prepared_model_home(tmp_path_factory, "kb-ocr-model")


@pytest.fixture
def home(tmp_path: Path, model_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield from linked_home(tmp_path, model_home, monkeypatch)


def test_the_bombs_are_small() -> None:
    assert len(png_bomb()) < 4_000 and len(pdf_image_bomb()) < 4_000
    assert len(pdf_image_bomb(in_form=True)) < 4_000
    assert png_bomb()[16:24] == (50_000).to_bytes(4, "big") * 2  # the IHDR's size


@pytest.mark.anyio
async def test_image_bombs_are_refused_from_their_header_in_the_sandbox(
        home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "bomb.png").write_bytes(png_bomb())
    (folder / "bomb.pdf").write_bytes(pdf_image_bomb())
    (folder / "form-bomb.pdf").write_bytes(pdf_image_bomb(in_form=True))  # the scan in a form
    (folder / "notes.txt").write_text("Wasps do not make honey.\n")
    # a small memory cap: decoding 2.5 GB of pixels would end in "out of memory"
    config = SearchConfig(home=home).merged({"kb": {"max_parse_memory_mb": 1024}})
    report = await ingest_paths(config, [folder], "bombs")
    reasons = {Path(s.source).name: s.reason for s in report.skipped}
    assert set(reasons) == {"bomb.png", "bomb.pdf", "form-bomb.pdf"}, reasons
    for reason in reasons.values():
        assert "kb.max_image_megapixels" in reason and "50,000" in reason, reason
    assert report.documents == 1


def test_a_page_over_the_pixel_cap_is_refused_before_ocr(tmp_path: Path) -> None:
    path = tmp_path / "big.png"
    path.write_bytes(image_bytes(text_page([["Large"]], width=2000), "PNG"))
    (skipped,) = load_file(path, limits=Limits(max_pixels=100_000))
    assert "kb.max_image_megapixels" in getattr(skipped, "reason", ""), skipped


@needs_extra
def test_a_page_past_its_deadline_is_killed_and_each_page_is_reported(
        tmp_path: Path) -> None:
    path = tmp_path / "scan.png"
    path.write_bytes(image_bytes(text_page([["Refunds take fourteen days."]]), "PNG"))
    pages: list[tuple[int, int]] = []
    with ParseSandbox(Limits(), seconds=60, memory_mb=2048, page_seconds=0.001) as sandbox:
        (skipped,) = sandbox.load(path, "scan.png", on_page=lambda *p: pages.append(p))
        assert "OCR of page 1 took over" in getattr(skipped, "reason", ""), skipped
        assert pages == [(1, 1)]
        sandbox.page_seconds = 120  # the next file gets a fresh child and reads
        (doc,) = sandbox.load(path, "scan.png")
    assert "fourteen" in " ".join(b.text for b in getattr(doc, "blocks", []))
    assert sandbox.left > 0  # OCR time is not taken from the run's parse time


@needs_extra
def test_ocr_stops_at_the_file_budget_and_keeps_what_it_read(tmp_path: Path) -> None:
    path = tmp_path / "pages.tiff"
    first, second = text_page([["Chapter one"]]), text_page([["Chapter two"]])
    path.write_bytes(image_bytes(first, "TIFF", save_all=True, append_images=[second]))
    (doc,) = load_file(path, limits=Limits(max_ocr_seconds=0.001))
    assert getattr(doc, "ocr_pages", None) == [1]
    assert any("kb.max_ocr_seconds" in w for w in getattr(doc, "warnings", []))


BIKES = [["Lubricate the bicycle chain every", "three hundred kilometres."]]


@needs_extra
def test_a_huge_page_is_rendered_within_the_pixel_cap(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pypdfium2

    sizes: list[tuple[int, int]] = []
    render = pypdfium2.PdfPage.render

    def spy(page: object, *args: object, **kwargs: object) -> object:
        bitmap = render(page, *args, **kwargs)
        sizes.append((bitmap.width, bitmap.height))
        return bitmap

    monkeypatch.setattr(pypdfium2.PdfPage, "render", spy)
    path = tmp_path / "huge.pdf"
    # vector text 200 points a pixel: a page 220,000 points wide
    path.write_bytes(pdf_outlines(text_page(BIKES), scale=200))
    (doc,) = load_file(path, limits=Limits(max_pixels=2_000_000))
    assert sizes and all(w * h <= 2_000_000 for w, h in sizes), sizes
    assert "three hundred kilometres" in " ".join(b.text for b in getattr(doc, "blocks", []))


@pytest.mark.parametrize(("width", "height"), [(1e9, 1.0), (float("nan"), 10.0), (0.0, 5.0)])
def test_a_page_with_no_drawable_size_is_refused(width: float, height: float) -> None:
    with pytest.raises(ParseLimit, match="page 3"):
        _ocr.render_scale(width, height, Limits(), "page 3")


def test_the_render_scale_keeps_the_bitmap_within_the_cap() -> None:
    import math

    for width, height, cap in [(612.0, 792.0, 50_000_000), (14_400.0, 14_400.0, 1_000_000),
                               (1e6, 1e6, 3_000_000), (100.0, 100.0, 777)]:
        scale = _ocr.render_scale(width, height, Limits(max_pixels=cap), "page 1")
        w, h = math.ceil(width * scale), math.ceil(height * scale)
        assert w * h <= cap and max(w, h) <= _ocr.MAX_SIDE, (width, height, cap, w, h)


@needs_extra
def test_a_page_drawing_forms_a_hundredfold_is_refused_before_rendering(
        tmp_path: Path) -> None:
    path = tmp_path / "fanout.pdf"
    path.write_bytes(pdf_form_fanout(50, 3))  # 125,000 squares from a few KB
    assert path.stat().st_size < 4_000
    (skipped,) = load_file(path)
    assert "100,000 objects" in getattr(skipped, "reason", ""), skipped
