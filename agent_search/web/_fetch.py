"""Full-page content for search results: fetch pages concurrently (bounded), under the
SSRF guard, with caps on time, bytes and characters, and turn HTML into text with
trafilatura (CPU work, run in a worker thread).

``fetch_pages(urls)`` is usable on its own; the handler uses :func:`attach_pages`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

import anyio
import httpcore
import httpx

from agent_search.types import ResultItem
from agent_search.web._normalize import one_line, strip_html
from agent_search.web._ssrf import GuardedNetworkBackend, HostPolicy
from agent_search.web.errors import UnsafeURLError
from agent_search.web.settings import FetchSettings, WebSettings

_REDIRECTS = (301, 302, 303, 307, 308)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_TEXT_TYPES = ("text/plain", "text/markdown")


@dataclass(slots=True)
class Page:
    """One fetched page: ``text`` on success, ``error`` (one line) otherwise."""

    url: str
    final_url: str | None = None
    status: int | None = None
    title: str | None = None
    text: str = ""
    content_type: str | None = None
    truncated: bool = False
    error: str | None = None
    duration_ms: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


class _GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport over a connection pool whose network backend is guarded.

    httpx offers no parameter for httpcore's ``network_backend``, so the pool is
    replaced after construction (``_pool`` is what ``handle_async_request`` uses)."""

    def __init__(self, policy: HostPolicy, max_connections: int) -> None:
        super().__init__(trust_env=False)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(), max_connections=max_connections,
            network_backend=GuardedNetworkBackend(policy))


def guarded_client(policy: HostPolicy, settings: FetchSettings) -> httpx.AsyncClient:
    """An httpx client whose every connection passes the SSRF guard."""
    return httpx.AsyncClient(
        transport=_GuardedTransport(policy, settings.concurrency * 2), follow_redirects=False,
        trust_env=False, headers={"User-Agent": settings.user_agent,
                                  "Accept": "text/html,application/xhtml+xml,text/plain;q=0.8"})


async def fetch_pages(urls: Sequence[str], *, settings: FetchSettings | None = None,
                      allow_private_hosts: Iterable[str] = (),
                      client: httpx.AsyncClient | None = None) -> list[Page]:
    """Fetch ``urls`` (in order of the result) at most ``settings.concurrency`` at a
    time. A page that fails has ``error`` set; this function does not raise for it.

    ``allow_private_hosts``: hosts or CIDRs the SSRF guard lets through (e.g.
    ``["127.0.0.1"]`` for a local test server). A ``client`` passed in must do its own
    guarding; by default one is made with :func:`guarded_client`.
    """
    settings = settings or FetchSettings()
    policy = HostPolicy(allow_private_hosts)
    pages: list[Page] = [Page(url) for url in urls]
    limiter = anyio.Semaphore(settings.concurrency)
    own = client is None
    http = client or guarded_client(policy, settings)
    try:
        async def run(page: Page) -> None:
            async with limiter:
                await _fetch_one(http, policy, settings, page)

        async with anyio.create_task_group() as tg:
            for page in pages:
                tg.start_soon(run, page)
    finally:
        if own:
            await http.aclose()
    return pages


async def _fetch_one(client: httpx.AsyncClient, policy: HostPolicy, settings: FetchSettings,
                     page: Page) -> None:
    started = time.perf_counter()
    with anyio.move_on_after(settings.timeout) as scope:
        try:
            await _follow(client, policy, settings, page)
        except UnsafeURLError as exc:
            page.error = f"refused: {exc}"
        except httpx.TimeoutException:
            page.error = "timed out"
        except httpx.HTTPError as exc:
            page.error = f"fetch failed ({type(exc).__name__})"
        except Exception as exc:  # a page must never fail the search
            page.error = one_line(f"fetch failed ({type(exc).__name__}: {exc})")
    if scope.cancelled_caught:
        page.error = f"timed out after {settings.timeout:g}s"
    page.duration_ms = round((time.perf_counter() - started) * 1000, 3)


async def _follow(client: httpx.AsyncClient, policy: HostPolicy, settings: FetchSettings,
                  page: Page) -> None:
    url = page.url
    for _ in range(settings.max_redirects + 1):
        policy.check_url(url)  # scheme and metadata host; addresses at connect time
        async with client.stream("GET", url) as response:
            if response.status_code in _REDIRECTS and response.headers.get("location"):
                url = urljoin(url, response.headers["location"])
                continue
            page.final_url = url
            if not _readable(page, response):
                return
            content_type = page.content_type or ""
            body, page.truncated = await _read_capped(response, settings.max_bytes)
            encoding = response.charset_encoding or "utf-8"
        await _fill_text(page, _decoded(body, encoding), content_type, url, settings)
        return
    raise UnsafeURLError(f"more than {settings.max_redirects} redirects")


def _readable(page: Page, response: httpx.Response) -> bool:
    """Is the body of ``response`` one to read (not an HTTP error, text or HTML)? Its
    status and content type go on ``page``, and the reason when it is not."""
    page.status = response.status_code
    if response.status_code >= 400:
        page.error = f"HTTP {response.status_code}"
        return False
    content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    page.content_type = content_type or None
    if content_type and not content_type.startswith(_HTML_TYPES + _TEXT_TYPES):
        page.error = f"unsupported content type {content_type}"
        return False
    return True


def _decoded(body: bytes, encoding: str) -> str:
    """``body`` in its declared encoding, UTF-8 when Python does not know that one."""
    try:
        return body.decode(encoding, errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


async def _fill_text(page: Page, markup: str, content_type: str, url: str,
                     settings: FetchSettings) -> None:
    """The page's text and title (HTML read off the event loop), cut at
    ``settings.max_chars``; "no text content" when there is none."""
    if content_type.startswith(_TEXT_TYPES):
        text, title = markup, None
    else:
        text, title = await anyio.to_thread.run_sync(_html_to_text, markup, url)
    if len(text) > settings.max_chars:
        text, page.truncated = text[: settings.max_chars], True
    page.text, page.title = text, title
    if not text.strip():
        page.error = "no text content"


async def _read_capped(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= max_bytes:
            return b"".join(chunks)[:max_bytes], True
    return b"".join(chunks), False


def _html_to_text(markup: str, url: str) -> tuple[str, str | None]:
    """Main text of a page (boilerplate removed) and its title."""
    import trafilatura

    match = _TITLE.search(markup)
    title = strip_html(match.group(1)) if match else None
    text: Any = trafilatura.extract(markup, url=url, include_comments=False,
                                    include_tables=True, favor_recall=True)
    if not text:
        text = trafilatura.html2txt(markup) or strip_html(markup)
    return str(text).strip(), title or None


async def attach_pages(items: list[ResultItem], settings: WebSettings,
                       max_pages: int | None = None) -> None:
    """Replace the snippets of the first ``max_pages`` items by their pages' text.

    The snippet moves to ``metadata["snippet"]``; a page that cannot be fetched leaves
    its item as it was, with the reason in ``metadata["page_error"]``.
    """
    limit = max_pages or settings.fetch.max_pages
    targets = [item for item in items if item.url][:limit]
    if not targets:
        return
    pages = await fetch_pages([t.url or "" for t in targets], settings=settings.fetch,
                              allow_private_hosts=settings.allow_private_hosts)
    for item, page in zip(targets, pages, strict=True):
        if page.ok:
            item.metadata["snippet"] = item.content
            item.content = page.text
            item.metadata["page_fetched"] = True
            if page.title:
                item.metadata["page_title"] = page.title
            if page.truncated:
                item.metadata["page_truncated"] = True
        else:
            item.metadata["page_error"] = page.error
