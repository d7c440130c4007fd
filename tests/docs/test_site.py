"""The documentation site builds with ``mkdocs build --strict`` (a broken link, a page
left out of the navigation or a bad anchor fails), and the README's own links resolve."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from examples import ROOT, blocks

README = ROOT / "README.md"
_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    mkdocs = Path(sys.executable).parent / "mkdocs"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's end-of-life notice
    done = subprocess.run([str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    # the offline plugin builds page.html files (they work from file://)
    assert (tmp_path / "index.html").is_file() and (tmp_path / "benchmarks.html").is_file()


def test_the_readme_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    for block in blocks(README):  # links inside code blocks are not links
        text = text.replace(block.code, "")
    anchors = {_anchor(h) for h in re.findall(r"^#+\s+(.*)$", text, flags=re.M)}
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not checked offline
        path, _, anchor = target.partition("#")
        if path:
            assert (ROOT / path).exists(), f"README links to a missing file: {target}"
        elif anchor:
            assert anchor in anchors, f"README links to a missing section: {target}"


def test_the_readme_stays_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 340


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces → dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")
