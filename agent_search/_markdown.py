"""The one Markdown reader of the package: markdown-it-py's CommonMark parser with tables
(GitHub's pipe tables), for the kb's chunking of documents and grounding's reading of
answers alike, so both agree on what is a heading, a fence, a list or an HTML block by
construction."""

from __future__ import annotations

import functools
from typing import Any


@functools.lru_cache(maxsize=1)
def block_parser() -> Any:
    """The parser (built once; a parse keeps no state in it). Imported on first use:
    only ingest and grounding read Markdown."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")
