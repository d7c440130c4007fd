"""Property-based tests of the web package's untrusted inputs: URLs into the SSRF guard
(every refused IPv4 range in every spelling and IPv6 embedding, and random strings),
and provider payloads (random JSON shapes grafted onto each provider's recorded format)
into the handler.

Invariants: a refused-range address is never allowed; the guard raises nothing but its
own error; no exception escapes the handler; every item URL is None or http(s).
"""

from __future__ import annotations

import copy
import ipaddress
import json
import socket
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_search import Request, SearchConfig, Searcher
from agent_search.events import ListSink
from agent_search.web import FetchSettings, HostPolicy, UnsafeURLError, WebHandler, fetch_pages
from agent_search.web.providers import PROVIDER_CLASSES, WebProvider
from agent_search.web.settings import WebSettings

from ..support.local_http import recorded

# -- the SSRF guard -----------------------------------------------------------------------

REFUSED_V4 = [ipaddress.IPv4Network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
    "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15",
    "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    "100.100.100.200/32", "169.254.169.254/32",
)]
"""The test's own list (written from IANA's special-purpose registry, not read from the
code under test)."""


def _in_refused(ip: ipaddress.IPv4Address) -> bool:
    return any(ip in net for net in REFUSED_V4)


refused_v4 = st.sampled_from(REFUSED_V4).flatmap(
    lambda net: st.integers(int(net.network_address), int(net.broadcast_address))
).map(ipaddress.IPv4Address)


def _part(value: int, base: str) -> str:
    return {"dec": str(value), "oct": "0" + format(value, "o"), "hex": hex(value),
            "HEX": "0X" + format(value, "X")}[base]


@st.composite
def ipv4_spellings(draw: st.DrawFn, ip: ipaddress.IPv4Address) -> str:
    """``ip`` written in one of the forms resolvers accept: 1–4 parts, each decimal,
    octal or hex, optionally with a trailing dot or in fullwidth digits."""
    n = int(ip)
    b = ip.packed
    parts_count = draw(st.integers(1, 4))
    values = {1: [n], 2: [b[0], n & 0xFFFFFF], 3: [b[0], b[1], n & 0xFFFF],
              4: list(b)}[parts_count]
    text = ".".join(_part(v, draw(st.sampled_from(["dec", "oct", "hex", "HEX"])))
                    for v in values)
    if draw(st.booleans()):
        text += "."
    if draw(st.integers(0, 7)) == 0:  # fullwidth digits: NFKC makes them ASCII
        text = text.translate({ord(c): ord(c) + 0xFEE0 for c in "0123456789"})
    return text


@st.composite
def ipv6_embeddings(draw: st.DrawFn, ip: ipaddress.IPv4Address) -> str:
    """``ip`` carried in an IPv6 address: mapped, compatible, NAT64 (well-known and
    local-use), 6to4 or Teredo (client obfuscated)."""
    n = int(ip)
    form = draw(st.sampled_from(["mapped", "mapped-dotted", "compatible", "nat64",
                                 "nat64-dotted", "nat64-local", "6to4", "teredo"]))
    if form == "mapped-dotted":
        return f"::ffff:{ip}"
    if form == "nat64-dotted":
        return f"64:ff9b::{ip}"
    if form == "compatible" and n <= 1:
        n = int(ipaddress.IPv4Address("127.0.0.1"))
    low = draw(st.integers(0, (1 << 80) - 1))
    value = {
        "mapped": (0xFFFF << 32) | n,
        "compatible": n,
        "nat64": (0x64FF9B << 96) | n,
        "nat64-local": (0x0064FF9B0001 << 80) | (low & ((1 << 80) - 1)),
        "6to4": (0x2002 << 112) | (n << 80) | low,
        "teredo": (0x20010000 << 96) | (draw(st.integers(0, (1 << 64) - 1)) << 32)
        | (n ^ 0xFFFFFFFF),
    }[form]
    return str(ipaddress.IPv6Address(value))


