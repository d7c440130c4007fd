"""The documentation site builds with ``mkdocs build --strict`` (a broken link, a page
left out of the navigation or a bad anchor fails), and the README's own links resolve."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ..support.doc_examples import ROOT, blocks

README = ROOT / "README.md"
_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The site, built once for this module: its folder and the build's stderr."""
    out = tmp_path_factory.mktemp("site")
    mkdocs = Path(sys.executable).parent / "mkdocs"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's end-of-life notice
    done = subprocess.run([str(mkdocs), "build", "--strict", "--site-dir", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return out, done.stderr


def test_the_site_builds_strictly_and_quietly(site: tuple[Path, str]) -> None:
    out, stderr = site
    # the offline plugin builds page.html files (they work from file://)
    assert (out / "index.html").is_file() and (out / "benchmarks.html").is_file()
    # jieba (Material's search segments the Chinese examples with it) says nothing
    assert "prefix dict" not in stderr and "Loading model" not in stderr, stderr


_FETCHED = re.compile(r"<(?:script|img|iframe|source)\b[^>]*\bsrc=[\"']?(?P<a>[^\"' >]+)"
                      r"|<link\b[^>]*\bhref=[\"']?(?P<b>[^\"' >]+)", re.IGNORECASE)


def test_the_offline_site_names_nothing_to_fetch_from_the_network(
        site: tuple[Path, str]) -> None:
    """Scripts, styles, icons and images of every page are the site's own files: the
    offline plugin used to add https://unpkg.com/iframe-worker/shim to every page."""
    out, _ = site
    pages = sorted(out.rglob("*.html"))
    assert len(pages) > 10
    for page in pages:
        for m in _FETCHED.finditer(page.read_text(encoding="utf-8")):
            target = m["a"] or m["b"]
            assert not re.match(r"(?:https?:)?//", target), f"{page.name} fetches {target}"


def _chromium() -> str:
    """Debian's Chromium; a skip without it, a failure under CI (where it is installed)."""
    path = os.environ.get("AGENT_SEARCH_TEST_CHROMIUM", "/usr/bin/chromium")
    if not Path(path).is_file():
        message = f"{path} is missing (install it with .ci/chromium.sh, as root)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + " (CI=true: the browser tests must run)")
        pytest.skip(message)
    return path


def test_search_works_from_file_urls_and_fetches_nothing(site: tuple[Path, str]) -> None:
    """The docs say the site's search works from file://: it does, in a real browser,
    and no request leaves the file system (the page, its search worker, the index)."""
    from playwright.sync_api import sync_playwright

    out, _ = site
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(),
                                    args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 800})
            requests: list[str] = []
            page.on("request", lambda r: requests.append(r.url))
            page.goto((out / "index.html").as_uri())
            box = page.locator("input[data-md-component=search-query]")
            box.click()
            box.press_sequentially("citation", delay=30)
            meta = page.locator(".md-search-result__meta")
            meta.filter(has_text="matching document").wait_for(timeout=30_000)
            assert page.locator(".md-search-result__item").count() > 0
        finally:
            browser.close()
    assert requests and all(u.startswith("file:") for u in requests), [
        u for u in requests if not u.startswith("file:")]


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
