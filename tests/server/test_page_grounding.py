"""The chat page renders the answer as Markdown (vendored marked + DOMPurify), underlines
unsupported sentences with the reason as a tooltip and shows added citations apart — in
Debian's Chromium, with a hostile answer and hostile references that must not run script.

The stream is the real grounding of a fixed answer (``ground``), served to the page in
place of the assistant's stream; the page, its scripts and its CSP come from the server.
"""

from __future__ import annotations

import json
from typing import Any

from playwright.sync_api import sync_playwright

from agent_search.grounding import ground
from tests.support.http_service import KEYS
from tests.support.page_flow import CHROMIUM, CHROMIUM_ARGS, require_chromium
from tests.support.service_api import Running

HOSTILE = '<img src=x onerror="window.pwned=1">'
REFS = [
    {"citation_id": "1", "title": "Aspirin " + HOSTILE, "url": "javascript:window.pwned=5",
     "content": "Aspirin reduced the risk of stroke by 30%. <script>window.pwned=6</script>"},
    {"citation_id": "2", "title": "Diet", "url": "https://diet.example/",
     "content": "A Mediterranean diet lowered blood pressure in older adults."},
]
ANSWER = (
    "## Findings 🙂\n\n"
    "- Aspirin reduced the risk of stroke by **50%** #ref:1.\n"
    "- A Mediterranean diet lowered blood pressure in older adults.\n\n"
    "| drug | effect |\n|---|---|\n| aspirin | lower risk |\n\n"
    f"{HOSTILE}<script>window.pwned=2</script>[a link](javascript:window.pwned=3) "
    "\ue000forged\ue001 <button class=\"cite\" data-citation=\"9\">[9]</button>\n\n"
    "```\ncode #ref:1\n```\n")


def sse(events: list[dict[str, Any]]) -> str:
    return "".join(f"event: {e['event']}\ndata: {json.dumps(e)}\n\n" for e in events)


def stream_body() -> str:
    grounding = [g.to_dict() for g in ground(ANSWER, REFS)]
    rid = "r1"
    events: list[dict[str, Any]] = [
        {"event": "search_start", "request_id": rid, "id": "s1", "type": "kb",
         "query": HOSTILE}]
    events += [{"event": "search_result", "request_id": rid, "id": "s1",
                "citation_id": r["citation_id"], "title": r["title"], "url": r["url"],
                "score": 0.5} for r in REFS]
    events.append({"event": "search_complete", "request_id": rid, "id": "s1", "type": "kb",
                   "count": 2, "duration_ms": 3.0, "error": None})
    events += [{"event": "text", "request_id": rid, "text": ANSWER[i:i + 7]}
               for i in range(0, len(ANSWER), 7)]
    events.append({"event": "citations", "request_id": rid, "used": ["1"], "unknown": []})
    events.append({"event": "grounding", "request_id": rid, "grounding": grounding})
    events.append({"event": "done", "request_id": rid, "error": None, "grounding": grounding,
                   "references": [{**r, "type": "kb", "source": "auto"} for r in REFS]})
    return sse(events)


def test_markdown_grounding_marks_and_no_script(running: Running) -> None:
    require_chromium()  # a skip with the reason where the browser is missing; CI fails
    body = stream_body()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.route("**/v1/assistants/*/stream", lambda route: route.fulfill(
                status=200, body=body, headers={"Content-Type": "text/event-stream"}))
            page.goto(running.url + "/")
            page.get_by_label("API key").fill(KEYS["alice"])
            page.get_by_role("button", name="Use key").click()
            page.get_by_label("Assistant").select_option("offline")
            page.get_by_label("Your question").fill("what helps against stroke?")
            page.get_by_role("button", name="Ask").click()
            page.get_by_text("Done.").wait_for(timeout=20_000)
            answer = page.locator(".answer").first
            shown = {
                "pwned": page.evaluate("window.pwned === undefined"),
                "heading": answer.locator("h2").inner_text(),
                "strong": answer.locator("strong").inner_text(),
                "cells": answer.locator("td").all_inner_texts(),
                "unsupported": answer.locator('.unsupported[data-flag="0"]').all_inner_texts(),
                "flags": page.evaluate("new Set([...document.querySelectorAll('.unsupported')]"
                                       ".map((e) => e.dataset.flag)).size"),
                "tooltip": answer.locator(".unsupported").first.get_attribute("title"),
                "cites": [(b.get_attribute("data-citation"), b.get_attribute("class"))
                          for b in answer.locator("button").all()],
                "code": answer.locator("pre").inner_text(),
                "hrefs": [a.get_attribute("href") for a in answer.locator("a").all()],
                "tags": page.evaluate("[...document.querySelectorAll('.log img, .log script,"
                                      " .log iframe')].length"),
            }
            answer.locator('button.cite.added[data-citation="2"]').click()
            shown["panel"] = page.locator("#ref-title").inner_text()
            page.locator("#panel-close").click()
            answer.locator("button.cite:not(.added)").first.click()
            shown["panel1"] = page.locator("#ref-title").inner_text()
            shown["panel1_url"] = page.locator("#ref-url a").count()
        finally:
            browser.close()
    assert shown["pwned"] and shown["tags"] == 0 and not errors
    assert shown["heading"].startswith("Findings") and shown["strong"] == "50%"
    # a cell the grounding check supports gets its added citation like any sentence
    assert shown["cells"] == ["aspirin", "lower risk[+1]"]
    # each unsupported sentence underlined (the first across its bold part), its reason as
    # the tooltip
    expected = [g for g in ground(ANSWER, REFS) if g.status == "unsupported"]
    assert shown["flags"] == len(expected) and expected[0].text.startswith("Aspirin")
    assert "".join(shown["unsupported"]).startswith("Aspirin reduced the risk of stroke by 50%")
    assert "50%" in (shown["tooltip"] or "")
    # the model's own citation, then the added one; none from the code block or the
    # answer's own <button>
    added = [(cid, "cite added") for g in ground(ANSWER, REFS) if g.status == "supported"
             and not g.cited for cid in g.support]
    assert ("2", "cite added") in added  # the diet sentence, which cites nothing
    assert shown["cites"] == [("1", "cite"), *added]
    assert "#ref:1" in shown["code"]
    assert all(h is None or h.startswith("https:") for h in shown["hrefs"])
    assert shown["panel"] == "Diet"
    assert shown["panel1"] == "Aspirin " + HOSTILE and shown["panel1_url"] == 0
