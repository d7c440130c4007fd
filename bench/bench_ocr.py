"""Scans in the kb: the same documents ingested with their text layer and as image-only
PDFs (every page rasterised at 150 and 300 dpi, no text), asked the same questions.

Documents: PDFs typeset here (reportlab) from public text, English and Chinese:
SciFact abstracts (the claims of its test split are the English questions, its qrels the
answers) and zh-rgb news passages (its questions and positive passages), both read from
``../shared/data`` (never copied into the repository). Each question's gold page is the
page of the text-layer PDF that prints its relevant passage (found by the passage's text,
before any search). Pages are rasterised by pdftoppm (Debian's poppler-utils), and the
images put back into PDFs with no text layer (Pillow).

Printed, per language: hit@3 (a top-3 item from the gold file and page) of the text
layer and of each scan, and their ratio (the goal: ≥ 0.90); the character error rate of
OCR against the text layer, page by page (the text the ingest itself read by OCR); the
ingest's seconds per page (the kb's real path: the parse child, chunking, embedding),
the text layer's beside the scans' in the same run, and the parse child's CPU seconds
per page (its start-up included), which a shared machine's load does not inflate as it
does the wall time. Questions are split once into a working half (even positions) and a
locked half (odd), each reported on its own.

Run: ``make bench-ocr`` (installs the extras ``ocr`` and ``bench``, for reportlab; needs
pdftoppm and a CJK font such as fonts-wqy-microhei; says what is missing). ``--ocr-workers N`` sets
the pages of a file read at once (default the kb's: every core for a local ingest).
``--sweep PAGES`` compares RapidOCR settings on the same page images instead (CPU
seconds, as ratios to the kb's settings in the same run, and CER), then reads each page
set one and two pages at once; without reportlab or pdftoppm it draws its pages with
Pillow. ``--columns`` reads a page set in two columns; ``--data DIR`` names the folder
of the data sets."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
CJK_FONTS = ["/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
             "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
             "/usr/share/fonts/truetype/arphic/uming.ttc"]


@dataclass
class Question:
    qid: str
    text: str
    passage: str  # the relevant passage's text (its gold page is where it is printed)
    file: str = ""
    pages: set[int] = field(default_factory=set)


@dataclass
class Lang:
    name: str
    questions: list[Question]
    passages: list[tuple[str, str]]  # (title, text) in print order
    model: str | None


def _jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def _qrels(path: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in path.read_text("utf-8").splitlines()[1:]:
        q, d, _ = line.split("\t")
        out.setdefault(q, []).append(d)
    return out


def english(n: int) -> Lang:
    base = DATA / "beir-scifact"
    corpus = {str(d["_id"]): d for d in _jsonl(base / "corpus.jsonl")}
    qrels = _qrels(base / "qrels" / "test.tsv")
    queries = [q for q in _jsonl(base / "queries.jsonl") if str(q["_id"]) in qrels][:n]
    questions, used = [], set()
    for q in queries:
        doc = corpus[qrels[str(q["_id"])][0]]
        used.add(str(doc["_id"]))
        questions.append(Question(str(q["_id"]), str(q["text"]), str(doc["text"])))
    # as many other abstracts as relevant ones, in corpus order: the distractors
    others = [d for i, d in corpus.items() if i not in used][:n]
    passages = [(str(corpus[qrels[q.qid][0]]["title"]), q.passage) for q in questions]
    passages += [(str(d["title"]), str(d["text"])) for d in others]
    return Lang("English", questions, _interleave(passages, n), None)


def chinese(n: int) -> Lang:
    base = DATA / "zh-rgb"
    corpus = {str(d["_id"]): d for d in _jsonl(base / "corpus.jsonl")}
    qrels = _qrels(base / "qrels" / "test.tsv")
    queries = [q for q in _jsonl(base / "queries.jsonl") if str(q["_id"]) in qrels][:n]
    questions, used = [], set()
    for q in queries:
        # the first relevant passage of a few hundred characters (a page holds several)
        docs = [corpus[d] for d in qrels[str(q["_id"])] if d in corpus and d not in used]
        doc = next((d for d in docs if 80 <= len(str(d["text"])) <= 700), docs[0])
        used.add(str(doc["_id"]))
        questions.append(Question(str(q["_id"]), str(q["text"]), str(doc["text"])))
    others = [d for i, d in corpus.items() if i not in used
              and 80 <= len(str(d["text"])) <= 700][:n]
    passages = [("", q.passage) for q in questions] + [("", str(d["text"])) for d in others]
    return Lang("Chinese", questions, _interleave(passages, n), "multilingual-e5-small")


def _interleave(passages: list[tuple[str, str]], n: int) -> list[tuple[str, str]]:
    """Relevant and distractor passages alternated, so a page mixes both."""
    rel, rest = passages[:n], passages[n:]
    out = []
    for i, p in enumerate(rel):
        out.append(p)
        if i < len(rest):
            out.append(rest[i])
    return out


def typeset(lang: Lang, folder: Path, per_file: int) -> list[Path]:
    """Text-layer PDFs of the passages, ``per_file`` passages a file."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer

    font = "Times-Roman"
    if lang.name == "Chinese":
        path = next(f for f in CJK_FONTS if Path(f).exists())
        pdfmetrics.registerFont(TTFont("CJK", path, subfontIndex=0))
        font = "CJK"
    body = ParagraphStyle("body", fontName=font, fontSize=11, leading=16,
                          wordWrap="CJK" if font == "CJK" else None)
    head = ParagraphStyle("head", parent=body, fontSize=13, leading=18, spaceAfter=4)
    files = []
    for start in range(0, len(lang.passages), per_file):
        path = folder / f"{lang.name.lower()}-{start // per_file + 1:02d}.pdf"
        story: list[object] = []
        for title, text in lang.passages[start:start + per_file]:
            if title:
                story.append(Paragraph(_escape(title), head))
            story += [Paragraph(_escape(text), body), Spacer(1, 14)]
        SimpleDocTemplate(str(path), pagesize=A4, title=path.stem).build(story)
        files.append(path)
    return files


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", text)


