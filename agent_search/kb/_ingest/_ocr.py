"""Text of scans: images (PNG, JPEG, TIFF, WebP) and the PDF pages whose text layer is
empty or garbage, rendered by PDFium (pypdfium2) and read by OCR (RapidOCR's PP-OCR
models, Chinese and English, which its wheel ships: no download). Installed with the
extra ``agent-searchkit[ocr]``; without it a scan is skipped with a reason that names
the extra. A PDF page is rendered within the pixel cap, its size computed from the page
before anything is drawn (:func:`render_scale`).

Bounded before anything is decoded: an image's size is read from its header
(:func:`check_pixels`), so a 50,000 × 50,000 PNG of a few KB is refused, never
unpacked; at most ``Limits.max_ocr_pages`` pages (TIFF frames, PDF pages) are read, and
OCR stops once ``Limits.max_ocr_seconds`` are spent (the pages read so far are kept, the
rest named in a warning). The parse child (:mod:`agent_search.kb._ingest._sandbox`) runs
it, with its memory cap, and kills a page that takes over its own deadline.

Reading order (:mod:`agent_search.kb._ingest._layout`): the page's boxes are cut into
columns and bands by the gaps between them, then grouped into lines and paragraphs, so a
chunk holds a paragraph as printed, and two columns are read one after the other.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_search.errors import InputError
from agent_search.kb._ingest._document import Block, Document, Limits, ParseLimit
from agent_search.kb._ingest._layout import Box, reading_order
from agent_search.kb._ingest._loaders import file_doc_id

OCR_EXTRA = "agent-searchkit[ocr]"
MAX_SIDE = 2000
"""Longest side, in pixels, an image is scaled down to before OCR: letters of a page
scanned at 300 dpi stay ~25 px high, and the cost of a page stays bounded."""
MIN_SCORE = 0.5
"""Recognised text under this confidence is dropped (noise, stains, dithering)."""

IMAGE_MAGIC: dict[str, tuple[bytes, ...]] = {
    ".png": (b"\x89PNG\r\n\x1a\n",),
    ".jpg": (b"\xff\xd8\xff",),
    ".jpeg": (b"\xff\xd8\xff",),
    ".tif": (b"II*\x00", b"MM\x00*"),
    ".tiff": (b"II*\x00", b"MM\x00*"),
    ".webp": (b"RIFF",),
}
"""Suffix → the bytes an image of it starts with (TIFF: either byte order)."""

PageTick = Callable[[int, int], None]
"""``tick(page, pages)``: called before each page is read by OCR."""


class OcrUnavailable(InputError):
    """A scan arrived and the OCR extra is not installed."""

    def __init__(self) -> None:
        super().__init__(f"a scan (no text layer): OCR is not installed; install it with "
                         f"pip install '{OCR_EXTRA}'")


_tick: PageTick = lambda page, pages: None  # noqa: E731
_engine: Any = None


def on_page(tick: PageTick) -> None:
    """Report each page before it is read (the parse child sends it to the ingest, which
    reports progress per page and gives each page its own deadline)."""
    global _tick
    _tick = tick


def available() -> bool:
    """True when the OCR extra is installed (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("rapidocr") is not None


ENGINE_PARAMS: dict[str, object] = {
    "Global.log_level": "error",
    # pages are scanned upright: no orientation model run on every line
    "Global.use_cls": False,
    "Global.max_side_len": MAX_SIDE,
    # one thread: a tenant's scan takes one core of the machine, not all of them
    "EngineConfig.onnxruntime.intra_op_num_threads": 1,
    "EngineConfig.onnxruntime.inter_op_num_threads": 1,
    # detection on the page scaled to 736 px at most (RapidOCR's own size): a quarter
    # less CPU a page than at 1,280 px, the same text read; 640 px saved a tenth more
    # on the bench's 11 pt pages, untried on small print (9 pt is ~7 px high there)
    "Det.limit_type": "max",
    "Det.limit_side_len": 736,
    # recognition one line at a time: a batch pads each line to the widest of the
    # batch, and the model's cost grows with the padded width (~70 µs of CPU per
    # column of the line scaled to 48 px high): an eighth less CPU a page than six
    "Rec.rec_batch_num": 1,
}
"""RapidOCR's settings, chosen by CPU seconds against character error rate
(``bench/bench_ocr.py --sweep``)."""
REC_PAD = 0.15
"""Each line's crop is padded above and below by this share of its height before it is
recognised. The model reads a line scaled to 48 px high, and its cost grows with the
width that scaling gives it: a taller crop is a narrower one, a fifth less CPU a page
for the same text read (the bench's sweep: character error rate ~0.001 either way;
padding 0.3 lost English letters)."""


def _ocr_engine() -> Any:
    """The engine, made on first use with :data:`ENGINE_PARAMS` and the models the wheel
    ships."""
    global _engine
    if _engine is None:
        if not available():
            raise OcrUnavailable()
        _engine = make_engine(ENGINE_PARAMS)
    return _engine


def make_engine(params: dict[str, object]) -> Any:
    """A RapidOCR engine with these settings whose recognition pads each crop and shares
    a page's lines between threads (:class:`_Recognizer`)."""
    import logging

    from rapidocr import RapidOCR

    engine: Any = RapidOCR(params=dict(params))
    # its own method, wrapped on the instance (the class is RapidOCR's)
    engine.recognize_txt = _Recognizer(engine.recognize_txt)
    logging.getLogger("RapidOCR").propagate = False
    return engine


_local = threading.local()
"""``threads``: how many threads the page read on this thread may share its lines with."""
_pools: dict[tuple[str, int], ThreadPoolExecutor] = {}
"""The parse child's thread pools, by kind (``pages``, ``lines``) and size."""


def _pool(kind: str, workers: int) -> ThreadPoolExecutor:
    """A pool of ``workers`` threads for pages or lines (two pools: a page waits on its
    lines, which must not wait for a page's thread). Kept for the parse child's life."""
    pool = _pools.get((kind, workers))
    if pool is None:
        pool = _pools[kind, workers] = ThreadPoolExecutor(workers,
                                                          thread_name_prefix=f"ocr-{kind}")
    return pool


LINE_GROUPS = 4
"""A page's lines go to the lines pool in this many groups per thread when shared: the
pool takes them in turn, so when one page of a file is done, its thread reads the lines
left of the others instead of waiting idle for the file's last page."""


class _Recognizer:
    """RapidOCR's recognition of a page's line crops, each padded (:data:`REC_PAD`), and
    shared between the threads of the lines pool when ``ocr_workers`` > 1 (a page read
    alone, and the pages of a file read at once: their groups of lines queue in one
    pool, so both cores read lines until the file's last line): the model releases the
    GIL, and one session runs on several threads at once."""

    def __init__(self, recognize: Callable[[list[Any]], Any]) -> None:
        self.recognize = recognize

    def __call__(self, crops: list[Any]) -> Any:
        padded = [_padded(crop) for crop in crops]
        threads = getattr(_local, "threads", 1)
        count = min(threads * LINE_GROUPS, len(padded))
        if threads < 2 or count < 2:
            return self.recognize(padded)
        # the widest lines first, dealt in turn: the groups are of about the same width
        order = sorted(range(len(padded)), key=lambda i: -padded[i].shape[1] / padded[i].shape[0])
        groups = [order[k::count] for k in range(count)]
        outs = list(_pool("lines", threads).map(
            lambda group: self.recognize([padded[i] for i in group]), groups))
        return _merged(outs, groups, padded)


def _padded(crop: Any) -> Any:
    """A line's crop padded above and below (:data:`REC_PAD`) with its background: the
    median of its pixels, as a line's ink covers well under half of them (its edge rows
    may hold the ink of the lines above and below, which must not be smeared)."""
    import cv2
    import numpy as np

    pad = round(crop.shape[0] * REC_PAD)
    if pad < 1:
        return crop
    sample = crop[::3, ::3].reshape(-1, crop.shape[2])  # a ninth of the pixels is plenty
    background = [float(v) for v in np.median(sample, axis=0)]
    return cv2.copyMakeBorder(crop, pad, pad, 0, 0, cv2.BORDER_CONSTANT, value=background)


def _merged(outs: list[Any], groups: list[list[int]], crops: list[Any]) -> Any:
    """One recognition result of the lines read in ``groups``, in the crops' order."""
    from rapidocr.ch_ppocr_rec import TextRecOutput

    txts: list[str] = [""] * len(crops)
    scores: list[float] = [0.0] * len(crops)
    words: list[Any] = [None] * len(crops)
    for out, group in zip(outs, groups, strict=True):
        for j, i in enumerate(group):
            txts[i], scores[i], words[i] = out.txts[j], out.scores[j], out.word_results[j]
    return TextRecOutput(imgs=crops, txts=tuple(txts), scores=tuple(scores),  # type: ignore[arg-type]
                         word_results=tuple(words), elapse=max(o.elapse or 0.0 for o in outs))


PAGE_MEMORY_MB = 300
"""Address space one more page read at once takes in the parser process (the models'
buffers of a page, the stacks and allocator arenas of its page thread and of its thread
in the lines pool): a 300 dpi scan's pages measured 1.81 GB two at a time, 2.01 GB
three at a time (before the lines pool served every page: 1.28 GB one at a time, 1.62
GB two, 1.82 GB three, 1.94 GB four)."""
BASE_MEMORY_MB = 1_500
"""Address space of the parser process reading one page at a time, with a margin."""


def ocr_workers(setting: int | None, uploaded: bool, memory_mb: int = 2_048) -> int:
    """Pages of one file read by OCR at once (``kb.ocr_workers``): the setting when set;
    else 1 for files uploaded (over HTTP, where one tenant's scan must leave the other
    cores to the others' searches), and for a local ingest (the CLI, Python), where OCR
    is most of an ingest's time, the CPUs this process may use, as many as fit in the
    parser's address space (``memory_mb``, ``kb.max_parse_memory_mb``: two in the
    default 2,048 MB)."""
    if setting is not None:
        return setting
    if uploaded:
        return 1
    from agent_search.embedding import default_workers

    fit = 1 + max(0, memory_mb - BASE_MEMORY_MB) // PAGE_MEMORY_MB
    return max(1, min(default_workers(), fit))


def check_pixels(width: int, height: int, limits: Limits, where: str) -> None:
    """Refuse a page larger than ``limits.max_pixels`` before it is decoded."""
    if width * height > limits.max_pixels:
        raise ParseLimit(f"{where} is {width:,} × {height:,} pixels, over the cap of "
                         f"{limits.max_pixels:,} (kb.max_image_megapixels)")


@dataclass(slots=True)
class Budget:
    """Pages and seconds of OCR left to one file."""

    limits: Limits
    pages: int = 0
    started: float = 0.0
    stopped: str | None = None
    """Why OCR stopped early (the file's warning), or None."""

    def take(self, page: int, pages: int) -> bool:
        """True when page ``page`` of ``pages`` may be read; else records why not."""
        if self.stopped is not None:
            return False
        if not self.started:
            self.started = time.monotonic()
        if self.pages >= self.limits.max_ocr_pages:
            self.stopped = (f"OCR read {self.pages} pages, the cap (kb.max_ocr_pages); "
                            f"pages from {page} on were not read")
        elif time.monotonic() - self.started > self.limits.max_ocr_seconds:
            self.stopped = (f"OCR took over {self.limits.max_ocr_seconds:g} s "
                            f"(kb.max_ocr_seconds); pages from {page} on were not read")
        if self.stopped is not None:
            return False
        self.pages += 1
        _tick(page, pages)
        return True


def read_image(path: Path, source: str, limits: Limits) -> Document:
    """An image file (each frame of a TIFF a page) as one document read by OCR."""
    if not available():
        raise OcrUnavailable()
    from PIL import Image

    blocks: list[Block] = []
    budget = Budget(limits)
    try:
        with _pillow_cap(limits), Image.open(path) as image:  # reads the header only
            frames = int(getattr(image, "n_frames", 1))
            pages = Pages(blocks, limits.ocr_workers, frames)
            for index in range(frames):
                image.seek(index)
                check_pixels(*image.size, limits, f"page {index + 1}" if frames > 1
                             else "the image")
                if not budget.take(index + 1, frames):
                    break
                pages.add(image, index + 1)
            pages.finish()
    except Image.DecompressionBombError as exc:
        raise ParseLimit(f"the image is over the cap of {limits.max_pixels:,} pixels "
                         f"(kb.max_image_megapixels), refused before decoding: {exc}") from None
    return Document(file_doc_id(source), source, None, blocks,
                    [budget.stopped] if budget.stopped else [],
                    ocr_pages=list(range(1, budget.pages + 1)))


@contextlib.contextmanager
def _pillow_cap(limits: Limits) -> Iterator[None]:
    """Pillow's own pixel check (at open and decode, in pypdf's decoding too) set to
    ``limits.max_pixels`` while a file is read, and put back after: it is a global, and
    one file's cap must not refuse the next file's pages."""
    from PIL import Image

    before = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = limits.max_pixels
    try:
        yield
    finally:
        Image.MAX_IMAGE_PIXELS = before


def page_blocks(image: Any, page: int, threads: int = 1) -> list[Block]:
    """The blocks of one page image (a Pillow image, not yet decoded), in reading order;
    its lines recognised on ``threads`` threads."""
    return read_pixels(page_pixels(image), page, threads)


def page_pixels(image: Any) -> Any:
    """A page image (Pillow, not yet decoded) as the engine's array: within
    :data:`MAX_SIDE`, in OpenCV's BGR order, contiguous in memory. A grey or black and
    white scan is scaled down while grey (a third of the pixels to resample), and only
    then made three channels. Contiguous, because OpenCV copies a strided array whole
    each time it is given one: every line's crop cut from a reversed view copied the
    page again, a tenth of a page's CPU (``bench/bench_ocr.py``)."""
    import cv2
    import numpy as np

    image.draft("RGB", (MAX_SIDE, MAX_SIDE))  # a JPEG decodes at a fraction of its size
    grey = image.mode in GREY_MODES
    page = image.convert("L" if grey else "RGB")  # a copy: the caller's image is kept
    if max(page.size) > MAX_SIDE:
        page.thumbnail((MAX_SIDE, MAX_SIDE))
    return cv2.cvtColor(np.asarray(page), cv2.COLOR_GRAY2BGR if grey else cv2.COLOR_RGB2BGR)


GREY_MODES = frozenset({"1", "L"})
"""Pillow modes of pages without colour (bilevel fax scans, grey scans)."""


def read_pixels(pixels: Any, page: int, threads: int = 1) -> list[Block]:
    """The blocks of one page's array (:func:`page_pixels`), in reading order."""
    _local.threads = threads
    out = _ocr_engine()(pixels)
    boxes = out.boxes if out.boxes is not None else []
    found = [(Box.of(box), str(text)) for box, text, score
             in zip(boxes, out.txts or (), out.scores or (), strict=False)
             if score >= MIN_SCORE and str(text).strip()]
    return [Block(text, (), page) for text in reading_order(found)]


class Pages:
    """The pages of one file read by OCR, up to ``workers`` at once (one session of the
    models serves them all), their blocks put into ``blocks`` where each page was met, so
    the document keeps its page order. Each page is detected on a thread of its own and
    its lines recognised in the lines pool (``workers`` threads) beside the other pages'
    lines: a short page's core goes on to the long page's lines, where it used to wait
    idle for the file's last page. A file of one page shares its lines the same way. At
    most ``workers`` page images wait in memory."""

    def __init__(self, blocks: list[Block], workers: int, pages: int) -> None:
        self.blocks = blocks
        self.workers = max(1, workers)
        self.pages = pages
        self.read: list[int] = []
        """The pages whose OCR found text, once :meth:`finish` has run."""
        self._pending: list[tuple[int, int, Future[list[Block]]]] = []

    def add(self, image: Any, page: int) -> None:
        """Read page ``page`` (a Pillow image, not yet decoded) into the blocks."""
        pixels = page_pixels(image)
        if self.workers < 2 or self.pages < 2:
            self._put(len(self.blocks), page, read_pixels(pixels, page, self.workers))
            return
        from concurrent.futures import FIRST_COMPLETED, wait

        _ocr_engine()  # made once, before the threads share it
        running = {f for _, _, f in self._pending if not f.done()}
        while len(running) >= self.workers:
            running = wait(running, return_when=FIRST_COMPLETED).not_done
        # its lines read in the lines pool, beside the other pages' (:class:`_Recognizer`)
        future = _pool("pages", self.workers).submit(read_pixels, pixels, page, self.workers)
        self._pending.append((len(self.blocks), page, future))

    def finish(self) -> list[int]:
        """Wait for the pages still read; the pages that gave text, in order."""
        pending, self._pending = self._pending, []
        for index, page, future in reversed(pending):  # from the end: indexes stay true
            self._put(index, page, future.result())
        return sorted(self.read)

    def _put(self, index: int, page: int, found: list[Block]) -> None:
        self.blocks[index:index] = found
        if found:
            self.read.append(page)


MIN_PAGE_CHARS = 16
"""A PDF page with fewer visible characters in its text layer is read by OCR (when it
holds an image): a scan's layer is empty, or a page number."""
MIN_IMAGE_PIXELS = 20_000
"""Images smaller than this on a scanned page (logos, rules, bullets) are not read."""
_BAD_CATEGORIES = frozenset({"Cc", "Co", "Cn", "Cs"})


def needs_ocr(text: str) -> bool:
    """True when a PDF page's text layer is empty or garbage: a few characters, or a
    fifth of them control, private-use or unassigned code points or U+FFFD (a font
    without a Unicode map), or under half of them letters, digits or punctuation."""
    import unicodedata

    visible = "".join(text.split())
    if len(visible) < MIN_PAGE_CHARS:
        return True
    bad = sum(1 for c in visible
              if c == "\ufffd" or unicodedata.category(c) in _BAD_CATEGORIES)
    good = sum(1 for c in visible
               if c.isalnum() or unicodedata.category(c).startswith("P"))
    return bad > len(visible) / 5 or good < len(visible) / 2


def pdf_page_blocks(page: Any, number: int, pages: int, limits: Limits,
                    budget: Budget) -> list[Block] | None:
    """The text of a scanned PDF page, read by OCR from the images it draws (each image's
    size checked from its dictionary before it is decoded); None when the page has no
    image to read, [] when the budget is spent. Raises :class:`OcrUnavailable` without
    the extra.

    The fallback of :func:`render_page` when pypdfium2 is not installed. Each image is
    read on its own, in the order the page's resources name them, not where the page
    places it: a page drawn as several tiles is read tile by tile (a line cut by a
    tile's edge is lost). Not read: inline images (small by the PDF rules) and text
    drawn as vector outlines (no image, no text layer: the page reads as empty)."""
    found = _page_images(page, limits, number)
    if not found:
        return None
    if not available():
        raise OcrUnavailable()
    if not budget.take(number, pages):
        return []
    blocks: list[Block] = []
    with _pillow_cap(limits):
        for name in found:
            image = page.images[name].image
            if image is None:
                raise ValueError(f"an image on page {number} could not be decoded")
            blocks.extend(page_blocks(image, number))
    return blocks


MAX_FORM_DEPTH = 4
"""Form XObjects (a drawing reused on the page) are searched for images this deep: a
scanner or a PDF tool may wrap a page's scan in one."""
ImageId = str | list[str]
"""pypdf's name of an image on a page: ``/Im0``, or the path through forms to it."""


def _page_images(page: Any, limits: Limits, number: int) -> list[ImageId]:
    """Names of the page's image XObjects worth reading (those inside form XObjects too,
    as pypdf names them), each within the pixel cap, checked from its dictionary before
    anything is decoded."""
    names: list[ImageId] = []
    seen: set[int] = set()

    def walk(holder: Any, path: list[str]) -> None:
        resources: Any = holder.get("/Resources")
        resources = resources.get_object() if resources is not None else None
        xobjects = resources.get("/XObject") if hasattr(resources, "get") else None
        if xobjects is None or len(path) > MAX_FORM_DEPTH:
            return
        for name, ref in xobjects.get_object().items():
            obj = ref.get_object()
            if id(obj) in seen or not hasattr(obj, "get"):
                continue
            seen.add(id(obj))
            if obj.get("/Subtype") == "/Form":
                walk(obj, [*path, str(name)])
            elif obj.get("/Subtype") == "/Image":
                width, height = int(obj.get("/Width", 0)), int(obj.get("/Height", 0))
                check_pixels(width, height, limits, f"an image on page {number}")
                if width * height >= MIN_IMAGE_PIXELS:
                    names.append([*path, str(name)] if path else str(name))

    walk(page, [])
    return names


class Scans:
    """The pages of a PDF whose text layer is empty or garbage, read by OCR
    (:mod:`agent_search.kb._ingest._ocr`) into the document's blocks; without the OCR
    extra, counted and reported.

    Each such page is rendered by PDFium (:func:`render_page`), so whatever the page
    draws is read: a scan cut into tiles, inline images, text drawn as vector outlines.
    Without pypdfium2 (an older install of the extra) the page's images are read one by
    one instead (:func:`pdf_page_blocks`)."""

    def __init__(self, blocks: list[Block], limits: Limits, path: Path | None = None) -> None:
        self.blocks = blocks
        self.budget = Budget(limits)
        self.limits = limits
        self.path = path
        self.ocr_pages: list[int] = []
        self.pages: Pages | None = None
        """Pages read by OCR on ``limits.ocr_workers`` threads (made on the first scan)."""
        self.missing = 0
        """Scanned pages left unread: the OCR extra is not installed."""
        self._pdf: Any = None

    def read(self, page: Any, text: str, number: int, pages: int) -> bool:
        """True when the page was a scan (its OCR text, if any, is in the blocks)."""
        if not needs_ocr(text):
            return False
        try:
            if self.path is not None and renders():
                if self._pdf is None:
                    self._pdf = open_pdf(self.path)
                    self.pages = Pages(self.blocks, self.limits.ocr_workers, pages)
                found = render_page(self._pdf, number, pages, self.limits, self.budget,
                                    self._read)
            else:
                found = pdf_page_blocks(page, number, pages, self.limits, self.budget)
        except OcrUnavailable:
            self.missing += 1
            return False
        if found is None:
            return False
        if found:
            self.ocr_pages.append(number)
            self.blocks.extend(found)
        return True

    def _read(self, image: Any, number: int) -> list[Block]:
        """Page ``number``'s image given to the pages read in parallel: its blocks go in
        where the page is, once read (:meth:`finish`)."""
        assert self.pages is not None
        self.pages.add(image, number)
        return []

    def finish(self, doc: Document) -> Document:
        if self.pages is not None:
            self.ocr_pages = sorted(self.ocr_pages + self.pages.finish())
        if self._pdf is not None:
            self._pdf.close()
            self._pdf = None
        if self.missing and not any(b.text.strip() for b in self.blocks):
            raise OcrUnavailable()
        if self.missing:
            doc.warnings.append(f"{self.missing} scanned page(s) not read: "
                                f"{OcrUnavailable()}")
        if self.budget.stopped:
            doc.warnings.append(self.budget.stopped)
        doc.ocr_pages = self.ocr_pages
        return doc


RENDER_DPI = 300
"""Most dots per inch a page is rendered at (a small page is not blown up further);
a letter or A4 page is held to :data:`MAX_SIDE` first, ~180 dpi."""
MAX_PAGE_OBJECTS = 100_000
"""A page drawing more objects than this (counted through its forms, each time a form is
drawn) is refused before it is rendered: forms drawing forms a hundred times each would
otherwise make one small page take hours."""


def renders() -> bool:
    """True when PDFium (pypdfium2, in the OCR extra) is installed (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("pypdfium2") is not None


def open_pdf(path: Path) -> Any:
    """The PDF opened by PDFium (imported here: only when a scanned page arrives)."""
    import pypdfium2  # type: ignore[import-untyped]

    return pypdfium2.PdfDocument(str(path))


def render_scale(width: float, height: float, limits: Limits, where: str) -> float:
    """Pixels per PDF unit to render a page of ``width`` × ``height`` units at, computed
    from its size before anything is drawn: at most :data:`RENDER_DPI`, the longest side
    at most :data:`MAX_SIDE`, and the bitmap within ``limits.max_pixels``
    (``kb.max_image_megapixels``). A page of absurd size is drawn small, never into a
    huge bitmap; one too narrow to give a pixel at that scale is refused."""
    if not (math.isfinite(width) and math.isfinite(height)) or width <= 0 or height <= 0:
        raise ParseLimit(f"{where} has no usable size ({width:g} × {height:g} units)")
    scale = min(RENDER_DPI / 72, MAX_SIDE / max(width, height),
                math.sqrt(limits.max_pixels / (width * height)))
    while scale > 0 and math.ceil(width * scale) * math.ceil(height * scale) > limits.max_pixels:
        scale *= 0.99  # the renderer rounds each side up
    if min(width, height) * scale < 1:
        raise ParseLimit(f"{where} is {width:g} × {height:g} units: under a pixel wide "
                         f"when drawn within the cap of {limits.max_pixels:,} pixels "
                         "(kb.max_image_megapixels)")
    return scale


def render_page(pdf: Any, number: int, pages: int, limits: Limits, budget: Budget,
                read: Callable[[Any, int], list[Block]] = page_blocks) -> list[Block] | None:
    """The text of page ``number`` of a PDFium document, rendered within the pixel cap
    (:func:`render_scale`) and read by OCR; None when the page draws nothing to read (no
    image, path or shading: a blank page, or text only), [] when the budget is spent.
    Each image the page draws is checked from its dictionary before anything is decoded.
    ``read(image, number)`` reads the rendered page (a Pillow image). Raises
    :class:`OcrUnavailable` without the OCR engine."""
    page = pdf[number - 1]
    try:
        if not _draws(page, limits, number):
            return None
        if not available():
            raise OcrUnavailable()
        if not budget.take(number, pages):
            return []
        width, height = page.get_size()
        scale = render_scale(float(width), float(height), limits, f"page {number}")
        bitmap = page.render(scale=scale, may_draw_forms=False)
        return read(bitmap.to_pil(), number)
    finally:
        page.close()


def _draws(page: Any, limits: Limits, number: int) -> bool:
    """True when the page draws an image, a path or a shading (through its forms too);
    every image's size checked against the pixel cap, the objects counted."""
    import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

    kinds = (pdfium_c.FPDF_PAGEOBJ_IMAGE, pdfium_c.FPDF_PAGEOBJ_PATH,
             pdfium_c.FPDF_PAGEOBJ_SHADING)
    drawn = False
    for count, obj in enumerate(page.get_objects(max_depth=MAX_FORM_DEPTH * 4), start=1):
        if count > MAX_PAGE_OBJECTS:
            raise ParseLimit(f"page {number} draws over {MAX_PAGE_OBJECTS:,} objects")
        if obj.type == pdfium_c.FPDF_PAGEOBJ_IMAGE:
            width, height = obj.get_px_size()
            check_pixels(int(width), int(height), limits, f"an image on page {number}")
        drawn = drawn or obj.type in kinds
    return drawn
