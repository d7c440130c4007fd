"""A question of only spaces gets a clear answer on every path, and the reference panel
shows a title as text, not raw Markdown (issue 31 item 2)."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import sync_playwright

from tests.support.http_service import KEYS
from tests.support.page_flow import CHROMIUM, CHROMIUM_ARGS, require_chromium
from tests.support.service_api import Running


@pytest.mark.parametrize("path, extra", [("/v1/assistants/offline/stream", {}),
                                         ("/v1/chat/completions", {"model": "offline"})])
def test_a_blank_question_is_a_422_naming_it(running: Running, path: str,
                                             extra: dict[str, str]) -> None:
    """It used to be a 200 stream that searched nothing and answered nothing."""
    for content in ("   ", "\n\t", [{"type": "text", "text": "  "}]):
        body = {**extra, "messages": [{"role": "user", "content": content}]}
        r = httpx.post(running.url + path, json=body, headers=running.headers("bob"),
                       timeout=20)
        assert r.status_code == 422, r.text
        error = r.json()["error"]
        assert error["code"] == "empty_question" and "question is empty" in error["message"]


def test_the_page_says_a_blank_question_is_empty_and_titles_are_text(
        running: Running) -> None:
    require_chromium()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(running.url + "/")
            page.get_by_label("API key").fill(KEYS["bob"])
            page.get_by_role("button", name="Use key").click()
            page.get_by_label("Assistant").select_option("offline")
            page.get_by_label("Your question").fill("   ")
            page.get_by_role("button", name="Ask").click()
            status = page.locator("#status").inner_text()
            turns = page.locator(".turn").count()
            # the test handler titles its items "Doc N about <question>"
            page.get_by_label("Your question").fill("**Moneymaker** and `notes`?")
            page.get_by_role("button", name="Ask").click()
            page.get_by_text("Done.").wait_for(timeout=20_000)
            page.locator("button.cite").first.click()
            page.locator("#panel").wait_for(state="visible", timeout=5_000)
            title = page.locator("#ref-title").inner_text()
        finally:
            browser.close()
    assert "empty" in status and turns == 0
    assert title.startswith("Doc ") and title.endswith("Moneymaker and notes?"), title