def page_texts(pdf: Path) -> list[str]:
    from pypdf import PdfReader

    return [page.extract_text() or "" for page in PdfReader(str(pdf)).pages]


def label(lang: Lang, files: list[Path]) -> None:
    """Each question's gold file and pages: where its passage is printed (by snippets of
    its text found in the text layer), before any search."""
    texts = {f.name: [_norm(t) for t in page_texts(f)] for f in files}
    for q in lang.questions:
        passage = _norm(q.passage)
        snippets = [passage[i:i + 12] for i in range(0, max(1, len(passage) - 12), 30)]
        for name, pages in texts.items():
            found = {n for n, t in enumerate(pages, start=1) if any(s in t for s in snippets)}
            if found:
                q.file, q.pages = name, found
                break


def rasterise(pdf: Path, out: Path, dpi: int) -> Path:
    """An image-only PDF of ``pdf``'s pages at ``dpi`` (pdftoppm, then Pillow)."""
    from PIL import Image

    work = out.parent / f"{pdf.stem}-{dpi}"
    work.mkdir()
    subprocess.run(["pdftoppm", "-r", str(dpi), "-gray", "-png", str(pdf), str(work / "p")],
                   check=True)
    images = [Image.open(p) for p in sorted(work.glob("p-*.png"))]
    images[0].save(out, "PDF", save_all=True, append_images=images[1:], resolution=dpi)
    for image in images:
        image.close()
    shutil.rmtree(work)
    return out


def cer(reference: list[str], hypothesis: list[str], chinese: bool) -> float:
    """Character error rate of OCR pages against the text layer's (edits over reference
    characters; whitespace ignored in Chinese, runs of it one space in English)."""
    from rapidfuzz.distance import Levenshtein

    def norm(t: str) -> str:
        return _norm(t) if chinese else " ".join(t.split())

    edits = chars = 0
    for ref, hyp in zip(reference, hypothesis, strict=False):
        ref, hyp = norm(ref), norm(hyp)
        edits += Levenshtein.distance(ref, hyp)
        chars += len(ref)
    return edits / max(chars, 1)


