"""The chat page sends the conversation so far, so a follow-up typed on the page is read
in context as over the API; another assistant starts a new conversation. Chromium as in
``test_page.py`` (skipped without it, failing under CI)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import sync_playwright

from tests.support.http_service import KEYS
from tests.support.page_flow import CHROMIUM, CHROMIUM_ARGS, require_chromium
from tests.support.service_api import Running


@pytest.fixture
def chromium() -> str:
    require_chromium()
    return CHROMIUM


pytestmark = pytest.mark.usefixtures("chromium")


def ask(page: Any, question: str, turn: int) -> None:
    page.get_by_label("Your question").fill(question)
    page.get_by_role("button", name="Ask").click()
    page.locator(".question").nth(turn).wait_for(timeout=20_000)
    page.get_by_text("Done.").wait_for(timeout=20_000)


def test_a_follow_up_on_the_page_is_read_in_context(running: Running) -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(running.url + "/")
            page.get_by_label("API key").fill(KEYS["bob"])
            page.get_by_role("button", name="Use key").click()
            page.get_by_label("Assistant").select_option("offline")
            ask(page, "How do I stream a response body?", 0)
            ask(page, "And asynchronously?", 1)
            carried = running.handler.queries[-1]
        finally:
            browser.close()
    assert carried == "How do I stream a response body? And asynchronously?"
