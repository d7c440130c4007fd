"""Reading files into documents: .txt, .md, .html/.htm, .pdf (text layer) and BEIR
``corpus.jsonl`` (one document per line).

A document is a title and a list of blocks (paragraphs) each under a heading path, so the
chunker can keep sections together. A file that cannot be read yields a :class:`Skipped`
with the reason; the caller reports it and goes on with the rest.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

SUPPORTED_SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm", ".pdf", ".jsonl")

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(slots=True)
class Block:
    text: str
    headings: tuple[str, ...] = ()
    page: int | None = None


@dataclass(slots=True)
class Document:
    doc_id: str
    source: str
    title: str | None
    blocks: list[Block] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Skipped:
    source: str
    reason: str


def file_doc_id(path: Path) -> str:
    """A stable id for a file: derived from its absolute path."""
    return hashlib.sha1(str(path.resolve()).encode("utf-8")).hexdigest()[:16]


def iter_files(paths: list[Path]) -> Iterator[Path | Skipped]:
    """Files to ingest under ``paths`` (folders walked, sorted); others reported."""
    for path in paths:
        if path.is_dir():
            for child in sorted(p for p in path.rglob("*") if p.is_file()):
                if any(part.startswith(".") for part in child.relative_to(path).parts):
                    continue
                if child.suffix.lower() in SUPPORTED_SUFFIXES:
                    yield child
        elif path.is_file():
            if path.suffix.lower() in SUPPORTED_SUFFIXES:
                yield path
            else:
                yield Skipped(str(path), f"unsupported file type {path.suffix or '(none)'!r}")
        else:
            yield Skipped(str(path), "no such file or folder")


def load_file(path: Path) -> Iterator[Document | Skipped]:
    """Documents in ``path``; a reading problem becomes one :class:`Skipped`."""
    suffix = path.suffix.lower()
    try:
        if suffix == ".jsonl":
            yield from _load_jsonl(path)
            return
        if suffix == ".pdf":
            doc = _load_pdf(path)
        else:
            text = path.read_text(encoding="utf-8-sig", errors="strict")
            if suffix in (".html", ".htm"):
                doc = _load_html(path, text)
            elif suffix in (".md", ".markdown"):
                doc = Document(file_doc_id(path), str(path), None, markdown_blocks(text))
            else:
                doc = Document(file_doc_id(path), str(path), None, _paragraphs(text, ()))
    except UnicodeDecodeError:
        yield Skipped(str(path), "not UTF-8 text")
        return
    except OSError as exc:
        yield Skipped(str(path), f"cannot read: {exc.strerror or exc}")
        return
    except Exception as exc:  # a parser's own error on a corrupt file
        yield Skipped(str(path), f"cannot parse: {type(exc).__name__}: {exc}".splitlines()[0])
        return
    if doc.title is None:
        doc.title = _first_heading(doc) or path.stem
    if not any(b.text.strip() for b in doc.blocks):
        yield Skipped(str(path), "no text")
        return
    yield doc


def _first_heading(doc: Document) -> str | None:
    for block in doc.blocks:
        if block.headings:
            return block.headings[0]
    return None


def _paragraphs(text: str, headings: tuple[str, ...], page: int | None = None) -> list[Block]:
    parts = re.split(r"\n\s*\n", text.replace("\r\n", "\n"))
    return [Block(" ".join(p.split()), headings, page) for p in parts if p.strip()]


def markdown_blocks(text: str) -> list[Block]:
    """Paragraphs of a Markdown text with the heading path they sit under."""
    blocks: list[Block] = []
    path: list[str] = []
    buf: list[str] = []
    in_fence = False

    def flush() -> None:
        if buf:
            blocks.extend(_paragraphs("\n".join(buf), tuple(path)))
            buf.clear()

    for line in text.replace("\r\n", "\n").split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
            buf.append(line)
            continue
        heading = None if in_fence else _HEADING.match(line)
        if heading:
            flush()
            level = len(heading.group(1))
            del path[level - 1:]
            path.extend([""] * (level - 1 - len(path)))
            path.append(heading.group(2))
        else:
            buf.append(line)
    flush()
    for b in blocks:
        b.headings = tuple(h for h in b.headings if h)
    return blocks


def _load_html(path: Path, html: str) -> Document:
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
    return Document(file_doc_id(path), str(path), title, blocks)


def _load_pdf(path: Path) -> Document:
    from pypdf import PdfReader

    reader = PdfReader(str(path))
    if reader.is_encrypted:
        try:
            reader.decrypt("")
        except Exception:
            raise ValueError("the PDF is encrypted") from None
    title = None
    if reader.metadata is not None and reader.metadata.title:
        title = str(reader.metadata.title)
    blocks: list[Block] = []
    for number, page in enumerate(reader.pages, start=1):
        blocks.extend(_paragraphs(page.extract_text() or "", (), number))
    return Document(file_doc_id(path), str(path), title, blocks)


def _load_jsonl(path: Path) -> Iterator[Document | Skipped]:
    """BEIR corpus lines ``{"_id", "title", "text"}``; a bad line is reported, not fatal."""
    with path.open(encoding="utf-8-sig") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                yield Skipped(where, f"invalid JSON: {exc.msg}")
                continue
            if not isinstance(row, dict) or "_id" not in row:
                yield Skipped(where, "not a BEIR corpus record (needs '_id')")
                continue
            text = str(row.get("text") or "").strip()
            title = str(row.get("title") or "").strip() or None
            if not text and not title:
                yield Skipped(where, "no text")
                continue
            yield Document(str(row["_id"]), str(path), title, [Block(text or title or "")])
