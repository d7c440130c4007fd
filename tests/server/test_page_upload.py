"""The chat page's upload control in Debian's Chromium (issue 24 item 3): files picked in
the page reach the chosen collection, owned by the key the page uses, under the page's
strict CSP (no page error, no CSP violation); a refused file shows the server's
reason. Skipped (failing under CI) without Chromium, as tests/server/test_page.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from playwright.sync_api import Page, sync_playwright

from agent_search.kb import list_documents
from agent_search.server import Service
from tests.support.http_service import KEYS, serve_with_kb, write_project
from tests.support.page_flow import CHROMIUM, CHROMIUM_ARGS, require_chromium


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Service]]:
    require_chromium()
    root = tmp_path_factory.mktemp("page-upload")
    cdir, adir = write_project(root, assistants={
        "offline": {"name": "Offline", "kb": {"collections": ["handbook"]}}})
    yield from serve_with_kb(root, cdir, adir)


def _open(page: Page, url: str) -> None:
    page.goto(url + "/")
    page.get_by_label("API key").fill(KEYS["bob"])
    page.get_by_role("button", name="Use key").click()
    page.get_by_label("Assistant").select_option("offline")


def test_files_picked_in_the_page_reach_the_collection(served: tuple[str, Service],
                                                        tmp_path: Path) -> None:
    url, service = served
    notes = tmp_path / "garden.md"
    notes.write_text("# Garden\n\nWater the tomatoes at dawn.\n")
    fake = tmp_path / "slides.pdf"
    fake.write_bytes(b"<html>not a pdf</html>")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            problems: list[str] = []
            page.on("pageerror", lambda e: problems.append(str(e)))
            # refused requests (401 before the key, the 415 below) are logged as failed
            # loads; anything else logged as an error (a CSP violation) is a problem
            page.on("console", lambda m: problems.append(m.text)
                    if m.type == "error" and "Failed to load resource" not in m.text
                    else None)
            _open(page, url)
            collection = page.get_by_label("Collection")
            assert collection.input_value() == "handbook"  # the assistant's collection
            page.get_by_label("Add files to the knowledge base").set_input_files(str(notes))
            page.get_by_role("button", name="Upload").click()
            status = page.locator("#upload-status")
            status.filter(has_text="in handbook").wait_for(timeout=60_000)
            shown = status.inner_text()

            page.get_by_label("Add files to the knowledge base").set_input_files(str(fake))
            page.get_by_role("button", name="Upload").click()
            status.filter(has_text="refused").wait_for(timeout=60_000)
            refused = status.inner_text()
            refused_class = status.get_attribute("class") or ""
        finally:
            browser.close()
    assert "1 document in handbook: chunks added 1" in shown
    assert "415" in refused and "slides.pdf" in refused and "error" in refused_class
    assert not problems
    docs = anyio.run(lambda: list_documents(service.searcher.config, "handbook"))
    assert [(d["source"], d["owner"]) for d in docs] == [("upload:garden.md", "bob")]
