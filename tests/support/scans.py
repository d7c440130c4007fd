"""Scans the tests make: pages of printed text as images (Pillow's own font, so no system
font is needed), in one column or two, image-only PDFs of them (one image a page, or
tiles), pages of text drawn as vector outlines, and the hostile ones (an image whose
header declares 50,000 × 50,000 pixels in a few KB, as a PNG and inside a PDF; forms
drawing forms a hundredfold)."""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Sequence

from PIL import Image, ImageDraw, ImageFont

from bench.documents import pdf_file

__all__ = ["columns_page", "image_bytes", "pdf_form_fanout", "pdf_form_image", "pdf_image_bomb",
           "pdf_of_images", "pdf_outlines", "pdf_tiles", "png_bomb", "text_page"]


def text_page(paragraphs: Sequence[Sequence[str]], *, width: int = 1100,
              size: int = 30) -> Image.Image:
    """A white page with ``paragraphs`` (each a list of lines) printed in black, a blank
    line between paragraphs."""
    font = ImageFont.load_default(size=size)
    step = int(size * 1.5)
    lines = sum(len(p) + 1 for p in paragraphs)
    page = Image.new("L", (width, 2 * size + lines * step), 255)
    draw = ImageDraw.Draw(page)
    y = size
    for paragraph in paragraphs:
        for line in paragraph:
            draw.text((size, y), line, font=font, fill=0)
            y += step
        y += step
    return page


def columns_page(title: str, columns: Sequence[Sequence[Sequence[str]]], *,
                 gutter: int = 56, size: int = 28) -> Image.Image:
    """A page with ``title`` across the top, then ``columns`` side by side (each a list of
    paragraphs, each a list of lines), their lines on one baseline grid, as a journal
    sets them, ``gutter`` pixels apart (two ems by default): read by rows, a line of the
    left column runs into the right one's."""
    font = ImageFont.load_default(size=size)
    column_width = int(max(font.getlength(line) for column in columns
                           for paragraph in column for line in paragraph))
    step = int(size * 1.5)
    rows = max(sum(len(p) + 1 for p in column) for column in columns)
    width = 2 * size + len(columns) * column_width + (len(columns) - 1) * gutter
    page = Image.new("L", (width, 4 * size + (rows + 2) * step), 255)
    draw = ImageDraw.Draw(page)
    draw.text((size, size), title, font=font, fill=0)
    for index, column in enumerate(columns):
        x = size + index * (column_width + gutter)
        y = size + 2 * step
        for paragraph in column:
            for line in paragraph:
                draw.text((x, y), line, font=font, fill=0)
                y += step
            y += step
    return page


def image_bytes(image: Image.Image, fmt: str, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


def pdf_of_images(images: Sequence[Image.Image], dpi: int = 150) -> bytes:
    """An image-only PDF, one image a page (no text layer): a scan."""
    out = io.BytesIO()
    first, *rest = [image.convert("RGB") for image in images]
    first.save(out, "PDF", save_all=True, append_images=rest, resolution=dpi)
    return out.getvalue()


def pdf_text_page(text: str) -> bytes:
    """A one-page PDF whose text layer prints ``text`` (Helvetica, one line): no scan."""
    content = b"BT /F1 12 Tf 72 720 Td (%s) Tj ET" % text.encode("latin-1")
    return _one_page(b"612 792", content,
                     [b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"],
                     resources=b"/Font << /F1 5 0 R >>")


def _one_page(box: bytes, content: bytes, objects: Sequence[bytes] = (), *,
              resources: bytes | None = None, compressed: bool = False) -> bytes:
    """A one-page PDF: the page ``box`` ("width height", points) with ``resources``,
    drawn by ``content`` (object 4, Flate-compressed already when ``compressed``), then
    ``objects`` numbered from 5."""
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %s]" % box
    if resources is not None:
        page += b" /Resources << %s >>" % resources
    stream = b"<< /Filter /FlateDecode /Length %d >>" if compressed else b"<< /Length %d >>"
    return pdf_file([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        page + b" /Contents 4 0 R >>",
        stream % len(content) + b"\nstream\n" + content + b"\nendstream",
        *objects,
    ])


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def png_bomb(width: int = 50_000, height: int = 50_000) -> bytes:
    """A PNG whose header says ``width`` × ``height`` 8-bit grey pixels, with the first
    rows of zeros compressed: a few KB that would decode to gigabytes."""
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    rows = zlib.compress(b"\x00" * ((width + 1) * 20), 9)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", rows)
            + _chunk(b"IEND", b""))


def pdf_image_bomb(width: int = 50_000, height: int = 50_000, *,
                   in_form: bool = False) -> bytes:
    """A one-page PDF with no text that draws one image declaring ``width`` × ``height``
    grey pixels, its stream a few KB of compressed zeros (drawn by a form XObject the
    page draws, with ``in_form``)."""
    return _imagepdf_file(width, height, zlib.compress(b"\x00" * (width * 20), 9), in_form)


