"""Markdown comes back as its author wrote it (issue 34 items 2 and 3): code blocks keep
their lines, blank lines and indentation, are never cut in two unless one alone is over a
chunk (then on line boundaries, the fence reopened with its info string); a page's title
is its front matter's ``title``, else its first H1, else its file name, and its heading
path is its own headings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_search import SearchConfig
from agent_search.kb import ingest_paths
from agent_search.kb._ingest import Document, approx_tokens, load_file
from agent_search.kb._ingest._chunking import chunk_document
from agent_search.kb._ingest._loaders import markdown_blocks
from agent_search.kb._ingest._markdown import code_block, heading, markdown_title
from agent_search.kb._store import get_store, scroll_all
from agent_search.kb.settings import KBSettings

CODE = ("```python\n"
        "def raise_on_4xx_5xx(response):\n"
        "    response.raise_for_status()\n"
        "\n"
        "client = httpx.Client(event_hooks={'response': [raise_on_4xx_5xx]})\n"
        "```")

PAGE = f"""## Event hooks

HTTPX lets you register hooks that are called on every request and response.

{CODE}

## Mock transports

During testing it can be useful to mock out the transport.
"""


def _doc(text: str, name: str = "page.md") -> Document:
    return Document("d", name, None, markdown_blocks(text))


def _fences(text: str) -> list[str]:
    return re.findall(r"^(?:```|~~~).*$", text, flags=re.MULTILINE)


def test_a_code_block_is_one_block_as_written() -> None:
    blocks = markdown_blocks(PAGE)
    assert [b.text for b in blocks if b.text.startswith("```")] == [CODE]
    assert blocks[1].headings == ("Event hooks",)
    chunks = chunk_document(_doc(PAGE), approx_tokens, max_tokens=256)
    assert any(CODE in c.text for c in chunks)  # newlines, indentation, blank line kept


def test_lists_and_tables_keep_their_lines() -> None:
    text = "# T\n\n- one\n- two\n  - nested\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    assert [b.text for b in markdown_blocks(text)] == [
        "- one\n- two\n  - nested", "| a | b |\n|---|---|\n| 1 | 2 |"]


def test_fences_close_only_on_their_own_marks() -> None:
    text = "~~~md\n```python\nx = 1\n```\n\n# not a heading\n~~~\n\n# Real\n\nafter\n"
    blocks = markdown_blocks(text)
    assert blocks[0].text == "~~~md\n```python\nx = 1\n```\n\n# not a heading\n~~~"
    assert blocks[1].headings == ("Real",)
    four = "````\n```\ninner\n```\n````"
    assert [b.text for b in markdown_blocks(four)] == [four]


def test_an_unclosed_fence_runs_to_the_end_and_is_closed() -> None:
    (block,) = markdown_blocks("```sh\nmake install\n\nmake test\n")
    assert block.text == "```sh\nmake install\n\nmake test\n```"
    assert code_block(block.text) is not None


def test_chunks_never_cut_a_fence_that_fits() -> None:
    prose = " ".join(f"Sentence {i} about transports and hooks." for i in range(30))
    parts = []
    for i in range(12):
        parts += [prose, f"```python\ndef f{i}(x):\n    return x + {i}\n\n\nprint(f{i}(1))\n```"]
    text = "# Guide\n\n" + "\n\n".join(parts)
    chunks = chunk_document(_doc(text), approx_tokens, max_tokens=128, overlap=16)
    for chunk in chunks:
        assert len(_fences(chunk.text)) % 2 == 0, chunk.text
    for i in range(12):
        block = f"```python\ndef f{i}(x):\n    return x + {i}\n\n\nprint(f{i}(1))\n```"
        assert any(block in c.text for c in chunks), i


def test_a_code_block_over_a_chunk_is_cut_on_lines_and_reopened() -> None:
    lines = [f"    let value{i} = compute({i}, 'argument');" for i in range(200)]
    text = "# Big\n\n```js title=\"app.js\"\n" + "\n".join(lines) + "\n```\n\nafter\n"
    chunks = chunk_document(_doc(text), approx_tokens, max_tokens=128, overlap=16)
    code = [c.text for c in chunks if c.text.startswith("```")]
    assert len(code) > 3
    body: list[str] = []
    for part in code:
        head, *inner, tail = part.split("\n\n")[0].split("\n")
        assert head == '```js title="app.js"' and tail == "```"
        assert approx_tokens([part.split("\n\n")[0]])[0] <= 128
        body += inner
    assert body == lines  # every line whole, in order, indentation kept


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(1, 60)), min_size=1, max_size=12),
       st.integers(48, 300))
def test_every_chunk_is_balanced_and_code_lines_survive(
        layout: list[tuple[bool, int]], max_tokens: int) -> None:
    parts, code_lines = [], []
    for n, (is_code, size) in enumerate(layout):
        if is_code:
            lines = [f"  x{n}_{i} = f({i})" for i in range(size)]
            code_lines += lines
            parts.append("```py\n" + "\n".join(lines) + "\n```")
        else:
            parts.append(" ".join(f"Word{n}x{i}." for i in range(size)))
    doc = _doc("# Page\n\n" + "\n\n".join(parts))
    chunks = chunk_document(doc, approx_tokens, max_tokens=max_tokens,
                            overlap=min(16, max_tokens // 4))
    seen = set()
    for chunk in chunks:
        assert len(_fences(chunk.text)) % 2 == 0, chunk.text
        seen.update(line for line in chunk.text.split("\n") if line.startswith("  x"))
    assert seen == set(code_lines)


# -- titles (issue 34 item 3) ------------------------------------------------------------


def test_the_title_is_front_matter_then_the_first_h1_never_an_h2() -> None:
    assert markdown_title('---\nlayout: page\ntitle: "HTTP Transport"\n---\n# Other\n') \
        == "HTTP Transport"
    assert markdown_title("## Mock transports\n\ntext\n\n# The Guide\n") == "The Guide"
    assert markdown_title("## Mock transports\n\n### Details\n") is None
    assert markdown_title("```\n# a comment\n```\n\nGuide\n=====\n") == "Guide"
    assert heading("# C#") == (1, "C#") and heading("## Done ##") == (2, "Done")
    assert heading("#hashtag") is None


def test_a_page_without_h1_is_named_by_its_file(tmp_path: Path) -> None:
    page = tmp_path / "transports.md"
    page.write_text(PAGE)
    (doc,) = list(load_file(page))
    assert isinstance(doc, Document) and doc.title == "transports"
    chunks = chunk_document(doc, approx_tokens)
    assert {c.headings for c in chunks} == {("Event hooks",), ("Mock transports",)}


def test_front_matter_is_metadata_not_text(tmp_path: Path) -> None:
    page = tmp_path / "hooks.md"
    page.write_text("---\ntitle: Event hooks\ntags: [http]\n---\n\nHooks run on requests.\n")
    (doc,) = list(load_file(page))
    assert isinstance(doc, Document) and doc.title == "Event hooks"
    assert [b.text for b in doc.blocks] == ["Hooks run on requests."]
    unclosed = tmp_path / "rule.md"
    unclosed.write_text("---\n\nA page that starts with a rule.\n")
    (doc,) = list(load_file(unclosed))
    assert isinstance(doc, Document)
    assert "A page that starts with a rule." in [b.text for b in doc.blocks]


@pytest.mark.anyio
async def test_ingested_chunks_keep_code_and_the_right_title(config: SearchConfig,
                                                            tmp_path: Path) -> None:
    page = tmp_path / "transports.md"
    page.write_text(PAGE)
    report = await ingest_paths(config, [page], "md")
    assert report.skipped == []
    store = get_store(KBSettings.from_config(config), config.home)
    payloads = [r.payload for r in scroll_all(store, "md")]
    assert {p["title"] for p in payloads} == {"transports"}
    assert any(CODE in str(p["content"]) for p in payloads)
