"""The chat page driven by a real browser (Debian's Chromium through Playwright) against
the demo assistant and the demo's sample shop database: shared by the page test and by
the README screenshot script (``python -m tests.support.page_flow docs/chat-page.png``,
from the project root)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[2]
# Debian's Chromium (installed by .ci/chromium.sh); AGENT_SEARCH_TEST_CHROMIUM points the
# page tests at another binary (or at a missing one, to see the skip for real).
CHROMIUM = os.environ.get("AGENT_SEARCH_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
QUESTION = "Which products under $50 are in stock?"


def require_chromium() -> None:
    """Skip the calling test, with the reason in pytest's summary, when the browser is
    missing; under CI (``CI=true``) fail instead: there nothing may be skipped for it."""
    import pytest

    if Path(CHROMIUM).is_file():
        return
    message = f"{CHROMIUM} is missing (install it with .ci/chromium.sh, as root)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message + " (CI=true: the page tests must run)")
    pytest.skip(message)


@contextmanager
def demo_server(home: Path, *, with_docs: bool = False) -> Iterator[str]:
    """The repo's config and assistants served on 127.0.0.1, with the sample shop
    database generated under ``home``. The kb 'docs' collection (the project's docs/) is
    built only ``with_docs``: it needs the embedding model, too slow for the test, where
    the kb search then shows as a failed search."""
    import os

    from agent_search.db.sample import create_sample_database_async
    from agent_search.server import Service, ServiceOptions, create_app

    from .http_service import ThreadedServer

    home.mkdir(parents=True, exist_ok=True)
    if not (home / "agent.db").exists():
        anyio.run(create_sample_database_async, home / "agent.db")
    old = os.environ.get("AGENT_SEARCH_HOME")
    os.environ["AGENT_SEARCH_HOME"] = str(home)
    try:
        if with_docs:
            from agent_search.kb import ingest_paths
            from agent_search.loader import load_config

            config = load_config(ROOT / "config")
            anyio.run(ingest_paths, config, [ROOT / "docs"], "docs")
        service = Service.load(ServiceOptions(config_dir=ROOT / "config",
                                              assistants_dir=ROOT / "assistants"))
    finally:
        if old is None:
            os.environ.pop("AGENT_SEARCH_HOME", None)
        else:
            os.environ["AGENT_SEARCH_HOME"] = old
    server = ThreadedServer(create_app(service)).start()
    try:
        yield server.url
    finally:
        server.stop()


def ask_and_open_citation(page: Any, url: str, question: str = QUESTION) -> dict[str, str]:
    """Load the page, pick the demo assistant, ask, wait for the answer, click the first
    citation; returns what the reference panel shows."""
    page.goto(url + "/")
    page.get_by_label("Assistant").select_option("demo")
    page.get_by_label("Your question").fill(question)
    page.keyboard.press("Enter")
    page.locator(".search.done, .search.failed").first.wait_for(timeout=20_000)
    page.get_by_text("Done.").wait_for(timeout=30_000)
    cite = page.locator("button.cite").first
    cite.click()
    panel = page.locator("#panel")
    panel.wait_for(state="visible", timeout=5_000)
    return {"title": page.locator("#ref-title").inner_text(),
            "source": page.locator("#ref-source").inner_text(),
            "content": page.locator("#ref-content").inner_text(),
            "url": page.locator("#ref-url").inner_text(),
            "searches": "\n".join(page.locator(".search").all_inner_texts()),
            "answer": page.locator(".answer").first.inner_text(),
            "focused": str(page.evaluate("document.activeElement && document.activeElement.id"))}


def main(out: str) -> None:
    import tempfile

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, \
            demo_server(Path(tmp) / "home", with_docs=True) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 760})
        ask_and_open_citation(page, url, "How are citation ids kept unique across hooks "
                                         "and auto search?")
        page.screenshot(path=out)
        browser.close()
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "docs" / "chat-page.png"))