def _url(host: str, port: int | None, userinfo: str, path: str) -> str:
    netloc = f"[{host}]" if ":" in host else host
    return f"http://{userinfo}{netloc}{':' + str(port) if port else ''}{path}"


refused_hosts = refused_v4.flatmap(
    lambda ip: st.one_of(ipv4_spellings(ip), ipv6_embeddings(ip), st.just(str(ip))))
urls_to_refused = st.builds(_url, refused_hosts, st.none() | st.integers(1, 65535),
                            st.sampled_from(["", "user@", "a:b@"]),
                            st.sampled_from(["/", "/latest/meta-data/", "", "/?q=1#x"]))


async def _no_dns(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError(f"DNS was asked for the literal {args[0]!r}")


@given(url=urls_to_refused)
def test_a_refused_address_is_never_allowed_in_any_spelling(url: str) -> None:
    policy = HostPolicy()
    with pytest.raises(UnsafeURLError):
        policy.check_url(url)
    host = urlsplit(url).hostname or ""

    async def resolve() -> None:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(anyio, "getaddrinfo", _no_dns)
            with pytest.raises(UnsafeURLError):
                await policy.resolve(host, 80)

    anyio.run(resolve)


@settings(max_examples=min(25, settings.default.max_examples))  # ~0.1 s per example
@given(urls=st.lists(urls_to_refused, min_size=1, max_size=4))
def test_fetch_never_connects_to_a_refused_address(urls: list[str]) -> None:
    """Through the real fetch path: refused before any request (a connection attempt
    would end in a connect error instead)."""
    pages = anyio.run(lambda: fetch_pages(urls, settings=FetchSettings(timeout=2.0)))
    for page in pages:
        assert page.error is not None and page.error.startswith("refused"), (page.url,
                                                                          page.error)


def _resolver_reading(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """How the platform's resolver reads a numeric host (glibc ``inet_aton``) or an IP
    literal: the oracle the guard is checked against."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if host and all(c in "0123456789abcdefxABCDEFX." for c in host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def _carried(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    if isinstance(ip, ipaddress.IPv4Address):
        return [ip]
    found = [ip.ipv4_mapped, ip.sixtofour, *(ip.teredo or ())]
    n = int(ip)
    if n >> 32 == 0 or (n >> 32) == 0x64FF9B << 64:
        found.append(ipaddress.IPv4Address(n & 0xFFFFFFFF))
    return [a for a in found if a is not None]


numeric_hosts = st.text(alphabet="0123456789xX.abf:ff9b", min_size=1, max_size=24)
any_text = st.text(max_size=60)


@given(raw=st.one_of(any_text, numeric_hosts, numeric_hosts.map(lambda h: f"http://{h}/"),
                     st.builds("{}://{}{}".format, st.sampled_from(["http", "https", "ftp",
                                                                    "javascript", "HTTP"]),
                               st.one_of(numeric_hosts, any_text), any_text)))
def test_random_urls_raise_only_the_guards_error(raw: str) -> None:
    policy = HostPolicy()
    try:
        host, _port = policy.check_url(raw)
    except UnsafeURLError:
        return
    reading = _resolver_reading(host)
    if reading is not None:
        assert not any(_in_refused(ip) for ip in _carried(reading)), (raw, reading)

    async def resolve() -> None:
        async def public(*args: Any, **kwargs: Any) -> Any:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", 80))]

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(anyio, "getaddrinfo", public)
            await policy.resolve(host, 80)  # what check_url let through connects

    anyio.run(resolve)


# -- provider payloads into the handler ---------------------------------------------------

DANGEROUS_URLS = ["javascript:alert(1)", "data:text/html,x", "file:///etc/passwd",
                  "//evil.example", "https://u:p@evil.example/", "http://a.example/\x00",
                  "https://a.example/\u2028x", " JAVASCRIPT:x", "https://", "http://[::1"]
json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                      st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
                      st.sampled_from(DANGEROUS_URLS))
json_values = st.recursive(json_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=8)

SYNTHETIC = {
    "serper": {"answerBox": {"answer": "a", "link": "https://x.example/"},
               "organic": [{"title": "t", "link": "https://x.example/1", "snippet": "s",
                            "position": 1, "sitelinks": [{"title": "x",
                                                          "link": "https://x.example/2"}]}]},
    "serpapi": {"answer_box": {"answer": "a", "link": "https://x.example/"},
                "organic_results": [{"title": "t", "link": "https://x.example/1",
                                     "snippet": "s", "position": 1}]},
    "searxng": {"results": [{"title": "t", "url": "https://x.example/1", "content": "s",
                             "score": 2.0, "engines": ["a"]}]},
}
RECORDED = {
    "tavily": "tavily_what_is_the_semantic_kernel.json",
    "bing": "bing_what_is_the_semantic_kernel.json",
    "brave": "brave_what_is_the_semantic_kernel.json",
    "google": "google_what_is_the_semantic_kernel.json",
}


def _base_payload(provider: str) -> Any:
    if provider in RECORDED:
        return json.loads(recorded(RECORDED[provider]).decode("utf-8-sig"))
    return SYNTHETIC[provider]


BASES = {name: _base_payload(name) for name in [*RECORDED, *SYNTHETIC]}


def _mutate(value: Any, draw: Callable[[Any], Any], depth: int = 0) -> Any:
    """``value`` with random subtrees replaced by random JSON (more often near the
    results, where the untrusted fields are)."""
    if draw(st.integers(0, 11)) == 0:
        return draw(json_values)
    if depth >= 4:
        return value
    if isinstance(value, dict):
        return {k: _mutate(v, draw, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        out = [_mutate(v, draw, depth + 1) for v in value[:4]]
        if draw(st.integers(0, 5)) == 0:
            out.append(draw(json_values))
        return out
    if isinstance(value, str) and value.startswith("http") and draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from(DANGEROUS_URLS))
    return value


@st.composite
def payloads(draw: st.DrawFn) -> tuple[str, Any]:
    provider = draw(st.sampled_from(sorted(BASES)))
    return provider, _mutate(copy.deepcopy(BASES[provider]), draw)


class _FixedProviderHandler(WebHandler):
    """The web handler with its provider built over an in-memory transport."""

    def __init__(self, config: SearchConfig, provider: WebProvider) -> None:
        super().__init__(config)
        self._provider = provider

    def provider_for(self, settings: WebSettings) -> WebProvider:
        return self._provider


def _is_http_url(url: str) -> bool:
    parts = urlsplit(url)
    return (parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
            and "@" not in parts.netloc and url.isprintable() and " " not in url)


@given(case=payloads())
def test_no_payload_escapes_the_handler_or_carries_an_unsafe_url(case: tuple[str, Any]) -> None:
    name, payload = case
    body = json.dumps(payload).encode()
    transport = httpx.MockTransport(lambda request: httpx.Response(
        200, content=body, headers={"content-type": "application/json"}))
    extra: dict[str, Any] = {"cx": "cx-id"} if name == "google" else {}
    client = httpx.AsyncClient(base_url="http://provider.test", transport=transport)
    provider = PROVIDER_CLASSES[name](api_key="k-0123456789", base_url="http://provider.test",
                                      client=client, **extra)
    config = SearchConfig().merged({"web": {"provider": name, "max_results": 50}})
    handler = _FixedProviderHandler(config, provider)
    searcher = Searcher(config)
    searcher.registry.register(handler)

    async def run() -> None:
        sink = ListSink()
        ctx = searcher.context(events=sink)
        direct = await handler.search(ctx, Request(type="web", query="q", limit=50))
        via_searcher = await searcher.search(Request(type="web", query="q", limit=50),
                                             ctx=ctx)
        await client.aclose()
        for result in (direct, via_searcher):
            assert result.error is None or isinstance(result.error, str)
            for item in result.items:
                assert item.url is None or _is_http_url(item.url), item.url
                assert 0.0 <= item.score <= 1.0
        for event in sink.events:
            url = event.to_dict().get("url")
            assert url is None or _is_http_url(url), url

    anyio.run(run)
