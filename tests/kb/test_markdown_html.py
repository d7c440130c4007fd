"""Markdown is read as Markdown: HTML comments, raw HTML tags and front matter are not
text of the page (they were indexed and quoted in answers), code keeps everything, and
the kb's reader is the parser grounding reads answers with."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_search import SearchConfig
from agent_search._markdown import block_parser
from agent_search.kb import ingest_paths
from agent_search.kb._ingest import Document, load_file
from agent_search.kb._ingest._loaders import markdown_blocks
from agent_search.kb._store import get_store, scroll_all
from agent_search.kb.settings import KBSettings

PAGE = """---
title: Deploying
draft: true
---

# Deploying <!-- TODO rename -->

<!-- Editors: keep this page in sync with the release checklist.

Internal ticket OPS-4711 tracks it. -->

Run the `<div>` check, then deploy.<br>
Press <kbd>Ctrl</kbd>+<kbd>C</kbd> to stop. <!-- see OPS-4712 -->

<div align="center">
  <img src="diagram.png" alt="">
</div>

<p align="center">The release train leaves every Tuesday.</p>

```html
<!-- this comment is code -->
<div>kept</div>
```
"""


def _texts(text: str) -> list[str]:
    return [b.text for b in markdown_blocks(text)]


def test_comments_tags_and_front_matter_are_not_page_text() -> None:
    texts = _texts(PAGE)
    joined = "\n".join(texts)
    assert "OPS-471" not in joined and "Editors" not in joined and "draft" not in joined
    assert "<br>" not in joined and "<kbd>" not in joined and "<img" not in joined
    assert "Run the `<div>` check, then deploy." in joined  # a code span is text
    assert "Press Ctrl+C to stop." in joined
    assert "The release train leaves every Tuesday." in texts  # what a reader sees
    assert "```html\n<!-- this comment is code -->\n<div>kept</div>\n```" in texts
    headings = {b.headings for b in markdown_blocks(PAGE)}
    assert headings == {("Deploying",)}


def test_a_comment_alone_or_across_blank_lines_leaves_nothing() -> None:
    assert _texts("<!-- a\n\nb -->\n") == []
    assert _texts("# T\n\n<!--\nhidden\n-->\n\nshown\n") == ["shown"]


def test_a_long_page_is_read_in_segments_with_the_same_blocks() -> None:
    para = "A sentence about caching keys. " * 20
    parts = [f"## Part {i}\n\n{para}\n\n<!-- note {i}\n\nstill a note -->\n\n"
             f"```sh\nstep {i}\n\nstep {i} again\n```" for i in range(400)]
    blocks = markdown_blocks("# Guide\n\n" + "\n\n".join(parts))
    assert len(blocks) == 800
    assert not any("note" in b.text for b in blocks)
    assert blocks[-1].text == "```sh\nstep 399\n\nstep 399 again\n```"
    assert blocks[-1].headings == ("Guide", "Part 399")


def test_one_reader_for_chunking_and_grounding() -> None:
    # the kb's blocks follow markdown-it-py's CommonMark: a tilde fence holds a
    # backtick one, an indented "#" line inside a list item is no heading
    text = "~~~\n```\n# no heading\n```\n~~~\n\n- item\n\n      # code in the item\n"
    kinds = [t.type for t in block_parser().parse(text) if t.level == 0 and t.map]
    assert kinds == ["fence", "bullet_list_open"]
    blocks = markdown_blocks(text)
    assert [b.headings for b in blocks] == [(), ()]
    assert blocks[0].text == "~~~\n```\n# no heading\n```\n~~~"


def test_front_matter_title_still_names_the_page(tmp_path: Path) -> None:
    page = tmp_path / "deploy.md"
    page.write_text(PAGE, encoding="utf-8")
    (doc,) = list(load_file(page))
    assert isinstance(doc, Document) and doc.title == "Deploying"


@pytest.mark.anyio
async def test_ingested_chunks_hold_no_comment(config: SearchConfig, tmp_path: Path) -> None:
    page = tmp_path / "deploy.md"
    page.write_text(PAGE, encoding="utf-8")
    report = await ingest_paths(config, [page], "md")
    assert report.skipped == []
    store = get_store(KBSettings.from_config(config), config.home)
    content = "\n".join(str(r.payload["content"]) for r in scroll_all(store, "md"))
    assert "OPS-4711" not in content and "Editors" not in content
    assert "leaves every Tuesday" in content


def test_a_page_without_blank_lines_is_cut_and_a_fence_reopened() -> None:
    from agent_search.kb._ingest._markdown import SEGMENT_CHARS

    line = "x = compute(1, 2)  # a line of code that repeats"
    count = 4 * SEGMENT_CHARS // len(line)
    code = "```py\n" + "\n".join([line] * count) + "\n```"
    blocks = markdown_blocks(f"# Code\n\n{code}\n\nafter <!-- note -->\n")
    fenced = [b.text for b in blocks if b.text.startswith("```py\n")]
    assert len(fenced) >= 2 and all(t.endswith("\n```") for t in fenced)
    assert sum(t.count(line) for t in fenced) == count
    assert blocks[-1].text == "after"
