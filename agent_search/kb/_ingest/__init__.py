"""The kb's ingest parts: files read into documents (text streamed here, PDF, HTML and
office files parsed in a bounded child process), documents cut into chunks, chunks
embedded and written in rounds, and the admission of writes (one collection's turn, a
tenant's share).

Which files it reads, and how, is one table (:data:`FORMATS`).
It builds on :mod:`agent_search.kb._store`; the pipeline that drives it is
:mod:`agent_search.kb.ingest`. Names are imported on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_search._lazy import lazy_exports

if TYPE_CHECKING:
    from agent_search.kb._ingest._admission import (
        IngestBusy,
        WriteTicket,
        reserve_write,
        write_turn,
    )
    from agent_search.kb._ingest._chunking import (
        CHUNKER,
        Chunk,
        TokenCounter,
        approx_tokens,
        embedded_prefix,
        iter_chunks,
    )
    from agent_search.kb._ingest._document import (
        Block,
        Document,
        Limits,
        Skipped,
    )
    from agent_search.kb._ingest._formats import (
        BINARY_SUFFIXES,
        FORMATS,
        IMAGE_SUFFIXES,
        MAGIC,
        PARSED_SUFFIXES,
        SUPPORTED_SUFFIXES,
        TEXT_SUFFIXES,
        Format,
        format_of,
        is_text,
        iter_files,
        load_file,
    )
    from agent_search.kb._ingest._loaders import (
        legacy_file_doc_id,
        source_key,
    )
    from agent_search.kb._ingest._ocr import ocr_workers
    from agent_search.kb._ingest._sandbox import (
        ParseSandbox,
        parse_seconds,
        run_parse_seconds,
    )
    from agent_search.kb._ingest._writer import (
        IngestReport,
        Pending,
        ProgressCallback,
        Writer,
    )

_HOME = {
    "BINARY_SUFFIXES": "_formats",
    "Block": "_document",
    "CHUNKER": "_chunking",
    "Chunk": "_chunking",
    "Document": "_document",
    "FORMATS": "_formats",
    "Format": "_formats",
    "IMAGE_SUFFIXES": "_formats",
    "IngestBusy": "_admission",
    "IngestReport": "_writer",
    "Limits": "_document",
    "MAGIC": "_formats",
    "PARSED_SUFFIXES": "_formats",
    "ParseSandbox": "_sandbox",
    "Pending": "_writer",
    "ProgressCallback": "_writer",
    "SUPPORTED_SUFFIXES": "_formats",
    "Skipped": "_document",
    "TEXT_SUFFIXES": "_formats",
    "TokenCounter": "_chunking",
    "WriteTicket": "_admission",
    "Writer": "_writer",
    "approx_tokens": "_chunking",
    "embedded_prefix": "_chunking",
    "format_of": "_formats",
    "is_text": "_formats",
    "iter_chunks": "_chunking",
    "iter_files": "_formats",
    "legacy_file_doc_id": "_loaders",
    "load_file": "_formats",
    "ocr_workers": "_ocr",
    "parse_seconds": "_sandbox",
    "reserve_write": "_admission",
    "run_parse_seconds": "_sandbox",
    "source_key": "_loaders",
    "write_turn": "_admission",
}
"""Where each name lives: imported on first use."""

__getattr__, __dir__ = lazy_exports(__name__, _HOME)

__all__ = [
    "BINARY_SUFFIXES",
    "CHUNKER",
    "FORMATS",
    "IMAGE_SUFFIXES",
    "MAGIC",
    "PARSED_SUFFIXES",
    "SUPPORTED_SUFFIXES",
    "TEXT_SUFFIXES",
    "Block",
    "Chunk",
    "Document",
    "Format",
    "IngestBusy",
    "IngestReport",
    "Limits",
    "ParseSandbox",
    "Pending",
    "ProgressCallback",
    "Skipped",
    "TokenCounter",
    "WriteTicket",
    "Writer",
    "approx_tokens",
    "embedded_prefix",
    "format_of",
    "is_text",
    "iter_chunks",
    "iter_files",
    "legacy_file_doc_id",
    "load_file",
    "ocr_workers",
    "parse_seconds",
    "reserve_write",
    "run_parse_seconds",
    "source_key",
    "write_turn",
]
