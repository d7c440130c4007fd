"""The file formats the kb reads (text, Markdown, CSV, HTML, PDF, office files, and
images read by OCR), in one table: each suffix's reader, whether a
third-party parser takes it whole (then the ingest runs it in a child process with a
deadline, :mod:`agent_search.kb._ingest._sandbox`), how the HTTP service takes it (as text
in a JSON body, or as a file it parses) and the bytes a file of it starts with.

Everything that asks "which files?" derives its answer from :data:`FORMATS`: the folder
walk (:func:`iter_files`), the dispatch (:func:`load_file`), the sandbox's choice, the
upload checks of the service and of the CLI's ``--server`` upload, the model choice's
sample. A new format is one row here and its reader (as httpx's ``SUPPORTED_DECODERS``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Literal

from agent_search._text import path_text
from agent_search.kb._ingest import _loaders, _ocr, _office
from agent_search.kb._ingest._document import Document, Limits, ParseLimit, Skipped, TextTooLarge

Reader = Callable[[Path, str, Limits], "Iterator[Document | Skipped] | Document"]
"""``(path, source, limits)`` → the documents as the file is read (streamed), or the one
document of a file parsed whole."""


@dataclass(frozen=True, slots=True)
class Format:
    """How one kind of file is read, and taken from a client."""

    read: Reader
    parsed: bool = False
    """Parsed whole by a third-party parser (its reader returns one document): in the
    ingest's child process, within :class:`Limits`."""
    upload: Literal["text", "file"] | None = None
    """How the HTTP service takes it: as text in a JSON body (and as a file), as a file
    only (parsed there), or not at all."""
    magic: bytes | tuple[bytes, ...] | None = None
    """The first bytes of every file of it (or one of several); ``None``: text (a NUL byte
    is refused)."""


def _office_reader(load: Callable[[Path, str, str, Limits], Document]) -> Reader:
    """An office loader, which takes the document id, as a reader."""
    def read(path: Path, source: str, limits: Limits) -> Document:
        return load(path, source, _loaders.file_doc_id(source), limits)

    return read


_ZIP = b"PK\x03\x04"
_TEXT = Format(_loaders.read_text, upload="text")
_MARKDOWN = Format(partial(_loaders.read_text, markdown=True), upload="text")
_HTML = Format(_loaders.parse_html, parsed=True, upload="text")

FORMATS: dict[str, Format] = {
    ".txt": _TEXT,
    ".md": _MARKDOWN,
    ".markdown": _MARKDOWN,
    ".csv": Format(_loaders.read_csv, upload="text"),
    ".html": _HTML,
    ".htm": _HTML,
    ".jsonl": Format(_loaders.read_jsonl),  # a BEIR corpus: one document per line
    ".pdf": Format(partial(_loaders.parse_pdf, scans=_ocr.Scans), parsed=True, upload="file",
                   magic=b"%PDF-"),
    ".docx": Format(_office_reader(_office.load_docx), parsed=True, upload="file", magic=_ZIP),
    ".pptx": Format(_office_reader(_office.load_pptx), parsed=True, upload="file", magic=_ZIP),
    ".xlsx": Format(_office_reader(_office.load_xlsx), parsed=True, upload="file", magic=_ZIP),
    # scans and photos of pages, read by OCR (the extra agent-searchkit[ocr])
    **{suffix: Format(_ocr.read_image, parsed=True, upload="file", magic=magic)
       for suffix, magic in _ocr.IMAGE_MAGIC.items()},
}
"""Suffix (lower case) → format. A file of another suffix named directly is read as
text by :func:`load_file` (an upload without a suffix), and skipped by a folder walk."""

SUPPORTED_SUFFIXES = tuple(FORMATS)
PARSED_SUFFIXES = tuple(s for s, f in FORMATS.items() if f.parsed)
"""Files parsed whole by a third-party parser: in a child process with a deadline."""
TEXT_SUFFIXES = tuple(s for s, f in FORMATS.items() if f.upload == "text")
"""Taken as text by the HTTP service (``POST /v1/kb/{collection}/documents``)."""
BINARY_SUFFIXES = tuple(s for s, f in FORMATS.items() if f.upload == "file")
"""Taken only as files by the HTTP service, which parses them."""
MAGIC = {s: f.magic for s, f in FORMATS.items() if f.magic is not None}
"""Suffix → the bytes a file of it must start with (or a tuple of choices: TIFF)."""
IMAGE_SUFFIXES = tuple(_ocr.IMAGE_MAGIC)
"""Images, read by OCR (:mod:`agent_search.kb._ingest._ocr`)."""


def format_of(path: Path) -> Format:
    """The format of ``path`` by its suffix; text for an unknown one."""
    return FORMATS.get(path.suffix.lower(), _TEXT)


def is_text(path: Path) -> bool:
    """True for a file whose first bytes are its text (not a binary container)."""
    return path.suffix.lower() in FORMATS and FORMATS[path.suffix.lower()].magic is None


def iter_files(paths: list[Path]) -> Iterator[Path | Skipped]:
    """Files to ingest under ``paths`` (folders walked, sorted); others reported."""
    for path in paths:
        if path.is_dir():
            for child in sorted(p for p in path.rglob("*") if p.is_file()):
                if any(part.startswith(".") for part in child.relative_to(path).parts):
                    continue
                if child.suffix.lower() in FORMATS:
                    yield child
        elif path.is_file():
            if path.suffix.lower() in FORMATS:
                yield path
            else:
                yield Skipped(str(path), f"unsupported file type {path.suffix or '(none)'!r}")
        else:
            yield Skipped(str(path), "no such file or folder")


def _cannot_read(exc: BaseException) -> str:
    return f"cannot read: {getattr(exc, 'strerror', None) or exc}"


_SKIP_REASONS: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...],
                           Callable[[BaseException], str]], ...] = (
    (UnicodeDecodeError, lambda exc: "not UTF-8 text"),
    ((TextTooLarge, ParseLimit, _ocr.OcrUnavailable), str),
    (OSError, _cannot_read),
    (MemoryError, lambda exc: "cannot parse: out of memory (kb.max_parse_memory_mb)"),
    (RecursionError, lambda exc: "cannot parse: nested too deeply"),
)
"""Why a file is skipped, by the error its reader raised (first match)."""


def skip_reason(exc: BaseException) -> str:
    """The one-line reason a file that raised ``exc`` is skipped; for any other error, a
    parser's own on a corrupt file, its name and first line."""
    for kinds, reason in _SKIP_REASONS:
        if isinstance(exc, kinds):
            return reason(exc)
    return f"cannot parse: {type(exc).__name__}: {exc}".splitlines()[0]


def load_file(path: Path, key: str | None = None, *, max_chars: int = 20_000_000,
              limits: Limits | None = None) -> Iterator[Document | Skipped]:
    """Documents in ``path`` named by ``key`` (default: the path as given); a reading
    problem becomes one :class:`Skipped`. Text and Markdown blocks are produced lazily as
    the document is consumed, after the whole file was checked to be UTF-8. Files of
    :data:`PARSED_SUFFIXES` are parsed whole within ``limits``; the ingest calls this for
    them in a child process (:mod:`agent_search.kb._ingest._sandbox`)."""
    source = key if key is not None else path_text(str(path))
    limits = limits if limits is not None else Limits(max_chars=max_chars)
    try:
        read = format_of(path).read(path, source, limits)
        if not isinstance(read, Document):
            yield from read
            return
    except Exception as exc:  # MemoryError and RecursionError are Exceptions too
        yield Skipped(str(path), skip_reason(exc))
        return
    yield from _loaders.finished(read, path)