SEEN: dict[str, dict[int, list[str]]] = {}
"""The blocks of each document the ingest read (its own OCR run), by file and page."""


def _record_documents() -> None:
    """Keep what the ingest reads (bench-only instrumentation: the chunker's input), so
    the character error rate comes from the ingest's own OCR, not a second run."""
    from agent_search.kb import ingest as kb_ingest

    chunks = kb_ingest.iter_chunks

    def recording(doc, *args, **kwargs):  # type: ignore[no-untyped-def]
        pages = SEEN.setdefault(Path(doc.source).name, {})
        for block in doc.blocks:
            pages.setdefault(block.page or 0, []).append(block.text)
        return chunks(doc, *args, **kwargs)

    kb_ingest.iter_chunks = recording  # type: ignore[assignment]


def ocr_texts(scans: list[Path]) -> list[str]:
    """The OCR text of every page of ``scans``, as the ingest read it."""
    out = []
    for scan in scans:
        pages = SEEN.get(scan.name, {})
        out += ["\n".join(pages.get(n, [])) for n in range(1, len(page_texts(scan)) + 1)]
    return out


async def ingest_and_ask(home: Path, lang: Lang, folder: Path, name: str
                         ) -> tuple[dict[str, float], float, int]:
    """hit@3 per half, the ingest's seconds and pages."""
    from agent_search import Context, Request, SearchConfig
    from agent_search.kb import create_handler, ingest_paths

    config = SearchConfig(home=home)
    if lang.model is not None:
        config = config.merged({"kb": {"embedding_model": lang.model}})
    config = config.merged({"kb": {"max_ocr_seconds": 3600, "max_parse_seconds": 3600,
                                   "ocr_workers": OCR_WORKERS}})
    import resource

    SEEN.clear()  # the same file names in each version's folder
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    report = await ingest_paths(config, [folder], name)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the parse child, ended
    CHILD_CPU.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    LOADS.append(os.getloadavg()[0])
    assert not report.skipped, report.to_json()
    pages = sum(len(page_texts(p)) for p in folder.glob("*.pdf"))
    handler = create_handler(config)
    hits: dict[str, list[int]] = {"working": [], "locked": []}
    for i, q in enumerate(lang.questions):
        result = await handler.search(Context(config=config), Request(
            type="kb", query=q.text, options={"collections": [name]}, limit=3))
        hit = any(str(item.metadata.get("source", "")).endswith(q.file)
                  and item.metadata.get("page") in q.pages for item in result.items[:3])
        hits["working" if i % 2 == 0 else "locked"].append(int(hit))
    return {k: sum(v) / max(len(v), 1) for k, v in hits.items()}, seconds, pages


OCR_WORKERS: int | None = None
"""``kb.ocr_workers`` of the ingests (``--ocr-workers``; default the kb's: every core)."""
CHILD_CPU: list[float] = []
LOADS: list[float] = []
"""The machine's load average (one minute) after each ingest: how far to trust the wall."""
"""CPU seconds of the parse child (where OCR runs) of each ingest."""


def missing(sweep: bool = False) -> list[str]:
    """What the bench needs and does not find (the sweep draws its pages without
    reportlab and pdftoppm)."""
    import importlib.util

    out = []
    if not (DATA / "beir-scifact").exists() or not (DATA / "zh-rgb").exists():
        out.append(f"the data sets beir-scifact and zh-rgb under {DATA}")
    if importlib.util.find_spec("rapidocr") is None:
        out.append("the OCR extra: pip install 'agent-searchkit[ocr]'")
    if importlib.util.find_spec("reportlab") is None and not sweep:
        out.append("reportlab: pip install -e '.[bench]' (make bench-ocr does; or run "
                   "--sweep, which draws its pages with Pillow)")
    if shutil.which("pdftoppm") is None and not sweep:
        out.append("pdftoppm: apt-get install poppler-utils")
    if not any(Path(f).exists() for f in CJK_FONTS):
        out.append("a CJK font: apt-get install fonts-wqy-microhei")
    return out