def pdf_form_image(image: Image.Image) -> bytes:
    """A one-page PDF with no text whose page draws a form XObject that draws ``image``
    (grey): the scan wrapped in a form, as some scanners and PDF tools write it."""
    grey = image.convert("L")
    return _imagepdf_file(*grey.size, zlib.compress(grey.tobytes(), 6), in_form=True)


def _imagepdf_file(width: int, height: int, data: bytes, in_form: bool) -> bytes:
    """A page of ``width`` × ``height`` points that draws one grey image (its pixels
    ``data``, Flate-compressed), directly or through a form XObject."""
    draw = b"q %d 0 0 %d 0 0 cm /Im0 Do Q" % (width, height)
    image = (b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace "
             b"/DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n"
             % (width, height, len(data)) + data + b"\nendstream")
    content, resources, extra = draw, b"/Im0 5 0 R", [image]
    if in_form:
        content, resources = b"q 1 0 0 1 0 0 cm /Fm0 Do Q", b"/Fm0 5 0 R"
        extra = [b"<< /Type /XObject /Subtype /Form /BBox [0 0 %d %d] /Resources "
                 b"<< /XObject << /Im0 6 0 R >> >> /Length %d >>\nstream\n"
                 % (width, height, len(draw)) + draw + b"\nendstream", image]
    return _one_page(b"%d %d" % (min(width, 14_400), min(height, 14_400)), content, extra,
                     resources=b"/XObject << %s >>" % resources)


def pdf_tiles(image: Image.Image, cut: int) -> bytes:
    """A one-page PDF with no text whose page draws ``image`` (grey) as two image tiles,
    the rows above ``cut`` and those below, one point a pixel, as some scanners write a
    page: a line printed across ``cut`` is half in each tile."""
    grey = image.convert("L")
    width, height = grey.size
    top, bottom = grey.crop((0, 0, width, cut)), grey.crop((0, cut, width, height))
    draw = (b"q %d 0 0 %d 0 %d cm /Im0 Do Q q %d 0 0 %d 0 0 cm /Im1 Do Q"
            % (width, cut, height - cut, width, height - cut))
    tiles = [_image_object(tile) for tile in (top, bottom)]
    return _one_page(b"%d %d" % (width, height), draw, tiles,
                     resources=b"/XObject << /Im0 5 0 R /Im1 6 0 R >>")


def _image_object(grey: Image.Image) -> bytes:
    data = zlib.compress(grey.tobytes(), 6)
    return (b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace "
            b"/DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n"
            % (*grey.size, len(data)) + data + b"\nendstream")


def pdf_outlines(image: Image.Image, scale: float = 1.0) -> bytes:
    """A one-page PDF with no text and no image whose page draws the dark pixels of
    ``image`` as filled vector rectangles (each run of a row one rectangle), ``scale``
    points a pixel: text drawn as outlines, as a PDF tool's "convert text to paths"
    writes it. The page is ``scale`` times the image's size in points."""
    grey = image.convert("L")
    width, height = grey.size
    pixels = grey.load()
    runs: list[bytes] = []
    for y in range(height):
        x = 0
        while x < width:
            if pixels[x, y] < 128:
                start = x
                while x < width and pixels[x, y] < 128:
                    x += 1
                runs.append(b"%d %d %d 1 re" % (start, height - 1 - y, x - start))
            x += 1
    content = (b"q %s 0 0 %s 0 0 cm 0 g\n" % (repr(scale).encode(), repr(scale).encode())
               + b"\n".join(runs) + b"\nf Q")
    data = zlib.compress(content, 6)
    return _one_page(b"%s %s" % (repr(width * scale).encode(), repr(height * scale).encode()),
                     data, compressed=True)


def pdf_form_fanout(fanout: int = 50, depth: int = 3) -> bytes:
    """A one-page PDF of a few hundred bytes whose page draws a form ``fanout`` times,
    that form another ``fanout`` times, ``depth`` forms deep, the last a small square:
    ``fanout ** depth`` squares drawn."""
    draws = b" ".join([b"/Fm Do"] * fanout)
    forms = [b"<< /Type /XObject /Subtype /Form /BBox [0 0 100 100] /Resources << /XObject "
             b"<< /Fm %d 0 R >> >> /Length %d >>\nstream\n" % (6 + level, len(draws))
             + draws + b"\nendstream" for level in range(depth - 1)]
    square = b"0 g 10 10 20 20 re f"
    forms.append(b"<< /Type /XObject /Subtype /Form /BBox [0 0 100 100] /Length %d >>\n"
                 b"stream\n" % len(square) + square + b"\nendstream")
    return _one_page(b"100 100", draws, forms, resources=b"/XObject << /Fm 5 0 R >>")
