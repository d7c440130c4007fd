"""Issue 21, items 5-7 and the loopback Host check: the HTTP service's edges.

Deeply nested JSON used to end in a 500 (RecursionError) without the security headers;
a lone surrogate in a query in a 500 (PydanticSerializationError) on ``/v1/search`` and a
native stream that stopped without ``done``; the page at ``/static/index.html`` came
without its CSP; ``Host: [::1]<anything>`` passed the loopback check."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.routing import Route

from agent_search import Context, Request, Result, ResultItem
from agent_search.server._middleware import LOOPBACK_HOSTS, PAGE_CSP, _host_name
from agent_search.server._sse import EventStreamResponse, sse

from ..support.http_service import auth, in_process_app

ALICE = auth("alice")
SECURITY_HEADERS = ("x-content-type-options", "referrer-policy", "x-frame-options",
                    "content-security-policy")
ROUTES = [("/v1/search", {"type": "kb", "query": "q"}),
          ("/v1/chat/completions", {"model": "offline",
                                    "messages": [{"role": "user", "content": "q"}]}),
          ("/v1/assistants/offline/stream", {"messages": [{"role": "user", "content": "q"}]})]


class _Surrogates:
    """A handler whose results hold lone surrogates (a provider's ``"\\ud800"``)."""

    type = "kb"

    def can_handle(self, ctx: Context, request: Request) -> bool:
        return True

    async def search(self, ctx: Context, request: Request) -> Result:
        item = ResultItem(title="bad \ud800 title", content="text \udfff here",
                          url="https://example.com/a", score=0.9)
        return Result(type=request.type, query=request.query, items=[item], total=1)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    from ..support.http_service import KEYS, sha256

    app, _ = in_process_app(tmp_path_factory.mktemp("edge"), server={
        "api_keys": [{"sha256": sha256(KEYS["alice"]), "user_id": "alice", "team_id": "t1"}],
        "rate_limit": {"per_minute": 100_000, "burst": 10_000}})
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    app, _ = in_process_app(tmp_path_factory.mktemp("edge-local"), server={})
    with TestClient(app, base_url="http://127.0.0.1:8000") as c:
        yield c


def _post(client: TestClient, path: str, body: str | bytes) -> Any:
    return client.post(path, content=body,
                       headers={**ALICE, "Content-Type": "application/json"})


def _has_headers(response: Any) -> None:
    for name in SECURITY_HEADERS:
        assert name in response.headers, (name, response.status_code)


# -- item 5: deep nesting ---------------------------------------------------------------

@pytest.mark.parametrize(("path", "good"), ROUTES)
@pytest.mark.parametrize("depth", [100, 5_000])
def test_deeply_nested_json_is_a_400(client: TestClient, path: str, good: dict[str, Any],
                                     depth: int) -> None:
    for body in ("[" * depth + "]" * depth,
                 json.dumps({**good, "options": 0})[:-1].replace(
                     '"options": 0', '"options": ' + '{"a": ' * depth + "1" + "}" * depth)
                 + "}"):
        r = _post(client, path, body)
        assert r.status_code == 400, (path, r.status_code, r.text[:200])
        assert "nested deeper than" in r.json()["error"]["message"]
        _has_headers(r)


def test_an_unexpected_error_is_a_500_with_the_security_headers(
        client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    service = client.app.state.service  # type: ignore[attr-defined]

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(service.searcher, "search_many", broken)
    r = _post(client, "/v1/search", json.dumps({"type": "kb", "query": "q"}))
    assert r.status_code == 500 and r.json()["error"]["message"] == \
        "internal error: RuntimeError"
    _has_headers(r)


def test_the_screens_own_refusals_carry_the_headers(client: TestClient,
                                                    local: TestClient) -> None:
    r = client.post("/v1/search", content="{}", headers={**ALICE, "Content-Type": "text/plain"})
    assert r.status_code == 415
    _has_headers(r)
    r = local.get("/v1/models", headers={"Host": "attacker.example"})
    assert r.status_code == 403
    _has_headers(r)
    for r in (client.get("/v1/models"), client.get("/nothing"), client.get("/healthz")):
        _has_headers(r)


# -- item 6: lone surrogates -------------------------------------------------------------

@pytest.mark.parametrize(("path", "good"), ROUTES)
def test_a_lone_surrogate_is_refused_at_the_edge(client: TestClient, path: str,
                                                 good: dict[str, Any]) -> None:
    body = json.dumps(good).replace('"q"', '"a\\ud800"')
    assert "\\ud800" in body
    r = _post(client, path, body)
    assert r.status_code == 400, (path, r.status_code, r.text[:300])
    assert "lone surrogate" in r.json()["error"]["message"]
    _has_headers(r)
    key = json.dumps(good)[:-1] + ', "\\udc80": 1}'
    assert _post(client, path, key).status_code == 400
    # a valid pair (an emoji written as two escapes) is text
    ok = _post(client, path, json.dumps(good).replace('"q"', '"a\\ud83d\\ude00"'))
    assert ok.status_code == 200


def test_surrogates_in_results_do_not_break_search_or_streams(
        tmp_path: Path) -> None:
    app, _ = in_process_app(tmp_path, server={"api_keys": [], "rate_limit": {"per_minute": 1000,
                                                                   "burst": 100}})
    service = app.state.service
    for searcher in [service.searcher, *(a.searcher for a in service.assistants.values())]:
        searcher.registry.register(_Surrogates(), first=True)
    with TestClient(app, base_url="http://127.0.0.1:8000") as c:
        r = c.post("/v1/search", json={"type": "kb", "query": "q"})
        assert r.status_code == 200
        assert r.json()["items"][0]["title"].startswith("bad ")
        r = c.post("/v1/assistants/offline/stream",
                   json={"messages": [{"role": "user", "content": "q"}]})
        assert r.status_code == 200
        events = re.findall(r"^event: (\w+)", r.text, flags=re.M)
        assert events[-1] == "done", events
        r = c.post("/v1/chat/completions",
                   json={"model": "offline", "messages": [{"role": "user", "content": "q"}]})
        assert r.status_code == 200, r.text[:300]


def test_a_stream_that_fails_midway_still_ends_with_its_final_event() -> None:
    import anyio

    async def produce(write: Any) -> None:
        await write(sse({"n": 1}, "text"))
        raise RuntimeError("boom")

    async def endpoint(request: Any) -> EventStreamResponse:
        return EventStreamResponse(produce, stop=anyio.Event(), on_stop=lambda: b"",
                                   on_error=lambda e: sse({"error": e}, "done"))

    app = Starlette(routes=[Route("/s", endpoint)])
    with TestClient(app) as c:
        text = c.get("/s").text
    assert text.endswith('event: done\ndata: {"error": "internal error: RuntimeError"}\n\n')


def test_the_mcp_tools_refuse_a_lone_surrogate(tmp_path: Path) -> None:
    import anyio

    from agent_search import SearchConfig, Searcher
    from agent_search.mcp.server import SearchTools

    searcher = Searcher(SearchConfig(home=tmp_path))
    tools = SearchTools(searcher, user_id="u")

    async def go() -> list[dict[str, Any]]:
        return [await tools.run({"type": "kb", "query": "a\ud800"}),
                await tools.run({"type": "kb", "query": "q", "collections": ["\udc80"]})]

    for out in anyio.run(go):
        assert "lone surrogate" in out["error"]
        json.dumps(out).encode()  # serialisable: no surrogate echoed back


def test_the_cli_refuses_arguments_that_are_not_utf8(capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    from agent_search.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["search", "kb", b"caf\xe9".decode("utf-8", "surrogateescape")])
    assert exited.value.code == 2
    assert "argument 3" in capsys.readouterr().err


def test_requests_and_files_refuse_or_replace_surrogates(tmp_path: Path) -> None:
    from pydantic import ValidationError

    from agent_search.config import read_jsonc, read_yaml
    from agent_search.errors import ConfigError
    from agent_search.kb._ingest._loaders import _load_jsonl

    with pytest.raises(ValidationError, match="lone surrogate"):
        Request(type="kb", query="a\ud800")
    (tmp_path / "s.yao").write_text('{"kb": {"collections": ["a\\ud800"]}}')
    with pytest.raises(ConfigError, match="lone surrogate"):
        read_jsonc(tmp_path / "s.yao")
    (tmp_path / "a.yml").write_text('x: "a\\ud800"\n')
    with pytest.raises(ConfigError, match="lone surrogate"):
        read_yaml(tmp_path / "a.yml")
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d\\ud800", "title": "t\\udc00", '
                                           '"text": "body \\ud800 text"}\n')
    (doc,) = list(_load_jsonl(tmp_path / "corpus.jsonl", "corpus.jsonl"))
    dumped = repr(doc)
    assert "\ufffd" in dumped and "\\ud800" not in dumped and "\\udc00" not in dumped


# -- item 7: the page's CSP on every URL that serves it -----------------------------------

@pytest.mark.parametrize("url", ["/", "/static/index.html", "/static//index.html",
                                 "/static/./index.html", "/static/app.js", "/nothing"])
def test_every_url_serving_the_page_carries_its_csp(client: TestClient, url: str) -> None:
    r = client.get(url)
    if r.status_code == 200 and "html" in r.headers.get("content-type", ""):
        assert r.headers["content-security-policy"] == PAGE_CSP
    assert "script-src 'self'" in r.headers["content-security-policy"]
    _has_headers(r)


def test_the_docs_page_has_its_own_policy(client: TestClient) -> None:
    r = client.get("/docs")
    assert r.status_code == 200
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "http" not in csp  # nothing from other hosts


# -- the loopback Host check ----------------------------------------------------------------

@pytest.mark.parametrize("host", ["[::1]evil.example", "[::1].attacker.example",
                                  "[::1]:8000:1", "[::1]@attacker.example", "[::1]x",
                                  "localhost:8000:1", "localhost:", "127.0.0.1:80x",
                                  "LOCALHOST."])
def test_loopback_look_alikes_are_refused(local: TestClient, host: str) -> None:
    r = local.get("/v1/models", headers={"Host": host})
    assert r.status_code == 403, host


_ALLOWED = re.compile(r"(127\.0\.0\.1|localhost|\[::1\])(:\d{1,5})?|::1")


@given(st.sampled_from(sorted(LOOPBACK_HOSTS)), st.text(max_size=12))
def test_only_a_loopback_name_and_a_port_pass(name: str, tail: str) -> None:
    host = name + tail
    accepted = _host_name(host) in LOOPBACK_HOSTS
    assert accepted == bool(_ALLOWED.fullmatch(host.strip().lower())), host


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


_NESTED = st.recursive(st.none() | st.integers() | st.text(max_size=3),
                       lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                       max_leaves=30)


@given(_NESTED, st.integers(1, 8))
def test_the_depth_check_agrees_with_a_recursive_count(value: Any, limit: int) -> None:
    """The iterative check (containers only) against the obvious recursive definition."""
    from agent_search._text import too_deep

    assert too_deep(value, limit) == (_depth(value) > limit)


def test_file_names_that_are_not_utf8_become_text(tmp_path: Path) -> None:
    """A file whose name is not UTF-8 (Python keeps the bytes as lone surrogates) used to
    stop a whole ingest run with a UnicodeEncodeError; now its name is text (``\\xNN``)
    and two such names stay apart."""
    import os

    from agent_search.kb import source_key
    from agent_search.kb._ingest import load_file

    names = [b"caf\xe9.md", b"caf\xe8.md"]
    paths = []
    for raw in names:
        path = Path(os.fsdecode(os.path.join(os.fsencode(tmp_path), raw)))
        path.write_text("Zebra notes.\n", encoding="utf-8")
        paths.append(path)
    keys = [source_key(p, tmp_path) for p in paths]
    assert keys == ["caf\\xe9.md", "caf\\xe8.md"]
    for path, key in zip(paths, keys, strict=True):
        (doc,) = [d for d in load_file(path, key) if not hasattr(d, "reason")]
        f"{doc.title}{doc.source}".encode()  # raises on a lone surrogate
        assert doc.title == key.removesuffix(".md")


def test_a_query_with_nul_is_refused() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="NUL"):
        Request(type="kb", query="a\x00b")


