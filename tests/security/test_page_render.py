"""The chat page renders a streamed answer in work linear in its length (issue 32 item 7).

The page rendered the whole answer again (marked, then DOMPurify) on every ``text``
event: a 26 KB answer in 600 pieces parsed 7.9 MB of Markdown, 44 KB in 1,000 pieces held
the main thread ~6 s, a denial of service by a long answer. Now each finished block is
rendered once and only the open tail again. In Debian's Chromium (skipped with the reason
when it is absent, failing under CI): the streamed answer is the same HTML as the whole
answer rendered once, and the Markdown parsed (counted by wrapping marked's lexer, which
every parse goes through) grows linearly with the answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ..support.http_service import KEYS, ThreadedServer, write_project
from ..support.page_flow import CHROMIUM, CHROMIUM_ARGS, require_chromium

PIECE = 44  # characters of a text event: 1,000 events for 44 KB


def _section(i: int) -> str:
    """Markdown an answer is made of, block kinds that span lines and blank lines
    among them (loose and ordered lists, fences with blank lines, tables, quotes)."""
    return (
        f"## Part {i} of the answer\n\n"
        f"Aspirin lowered the risk **by {i}%** in one trial #ref:{i % 7 + 1}, and *less* "
        "in the other, which [the review](https://example.org/r) calls `noise`.\n"
        "A second line of the same paragraph.\r\n\r\n"
        "1. first point\n\n2. second point, after a blank line\n\n3. third\n\n"
        "- tight item\n- another\n  continued lazily\n    - nested item\n\n"
        "| drug | effect |\n|---|---:|\n| aspirin | lower |\n| diet | lower too |\n\n"
        "> a quoted sentence\ncontinued lazily\n\n"
        "```python\nx = 1\n\nprint(x)  # #ref:1 stays code\n```\n\n"
        "    indented code\n\n    after a blank line\n\n"
        "Setext heading\n---\n\n"
        "Last words of the part \ue000 with a private-use character.\n\n")


def _answer(size: int) -> str:
    text, i = "", 0
    while len(text) < size:
        text += _section(i)
        i += 1
    return text


def _body(answer: str, *, done: bool) -> str:
    events: list[dict[str, Any]] = [
        {"event": "text", "request_id": "r", "text": answer[i:i + PIECE]}
        for i in range(0, len(answer), PIECE)]
    if done:
        events.append({"event": "done", "request_id": "r", "error": None, "references": []})
    return "".join(f"event: {e['event']}\ndata: {json.dumps(e)}\n\n" for e in events)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    """The page's server and one browser for the module's tests."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    from agent_search.server import Service, ServiceOptions, create_app

    root = tmp_path_factory.mktemp("page")
    cdir, adir = write_project(root)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENT_SEARCH_HOME", str(root / "home"))
        service = Service.load(ServiceOptions(config_dir=cdir, assistants_dir=adir,
                                              builtin_handlers=False))
    server = ThreadedServer(create_app(service)).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                yield server.url, browser
            finally:
                browser.close()
    finally:
        server.stop()


COUNT_PARSING = """() => {
  window.parsed = { markdown: 0, html: 0 };
  const lex = window.marked.Lexer.prototype.lex;
  window.marked.Lexer.prototype.lex = function (src) {
    window.parsed.markdown += src.length;
    return lex.apply(this, arguments);
  };
  const sanitize = window.DOMPurify.sanitize;
  window.DOMPurify.sanitize = function (html) {
    window.parsed.html += String(html).length;
    return sanitize.apply(this, arguments);
  };
}"""
WHOLE = """(text) => {
  const div = document.createElement("div");
  renderAnswer(div, text, markerPattern("#ref:{id}"), null);
  return div.innerHTML;
}"""
SHOWN = """async () => {
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return document.querySelector(".answer").innerHTML;
}"""


def _stream(on: tuple[str, Any], answer: str, *, done: bool) -> dict[str, Any]:
    """Ask on the page with ``answer`` streamed in PIECE-character text events; what the
    page shows, the same answer rendered whole, and the characters parsed."""
    url, browser = on
    body = _body(answer, done=done)
    page = browser.new_page()
    try:
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.route("**/v1/assistants/*/stream", lambda route: route.fulfill(
            status=200, body=body, headers={"Content-Type": "text/event-stream"}))
        page.goto(url + "/")
        page.get_by_label("API key").fill(KEYS["alice"])
        page.get_by_role("button", name="Use key").click()
        page.get_by_label("Assistant").select_option("offline")
        page.evaluate(COUNT_PARSING)
        page.get_by_label("Your question").fill("what helps?")
        page.get_by_role("button", name="Ask").click()
        page.get_by_text("Done.").wait_for(timeout=60_000)
        shown = page.evaluate(SHOWN)
        parsed = page.evaluate("window.parsed")
        whole = page.evaluate(WHOLE, answer)
    finally:
        page.close()
    assert not errors
    return {"shown": shown, "whole": whole, **parsed}


def test_the_streamed_answer_is_the_answer_rendered_whole(page: tuple[str, Any]) -> None:
    """Before the end of the stream re-renders it whole, block by block gives the same
    HTML: lists continued after blank lines, fences and indented code with blank lines,
    CR LF, citation chips, a private-use character."""
    answer = _answer(6_000)
    seen = _stream(page, answer, done=False)
    assert "<ol>" in seen["whole"] and 'class="cite"' in seen["whole"]
    assert seen["shown"] == seen["whole"]
    after = _stream(page, answer, done=True)  # ... and after it
    assert after["shown"] == after["whole"]


@pytest.mark.parametrize("shape", ["blocks", "one paragraph", "unclosed fence"])
def test_markdown_parsed_grows_linearly_with_the_answer(page: tuple[str, Any],
                                                        shape: str) -> None:
    """44 KB in 1,000 events parses a few times the answer, not the ~22 MB (500 times)
    of a render per event; four times the answer costs about four times as much."""
    def answer(size: int) -> str:
        if shape == "blocks":
            return _answer(size)
        words = ("word " * (size // 5))[:size]
        return words if shape == "one paragraph" else "```\n" + words.replace(" ", "\n")

    small, large = answer(11_000), answer(44_000)
    parsed = {len(a): _stream(page, a, done=True) for a in (small, large)}
    for n, seen in parsed.items():
        assert seen["markdown"] <= 12 * n, (shape, n, seen["markdown"])
        assert seen["html"] <= 12 * n, (shape, n, seen["html"])
    growth = parsed[len(large)]["markdown"] / parsed[len(small)]["markdown"]
    assert growth < 6, (shape, growth)  # 4x the answer; a quadratic render: ~16x
