"""The chat page as a new user meets it: example questions on an empty conversation, no
favicon 404, the newest answer kept in view while it grows, one chip per reference, a
database row's reference showing its fields, and no stale status line once the user
types again. In Debian's Chromium (skipped with the reason when absent, failing under
CI); the page's API calls are answered by the test (``page.route``)."""

from __future__ import annotations

import json
from typing import Any

from playwright.sync_api import sync_playwright

from tests.support.page_flow import CHROMIUM, CHROMIUM_ARGS, require_chromium
from tests.support.service_api import Running

MODELS = {"object": "list", "data": [
    {"id": "shop", "name": "Shop", "description": "The sample shop",
     "examples": ["How many orders are there?", "Which products are in stock?"],
     "citation_format": "#ref:{id}"}]}
ROW = {"citation_id": "1", "type": "db", "title": "Order 10", "content": "total: 79.99",
       "model": "shop.order", "record_id": 10,
       "data": {"id": 10, "customer": "Ada Lovelace", "total": 79.99, "status": "shipped",
                "__yao_created_by": "u1"}}


def _stream(answer: str, pieces: int) -> str:
    size = max(1, len(answer) // pieces)
    events: list[dict[str, Any]] = [
        {"event": "text", "request_id": "r", "text": answer[i:i + size]}
        for i in range(0, len(answer), size)]
    events.append({"event": "done", "request_id": "r", "error": None, "references": [ROW]})
    return "".join(f"event: {e['event']}\ndata: {json.dumps(e)}\n\n" for e in events)


def test_the_page_as_a_new_user_meets_it(running: Running) -> None:
    require_chromium()
    long_answer = "".join(f"Paragraph {n} of a long answer about the order.\n\n"
                          for n in range(120)) + "Order 10 shipped #ref:1 #ref:1."
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1000, "height": 600})
            missing: list[str] = []
            page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
            page.route("**/v1/models", lambda route: route.fulfill(
                status=200, body=json.dumps(MODELS), headers={"Content-Type":
                                                              "application/json"}))
            page.route("**/v1/assistants/*/stream", lambda route: route.fulfill(
                status=200, body=_stream(long_answer, 300),
                headers={"Content-Type": "text/event-stream"}))
            page.goto(running.url + "/")
            examples = page.locator("button.example")
            examples.first.wait_for(timeout=10_000)
            offered = examples.all_inner_texts()
            examples.first.click()
            page.get_by_text("Done.").wait_for(timeout=30_000)
            asked = page.locator(".turn .question").inner_text()
            left = page.locator("button.example").count()
            last = page.locator(".answer p").last
            in_view = page.evaluate(
                "(el) => el.getBoundingClientRect().bottom <= window.innerHeight + 1 && "
                "el.getBoundingClientRect().top >= 0", last.element_handle())
            chips = page.locator(".answer button.cite").count()
            page.locator(".answer button.cite").first.click()
            page.locator("#panel").wait_for(state="visible", timeout=5_000)
            fields = page.locator("#ref-content dt").all_inner_texts()
            values = page.locator("#ref-content dd").all_inner_texts()
            page.get_by_label("Your question").fill("and the next")
            status = page.locator("#status").inner_text()
        finally:
            browser.close()
    assert offered == MODELS["data"][0]["examples"]
    assert asked == offered[0] and left == 0  # asked, and the examples make way
    assert in_view, "the newest answer's end is out of view"
    assert chips == 1  # "#ref:1 #ref:1": one chip
    assert fields == ["id", "customer", "total", "status"] and "Ada Lovelace" in values
    assert status == ""  # "Done." was about the previous question
    assert not missing, missing  # no favicon (or any) 404
