"""The chat page in Debian's Chromium. Chromium is installed by .ci/chromium.sh; when it
is missing these tests are skipped with the reason in pytest's summary, except under CI
(``CI=true``), where they fail: they must not pass silently without a browser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import sync_playwright

from tests.support.http_service import KEYS
from tests.support.page_flow import (
    CHROMIUM,
    CHROMIUM_ARGS,
    ask_and_open_citation,
    demo_server,
    require_chromium,
)
from tests.support.service_api import Running


@pytest.fixture
def chromium() -> str:
    """The browser, or a skip (a failure under CI) before any server is started."""
    require_chromium()
    return CHROMIUM


pytestmark = pytest.mark.usefixtures("chromium")


def test_ask_watch_searches_and_open_a_citation(tmp_path: Path) -> None:
    with demo_server(tmp_path / "home") as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            phone = browser.new_page(viewport={"width": 390, "height": 800})
            errors: list[str] = []
            phone.on("pageerror", lambda e: errors.append(str(e)))
            shown = ask_and_open_citation(phone, url)
        finally:
            browser.close()
    assert "db: " in shown["searches"] and "result" in shown["searches"]
    # no provider key: a notice saying how to turn web search on, not a failure
    assert "Web search is off" in shown["searches"]
    assert "web search failed" not in shown["searches"]
    assert "offline" in shown["answer"] and "[" in shown["answer"]
    assert shown["title"] and shown["title"] != "(untitled)"
    assert "db" in shown["source"] and "agents.demo.product" in shown["source"]
    assert shown["content"] and "arrives when" not in shown["content"]
    assert shown["focused"] == "panel"
    assert not errors


def test_the_api_key_is_asked_once_and_kept_for_the_session(running: Running) -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(running.url + "/")
            page.get_by_label("API key").fill(KEYS["bob"])
            page.get_by_role("button", name="Use key").click()
            page.get_by_label("Assistant").select_option("offline")
            assert page.locator("#key-form").is_hidden()
            page.reload()  # same tab: the key is still in sessionStorage
            page.get_by_label("Assistant").select_option("offline")
            assert page.locator("#key-form").is_hidden()
            page.get_by_label("Your question").fill("<img src=x onerror=alert(1)> hello?")
            page.get_by_role("button", name="Ask").click()
            page.get_by_text("Done.").wait_for(timeout=20_000)
            assert page.locator(".question").first.inner_text().startswith("<img src=x")
            assert page.locator(".log img").count() == 0  # shown as text, never as HTML
            stored = page.evaluate("sessionStorage.getItem('agent-search-api-key')")
        finally:
            browser.close()
    assert stored == KEYS["bob"]
    assert ("bob", "t2") in running.handler.callers


def test_the_api_docs_render_with_no_outside_request(running: Running) -> None:
    """/docs is Swagger UI from the fastapi-offline package: it renders the OpenAPI 3.1
    document with every request to another host refused."""
    outside: list[str] = []

    def only_local(route: Any) -> None:
        if route.request.url.startswith(running.url):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.route("**/*", only_local)
            page.goto(running.url + "/docs")
            page.locator(".swagger-ui .info .title").wait_for(timeout=15_000)
            title = page.locator(".swagger-ui .info .title").inner_text()
            paths = page.locator(".opblock-summary-path").all_inner_texts()
        finally:
            browser.close()
    assert title.startswith("agent-search")
    assert "/v1/chat/completions" in paths and "/v1/search" in paths
    assert outside == []
