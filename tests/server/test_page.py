"""The chat page in Debian's Chromium. Chromium is installed by .ci/chromium.sh; when it
is missing this test fails (it must not pass silently without a browser)."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import sync_playwright

from .page_flow import CHROMIUM, CHROMIUM_ARGS, ask_and_open_citation, demo_server


def test_ask_watch_searches_and_open_a_citation(tmp_path: Path) -> None:
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: run .ci/chromium.sh"
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
    assert "web search failed" in shown["searches"]  # no provider key: shown as an error
    assert "offline" in shown["answer"] and "[" in shown["answer"]
    assert shown["title"] and shown["title"] != "(untitled)"
    assert "db" in shown["source"] and "agents.demo.product" in shown["source"]
    assert shown["content"] and "arrives when" not in shown["content"]
    assert shown["focused"] == "panel"
    assert not errors