def test_what_a_parser_decodes_is_text() -> None:
    """Blocks and documents from any loader (a PDF's broken UTF-16, an HTML or JSON
    escape) hold no lone surrogate: the chunk hash and the store encode them."""
    from agent_search.kb._ingest import Block, Document

    block = Block("page \ud800 text", ("head \udfff",))
    doc = Document("d", "caf\udce9.pdf", "title \ud800", [block])
    for text in (block.text, *block.headings, doc.source, doc.title or ""):
        text.encode()
    assert doc.source == "caf\\xe9.pdf" and block.text == "page \ufffd text"


_ANY_TEXT = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF,
                                           categories=["L", "N", "P", "Zs", "Cc", "Cs"]),
                    max_size=12)


@given(_ANY_TEXT, st.sampled_from(ROUTES))
def test_no_text_makes_a_route_fail(client: TestClient, text: str,
                                    route: tuple[str, dict[str, Any]]) -> None:
    """Property: whatever a string holds (lone surrogates, controls, NUL), each body
    route answers 200, 400 or 422 with the headers, never a 500."""
    path, good = route
    body = json.dumps(good).replace('"q"', json.dumps(text))
    r = _post(client, path, body)
    assert r.status_code in (200, 400, 422), (r.status_code, r.text[:200])
    _has_headers(r)
