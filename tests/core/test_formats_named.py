"""The file types the README and the chat page name follow the kb's format list
(``agent_search.kb.formats``), never a hand-kept copy: the page's upload picker offers
exactly what the upload route takes, and the README names a suffix of every kind of file
the kb takes and no suffix it does not read."""

from __future__ import annotations

import re
from pathlib import Path

from agent_search.kb import BINARY_SUFFIXES, TEXT_SUFFIXES
from agent_search.kb.formats import SUFFIX_LABELS, SUFFIXES

ROOT = Path(__file__).resolve().parents[2]
UPLOADED = TEXT_SUFFIXES + BINARY_SUFFIXES
"""What ``POST /v1/kb/{collection}/files`` takes."""


def _suffixes(text: str) -> list[str]:
    """Every ``.suffix`` inside a backticked span of ``text``."""
    return [s for span in re.findall(r"`([^`]+)`", text) for s in re.findall(r"\.\w+", span)]


def test_page_upload_offers_what_the_route_takes() -> None:
    page = (ROOT / "agent_search" / "server" / "static" / "index.html").read_text()
    picker = re.search(r'<input id="upload-files"[^>]*\baccept="([^"]*)"', page)
    assert picker is not None, "the page has no upload picker with an accept list"
    assert tuple(picker.group(1).split(",")) == UPLOADED


def test_readme_names_every_kind_of_file_the_kb_takes() -> None:
    readme = (ROOT / "README.md").read_text()
    intro = next(p for p in readme.split("\n\n") if "ingest in a bounded parser" in p)
    named = _suffixes(intro)
    assert [s for s in named if s not in SUFFIXES] == []
    kinds = {SUFFIX_LABELS[s] for s in UPLOADED}
    assert sorted(kinds - {SUFFIX_LABELS[s] for s in named}) == []


def test_suffixes_in_backticks_are_found() -> None:
    assert _suffixes("reads `.txt .md` and `.pdf`, not .doc") == [".txt", ".md", ".pdf"]
