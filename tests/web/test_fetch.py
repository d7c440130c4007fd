"""Full-page fetching and its SSRF guard, against a local web server."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from agent_search import Request, SearchConfig, Searcher
from agent_search.web import FetchSettings, HostPolicy, UnsafeURLError, create_handler, fetch_pages

from ..support.local_http import SECRET, LocalServer, Reply, Seen

pytestmark = pytest.mark.anyio

ARTICLE = """<!doctype html><html><head><title>Semantic Kernel &amp; plugins</title></head>
<body><nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article><h1>What is Semantic Kernel?</h1>
<p>Semantic Kernel is a lightweight, open-source development kit that lets you easily build
AI agents and integrate the latest AI models into your C#, Python, or Java codebase.</p>
<p>It serves as an efficient middleware that enables rapid delivery of enterprise-grade
solutions, with plugins that describe your existing code to AI models.</p></article>
<footer>Copyright 2024 Example Corp. All rights reserved.</footer></body></html>"""

LOCAL = ["127.0.0.1"]


def html(body: str = ARTICLE, **kw: Any) -> Reply:
    return Reply(body=body, headers={"content-type": "text/html; charset=utf-8"}, **kw)


async def test_fetches_main_text_and_title(server: LocalServer) -> None:
    server.route("GET", "/article", html())
    [page] = await fetch_pages([f"{server.url}/article"], allow_private_hosts=LOCAL)
    assert page.error is None
    assert page.status == 200
    assert page.title == "Semantic Kernel & plugins"
    assert "lightweight, open-source development kit" in page.text
    assert "<p>" not in page.text
    assert server.requests[0].headers["user-agent"].startswith("agent-search")


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:{port}/article",      # loopback
    "http://localhost:{port}/article",      # a name resolving to loopback
    "http://[::1]:{port}/article",          # IPv6 loopback
    "http://[::ffff:127.0.0.1]:{port}/",    # IPv4-mapped loopback
    "http://10.1.2.3/",                     # private
    "http://192.168.0.1/",                  # private
    "http://172.16.5.4/",                   # private
    "http://169.254.1.1/",                  # link-local
    "http://169.254.169.254/latest/meta-data/",  # cloud metadata
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://100.100.100.200/",              # Alibaba metadata
    "http://0.0.0.0:{port}/",               # unspecified
    "file:///etc/passwd",
    "ftp://example.com/x",
    "gopher://127.0.0.1:{port}/",
])
async def test_refused_without_allow_list(server: LocalServer, url: str) -> None:
    server.route("GET", "/article", html())
    port = server.url.rsplit(":", 1)[1]
    [page] = await fetch_pages([url.format(port=port)],
                               settings=FetchSettings(timeout=2.0))
    assert page.error is not None and page.error.startswith("refused"), page.error
    assert server.requests == []


async def test_metadata_address_refused_even_inside_an_allowed_network() -> None:
    policy = HostPolicy(["169.254.0.0/16"])
    import ipaddress

    policy.check_address("x", ipaddress.ip_address("169.254.1.1"))  # allowed by the CIDR
    with pytest.raises(UnsafeURLError, match="metadata"):
        policy.check_address("x", ipaddress.ip_address("169.254.169.254"))
    HostPolicy(["169.254.169.254"]).check_address("x", ipaddress.ip_address("169.254.169.254"))


async def test_redirects_are_followed_and_rechecked(server: LocalServer) -> None:
    port = server.url.rsplit(":", 1)[1]
    server.route("GET", "/article", html())
    server.route("GET", "/moved", Reply(301, b"", {"Location": "/article"}))
    server.route("GET", "/to-metadata",
                 Reply(302, b"", {"Location": "http://169.254.169.254/latest/meta-data/"}))
    server.route("GET", "/to-private", Reply(302, b"", {"Location": "http://10.0.0.7/admin"}))
    server.route("GET", "/to-file", Reply(302, b"", {"Location": "file:///etc/passwd"}))
    server.route("GET", "/loop", Reply(302, b"", {"Location": f"http://localhost:{port}/loop"}))
    moved, meta, private, file_, loop = await fetch_pages(
        [f"{server.url}/{p}" for p in ("moved", "to-metadata", "to-private", "to-file", "loop")],
        settings=FetchSettings(max_redirects=3), allow_private_hosts=LOCAL)
    assert moved.error is None and moved.final_url == f"{server.url}/article"
    assert "development kit" in moved.text
    assert meta.error is not None and "metadata" in meta.error
    assert private.error is not None and "10.0.0.7 is a private address" in private.error
    assert file_.error is not None and "refused scheme 'file'" in file_.error
    assert loop.error == "refused: more than 3 redirects"


async def test_caps_on_bytes_chars_time_and_type(server: LocalServer) -> None:
    big = "<html><body><article>" + "<p>word " * 50_000 + "</article></body></html>"
    server.route("GET", "/big", html(big))
    server.route("GET", "/slow", html(delay=3.0))
    server.route("GET", "/pdf",
                 Reply(body=b"%PDF-1.4", headers={"content-type": "application/pdf"}))
    server.route("GET", "/missing", Reply(404, b"nope", {"content-type": "text/html"}))
    settings = FetchSettings(max_bytes=20_000, max_chars=500, timeout=0.4)
    started = time.perf_counter()
    big_page, slow, pdf, missing = await fetch_pages(
        [f"{server.url}/{p}" for p in ("big", "slow", "pdf", "missing")],
        settings=settings, allow_private_hosts=LOCAL)
    assert time.perf_counter() - started < 2.5  # the slow page would take 3 s
    assert big_page.error is None and big_page.truncated and len(big_page.text) <= 500
    assert slow.error is not None and "timed out" in slow.error
    assert pdf.error == "unsupported content type application/pdf"
    assert missing.error == "HTTP 404"


async def test_concurrency_is_bounded(server: LocalServer) -> None:
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def slow_page(seen: Seen) -> Reply:
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.2)
        with lock:
            state["now"] -= 1
        return html()

    server.routes[("GET", "/p")] = slow_page
    pages = await fetch_pages([f"{server.url}/p?i={i}" for i in range(6)],
                              settings=FetchSettings(concurrency=2), allow_private_hosts=LOCAL)
    assert all(p.error is None for p in pages)
    assert state["max"] == 2


async def test_handler_fetch_pages_option(server: LocalServer,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERPER_API_KEY", SECRET)
    server.route("GET", "/article", html())
    server.route("POST", "/search", Reply(body={"organic": [
        {"title": "SK", "link": f"{server.url}/article", "snippet": "short snippet", "position": 1},
        {"title": "Gone", "link": f"{server.url}/gone", "snippet": "gone snippet", "position": 2},
    ]}))
    web = {"provider": "serper", "base_url": server.url, "allow_private_hosts": "127.0.0.1"}
    config = SearchConfig().merged({"web": web})
    searcher = Searcher(config)
    searcher.registry.register(create_handler(config))
    result = await searcher.search(Request(type="web", query="sk", options={"fetch_pages": True}))
    assert result.error is None
    first, second = result.items
    assert "development kit" in first.content
    assert first.metadata["snippet"] == "short snippet"
    assert first.metadata["page_title"] == "Semantic Kernel & plugins"
    assert second.content == "gone snippet"
    assert second.metadata["page_error"] == "HTTP 404"

    # without the allow list the guard refuses the local pages; the search still succeeds
    strict = searcher.context(config=config.merged({"web": {"allow_private_hosts": []}}))
    result = await searcher.search(Request(type="web", query="sk", options={"fetch_pages": True}),
                                   ctx=strict)
    assert result.error is None
    assert result.items[0].content == "short snippet"
    assert result.items[0].metadata["page_error"].startswith("refused: refused host 127.0.0.1")