SETTINGS: list[tuple[str, dict[str, object]]] = [
    ("chosen (the kb's)", {}),
    ("crops not padded", {"pad": 0.0}),
    ("crops padded 0.3", {"pad": 0.3}),
    ("before: det 1280, batch 6", {"Det.limit_side_len": 1280, "Rec.rec_batch_num": 6,
                                   "pad": 0.0}),
    ("det 1280", {"Det.limit_side_len": 1280}),
    ("det 960", {"Det.limit_side_len": 960}),
    ("det 640", {"Det.limit_side_len": 640}),
    ("rec batch 6", {"Rec.rec_batch_num": 6}),
    ("boxes padded more (unclip 2.0)", {"Det.unclip_ratio": 2.0}),
    ("onnxruntime arena on", {"EngineConfig.onnxruntime.enable_cpu_mem_arena": True}),
    ("angle model on", {"Global.use_cls": True}),
    ("two threads", {"EngineConfig.onnxruntime.intra_op_num_threads": 2}),
]
"""RapidOCR settings the sweep compares: each the kb's own with some changed (``pad``:
the share of a line's height its crop is padded by, ``_ocr.REC_PAD``)."""


def sweep(langs: list[Lang], tmp: Path, dpis: list[int], per_file: int, pages: int) -> None:
    """Each setting of :data:`SETTINGS` on the same page images (the first ``pages`` of
    each language, rasterised as above), read in this process by the ingest's own
    ``page_blocks``: CPU seconds a page (``time.process_time``: the process's CPU, which
    the machine's other load inflates far less than wall time) and its ratio to the
    kb's settings measured in the same run, wall seconds, character error rate."""
    import importlib.util

    import numpy as np
    from PIL import Image

    from agent_search.kb._ingest import _ocr

    images: dict[tuple[str, int], list[tuple[Path, str]]] = {}
    drawn = importlib.util.find_spec("reportlab") is None
    if drawn:
        print("(reportlab is not installed: pages drawn by Pillow, Liberation Serif and "
              "WenQuanYi Micro Hei 11 pt, instead of typeset PDFs rasterised by pdftoppm)")
    for lang in langs:
        folder = tmp / f"sweep-{lang.name}"
        folder.mkdir()
        for dpi in dpis:
            images[lang.name, dpi] = (draw_pages(lang, folder, dpi, pages) if drawn
                                      else _rasterised(lang, folder, dpi, per_file, pages))
    base: dict[tuple[str, int], float] = {}
    print("| setting | language | dpi | pages | CPU s/page | × chosen | wall s/page | CER |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    chosen_pad = _ocr.REC_PAD
    for name, changed in SETTINGS:
        params = {**_ocr.ENGINE_PARAMS, **changed}
        _ocr.REC_PAD = float(params.pop("pad", chosen_pad))  # type: ignore[arg-type]
        _ocr._engine = _ocr.make_engine(params)
        _ocr._engine(np.full((64, 256, 3), 255, np.uint8))  # its models loaded first
        for (lang_name, dpi), pairs in images.items():
            cpu = wall = 0.0
            hypothesis = []
            for path, _ in pairs:
                started, clock = time.process_time(), time.perf_counter()
                with Image.open(path) as image:
                    blocks = _ocr.page_blocks(image, 1)
                cpu += time.process_time() - started
                wall += time.perf_counter() - clock
                hypothesis.append("\n".join(b.text for b in blocks))
            rate = cer([t for _, t in pairs], hypothesis, lang_name == "Chinese")
            per_page = cpu / len(pairs)
            base.setdefault((lang_name, dpi), per_page)
            print(f"| {name} | {lang_name} | {dpi} | {len(pairs)} | {per_page:.2f} | "
                  f"{per_page / base[lang_name, dpi]:.2f} | {wall / len(pairs):.2f} | "
                  f"{rate:.4f} |", flush=True)
    _ocr.REC_PAD = chosen_pad
    _ocr._engine = _ocr.make_engine(_ocr.ENGINE_PARAMS)
    _parallel(images)


def _parallel(images: dict[tuple[str, int], list[tuple[Path, str]]]) -> None:
    """The kb's settings reading each page set as one file's pages, one and two at once
    (``kb.ocr_workers``): wall seconds a page, and its ratio to one at a time in the same
    run (a shared machine's load inflates both)."""
    from PIL import Image

    from agent_search.kb._ingest import _ocr

    print("\n| pages read at once | language | dpi | pages | CPU s/page | wall s/page "
          "| wall × one at a time |\n|---:|---|---:|---:|---:|---:|---:|")
    for (lang_name, dpi), pairs in images.items():
        one = 0.0
        for workers in (1, 2):
            started, clock = time.process_time(), time.perf_counter()
            pages = _ocr.Pages([], workers, len(pairs))
            for number, (path, _) in enumerate(pairs, start=1):
                with Image.open(path) as image:
                    pages.add(image, number)
            pages.finish()
            wall = (time.perf_counter() - clock) / len(pairs)
            one = one or wall
            print(f"| {workers} | {lang_name} | {dpi} | {len(pairs)} | "
                  f"{(time.process_time() - started) / len(pairs):.2f} | {wall:.2f} | "
                  f"{wall / one:.2f} |", flush=True)


def _rasterised(lang: Lang, folder: Path, dpi: int, per_file: int,
                pages: int) -> list[tuple[Path, str]]:
    """The first ``pages`` pages typeset (:func:`typeset`) and rasterised by pdftoppm,
    each with its text layer."""
    files = sorted(folder.glob("*.pdf")) or typeset(lang, folder, per_file)
    texts = [t for f in files for t in page_texts(f)][:pages]
    subprocess.run(["pdftoppm", "-r", str(dpi), "-gray", "-png", "-l", str(pages),
                    str(files[0]), str(folder / f"p{dpi}")], check=True)
    return list(zip(sorted(folder.glob(f"p{dpi}-*.png")), texts, strict=False))


SERIF = "/usr/share/fonts/truetype/liberation/LiberationSerif-Regular.ttf"


def draw_pages(lang: Lang, folder: Path, dpi: int, pages: int) -> list[tuple[Path, str]]:
    """The first ``pages`` A4 pages of the language's passages drawn by Pillow (11 pt on
    16, one-inch margins: the typeset PDFs' measure) at ``dpi``, each with the text it
    prints: the sweep's pages where reportlab is not installed."""
    from PIL import Image, ImageDraw, ImageFont

    chinese = lang.name == "Chinese"
    font_file = next(f for f in CJK_FONTS if Path(f).exists()) if chinese else SERIF
    font = ImageFont.truetype(font_file, round(11 * dpi / 72),
                              layout_engine=ImageFont.Layout.BASIC)
    width, height, margin, lead = int(8.27 * dpi), int(11.69 * dpi), dpi, round(16 * dpi / 72)
    out: list[tuple[Path, str]] = []
    lines: list[str] = []
    page, y = Image.new("L", (width, height), 255), margin
    for title, passage in lang.passages:
        wrap = _wrap_chars if chinese else _wrap
        for line in (wrap(title, font, width - 2 * margin, ImageDraw.Draw(page)) if title
                     else []) + wrap(passage, font, width - 2 * margin, ImageDraw.Draw(page)):
            if y + lead > height - margin:
                out.append(_save(page, folder / f"d{dpi}-{len(out) + 1:02d}.png", lines))
                if len(out) == pages:
                    return out
                page, lines, y = Image.new("L", (width, height), 255), [], margin
            ImageDraw.Draw(page).text((margin, y), line, font=font, fill=0)
            lines.append(line)
            y += lead
        y += lead
    return [*out, _save(page, folder / f"d{dpi}-{len(out) + 1:02d}.png", lines)][:pages]


def _save(page: Any, path: Path, lines: list[str]) -> tuple[Path, str]:
    page.save(path)
    return path, "\n".join(lines)


def _wrap_chars(text: str, font: Any, width: int, draw: Any) -> list[str]:
    """``text`` in lines no wider than ``width`` pixels, cut between any two characters
    (Chinese)."""
    lines, line = [], ""
    for char in text:
        if line and draw.textlength(line + char, font=font) > width:
            lines.append(line)
            line = ""
        line += char
    return [*lines, line] if line else lines


def columns(lang: Lang, dpi: int, leading: float = 12) -> None:
    """A page set in two columns (Liberation Serif 10 pt on ``leading``, a quarter-inch gutter, the
    lines of both columns on one grid, as journals set them), drawn by Pillow at ``dpi``
    from the language's passages: its character error rate read in columns (the kb's
    reading order) and read by rows across the page (every box a line, the order before
    columns were found), against the text as set, column after column."""
    import numpy as np
    from PIL import Image, ImageDraw, ImageFont

    from agent_search.kb._ingest import _layout, _ocr

    font_file = "/usr/share/fonts/truetype/liberation/LiberationSerif-Regular.ttf"
    font = ImageFont.truetype(font_file, round(10 * dpi / 72),
                              layout_engine=ImageFont.Layout.BASIC)
    width, height, margin = int(8.27 * dpi), int(11.69 * dpi), int(0.75 * dpi)
    gutter, lead = dpi // 4, round(leading * dpi / 72)
    column = (width - 2 * margin - gutter) // 2
    page = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(page)
    lines: list[str] = []
    lefts, y = [margin, margin + column + gutter], margin
    for _, passage in lang.passages:
        for line in _wrap(passage, font, column, draw):
            if y + lead > height - margin:
                lefts, y = lefts[1:], margin  # the next column
            if not lefts:
                break
            draw.text((lefts[0], y), line, font=font, fill=0)
            lines.append(line)
            y += lead
        y += lead // 2
    out = _ocr._ocr_engine()(np.asarray(page.convert("RGB"))[:, :, ::-1])
    found = [(_layout.Box.of(box), str(text)) for box, text, score
             in zip(out.boxes, out.txts, out.scores, strict=False) if score >= _ocr.MIN_SCORE]
    truth = " ".join(lines)
    for name, texts in (("in columns (the kb's)", _layout.reading_order(found)),
                        ("by rows across the page", _layout._blocks(found))):
        print(f"| two columns, {dpi} dpi | {len(lines)} lines | {name} | "
              f"{cer([truth], [' '.join(texts)], False):.4f} |")


def _wrap(text: str, font: Any, width: int, draw: Any) -> list[str]:
    """``text``'s words in lines no wider than ``width`` pixels."""
    lines, line = [], ""
    for word in text.split():
        wider = f"{line} {word}".strip()
        if line and draw.textlength(wider, font=font) > width:
            lines.append(line)
            wider = word
        line = wider
    return [*lines, line] if line else lines


def main() -> None:
    global DATA, OCR_WORKERS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=12, help="per language")
    parser.add_argument("--per-file", type=int, default=8, help="passages per PDF")
    parser.add_argument("--dpi", type=int, nargs="+", default=[150, 300])
    parser.add_argument("--ocr-workers", type=int, default=None,
                        help="pages of a file read at once (kb.ocr_workers; default: the "
                             "kb's, every core for a local ingest)")
    parser.add_argument("--sweep", type=int, metavar="PAGES", default=0,
                        help="compare RapidOCR settings on PAGES pages a language instead")
    parser.add_argument("--data", type=Path, default=DATA,
                        help="the folder holding beir-scifact and zh-rgb (a git worktree's "
                             "../shared is not the project's)")
    parser.add_argument("--columns", action="store_true",
                        help="the reading order of a two-column page instead")
    args = parser.parse_args()
    DATA = args.data
    OCR_WORKERS = args.ocr_workers
    if args.columns:
        print("| page | lines | read | CER |\n|---|---:|---|---:|")
        for dpi in args.dpi:
            columns(english(args.questions), dpi)
        return
    lacking = missing(sweep=bool(args.sweep))
    if lacking:
        print("bench-ocr skipped; missing: " + "; ".join(lacking))
        return
    if args.sweep:
        tmp = Path(tempfile.mkdtemp(prefix="bench-ocr-sweep-"))
        sweep([english(args.questions), chinese(args.questions)], tmp, args.dpi,
              args.per_file, args.sweep)
        shutil.rmtree(tmp, ignore_errors=True)
        return
    import anyio

    from agent_search.embedding import prepare_e5_dir
    from agent_search.kb import prepare_model_dir

    tmp = Path(tempfile.mkdtemp(prefix="bench-ocr-"))
    home = tmp / "home"
    # both models assembled before any clock starts: a user's first ingest does it once
    prepare_model_dir(home, 256)
    prepare_e5_dir(home, 256)
    _record_documents()
    rows: list[Row] = []
    for lang in (english(args.questions), chinese(args.questions)):
        text_dir = tmp / f"{lang.name}-text"
        text_dir.mkdir()
        files = typeset(lang, text_dir, args.per_file)
        label(lang, files)
        unlabelled = [q.qid for q in lang.questions if not q.pages]
        assert not unlabelled, f"passages not found in the text layer: {unlabelled}"
        hits, seconds, pages = anyio.run(ingest_and_ask, home, lang, text_dir,
                                         f"{lang.name.lower()}-text")
        rows.append((lang.name, "text layer", hits, None, seconds / pages,
                     CHILD_CPU[-1] / pages, pages))
        _print(rows[-1:], header=len(rows) == 1)
        reference = [t for f in files for t in page_texts(f)]
        for dpi in args.dpi:
            scan_dir = tmp / f"{lang.name}-{dpi}"
            scan_dir.mkdir()
            scans = [rasterise(f, scan_dir / f.name, dpi) for f in files]
            hits_scan, seconds, pages = anyio.run(ingest_and_ask, home, lang, scan_dir,
                                                  f"{lang.name.lower()}-{dpi}")
            hypothesis = ocr_texts(scans)
            rate = cer(reference, hypothesis, lang.name == "Chinese")
            first = " ".join(reference[0].split())[:70], " ".join(hypothesis[0].split())[:70]
            print(f"{lang.name} {dpi} dpi, page 1: text layer {first[0]!r}\n"
                  f"{' ' * 22}OCR {first[1]!r}", file=sys.stderr)
            rows.append((lang.name, f"scan {dpi} dpi", hits_scan, rate, seconds / pages,
                         CHILD_CPU[-1] / pages, pages))
            _print(rows[-1:], header=False)
    print("\nall rows:")
    _print(rows)
    print(f"load average after each ingest: {min(LOADS):.1f}–{max(LOADS):.1f} on "
          f"{os.cpu_count()} CPUs (wall seconds stretch with it; CPU seconds far less)")
    shutil.rmtree(tmp, ignore_errors=True)


Row = tuple[str, str, dict[str, float], "float | None", float, float, int]
BASE: dict[str, dict[str, float]] = {}


def _print(rows: list[Row], header: bool = True) -> None:
    if header:
        print("| language | version | pages | hit@3 working | hit@3 locked | ratio to text "
              "(working / locked) | CER | ingest s/page (wall) | parse child CPU s/page |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for lang, version, hits, rate, per_page, cpu, pages in rows:
        if rate is None:
            BASE[lang] = hits
        ratio = " / ".join(f"{hits[k] / BASE[lang][k]:.2f}" if BASE[lang][k] else "–"
                           for k in ("working", "locked"))
        print(f"| {lang} | {version} | {pages} | {hits['working']:.2f} | "
              f"{hits['locked']:.2f} | {ratio} | "
              f"{'–' if rate is None else f'{rate:.3f}'} | {per_page:.2f} | {cpu:.2f} |",
              flush=True)


if __name__ == "__main__":
    main()
