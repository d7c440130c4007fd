"""The file types the kb reads, by name only: what help texts, error messages and docs
list, without loading a reader.

The ingest's format table (``FORMATS`` in :mod:`agent_search.kb._ingest`) says how each
suffix is read; importing it loads the readers and their parsers' modules, which a
command's ``--help`` should not pay for. This module is the table's names: the same
suffixes in the same order (a test holds the two equal), grouped under the label a user
knows them by. A new format is a row in both.
"""

from __future__ import annotations

SUFFIX_LABELS: dict[str, str] = {
    ".txt": "text",
    ".md": "Markdown",
    ".markdown": "Markdown",
    ".csv": "CSV",
    ".html": "HTML",
    ".htm": "HTML",
    ".jsonl": "BEIR corpus",
    ".pdf": "PDF (text layer)",
    ".docx": "Word",
    ".pptx": "PowerPoint",
    ".xlsx": "Excel",
    ".png": "scans read by OCR",
    ".jpg": "scans read by OCR",
    ".jpeg": "scans read by OCR",
    ".tif": "scans read by OCR",
    ".tiff": "scans read by OCR",
    ".webp": "scans read by OCR",
}
"""Suffix (lower case) → the kind of file it is, in the format table's order."""

SUFFIXES: tuple[str, ...] = tuple(SUFFIX_LABELS)
"""Every suffix the ingest reads (a folder walk takes only these)."""


def describe(suffixes: tuple[str, ...] = SUFFIXES) -> str:
    """``suffixes`` grouped by kind, for a help text or an error:
    ``text .txt, Markdown .md .markdown, ...``; a suffix outside the table stands alone."""
    groups: dict[str, list[str]] = {}
    for suffix in suffixes:
        groups.setdefault(SUFFIX_LABELS.get(suffix, suffix), []).append(suffix)
    return ", ".join(f"{label} {' '.join(group)}" if label not in group else label
                     for label, group in groups.items())


__all__ = ["SUFFIXES", "SUFFIX_LABELS", "describe"]
