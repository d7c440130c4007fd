"""The HTTP service's edge: keys, identities, request ids, hosts, bodies, labels.

Run in-process (Starlette's TestClient drives the real app and its middleware), so the
property tests stay fast; tests/server covers the same app over real sockets."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st

from agent_search.agent import Options
from agent_search.events import TextDelta
from agent_search.server import Service, ServiceOptions
from agent_search.server._streams import run_stream

from ..support.http_service import (
    KEYS,
    WatchedHandler,
    in_process_app,
    register,
    sha256,
    write_project,
)
from ..support.llm_server import ThreadedChatServer

STATIC = Path(__file__).resolve().parents[2] / "agent_search" / "server" / "static"
ALICE = {"Authorization": f"Bearer {KEYS['alice']}"}
BOB = {"Authorization": f"Bearer {KEYS['bob']}"}


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    app, _ = in_process_app(tmp_path_factory.mktemp("keyed"), server={
        "api_keys": [{"sha256": sha256(KEYS["alice"]), "user_id": "alice", "team_id": "t1"},
                     {"sha256": sha256(KEYS["bob"]), "user_id": "bob", "team_id": "t2"}],
        "rate_limit": {"per_minute": 100_000, "burst": 10_000}})
    with TestClient(app) as client:
        yield client


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    app, _ = in_process_app(tmp_path_factory.mktemp("local"), server={})
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        yield client


_HEADER_TEXT = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=255,
                                              exclude_characters="\x7f"), max_size=300)


@given(st.one_of(_HEADER_TEXT, _HEADER_TEXT.map(lambda k: f"Bearer {k}")))
def test_no_made_up_authorization_gets_in(keyed: TestClient, header: str) -> None:
    sent = {"Authorization": header.encode("latin-1")} if header.strip() else {}
    r = keyed.get("/v1/models", headers=sent)
    assert r.status_code == 401
    body = r.json()["error"]
    assert body["type"] == "authentication_error"
    if len(header.strip()) > 8:
        assert header.strip() not in body["message"]  # the key is never echoed


def test_wrong_scheme_and_long_keys_are_refused(keyed: TestClient) -> None:
    assert keyed.get("/v1/models", headers={"Authorization": KEYS["alice"]}).status_code == 401
    assert keyed.get("/v1/models", headers={"Authorization": f"Basic {KEYS['alice']}"}
                     ).status_code == 401
    assert keyed.get("/v1/models", headers={"Authorization": "Bearer " + "k" * 100_000}
                     ).status_code == 401
    assert keyed.get("/v1/models", headers={"Authorization": f"bearer  {KEYS['alice']} "}
                     ).status_code == 200


def test_a_record_is_readable_only_by_its_maker(keyed: TestClient) -> None:
    r = keyed.post("/v1/assistants/offline/stream", headers=ALICE,
                   json={"messages": [{"role": "user", "content": "private question"}]})
    rid = r.headers["x-request-id"]
    assert keyed.get(f"/v1/records/{rid}", headers=ALICE).status_code == 200
    denied = keyed.get(f"/v1/records/{rid}", headers=BOB)
    assert denied.status_code == 404 and "private" not in denied.text


def test_the_caller_cannot_choose_the_request_id(keyed: TestClient) -> None:
    """A caller-chosen id could overwrite (INSERT OR REPLACE) another's record."""
    first = keyed.post("/v1/assistants/offline/stream", headers=ALICE,
                       json={"messages": [{"role": "user", "content": "alice's question"}]})
    rid = first.headers["x-request-id"]
    native = keyed.post("/v1/assistants/offline/stream", headers=BOB,
                        json={"messages": [{"role": "user", "content": "bob"}],
                              "request_id": rid})
    assert native.status_code == 422 and native.json()["error"]["param"] == "request_id"
    chat = keyed.post("/v1/chat/completions", headers=BOB,
                      json={"model": "offline", "request_id": rid, "metadata": {"request_id": rid},
                            "messages": [{"role": "user", "content": "bob overwrites"}]})
    assert chat.status_code == 200 and chat.json()["request_id"] != rid
    kept = keyed.get(f"/v1/records/{rid}", headers=ALICE).json()
    assert kept["query"] == "alice's question"


def test_local_mode_answers_only_to_loopback_host_names(local: TestClient) -> None:
    """DNS rebinding: a page on attacker.example resolving to 127.0.0.1 is same-origin
    with a keyless local server unless the Host is checked."""
    assert local.get("/v1/models").status_code == 200
    for host in ("attacker.example", "attacker.example:8000", "127.0.0.1.nip.io",
                 "localhost.attacker.example"):
        r = local.get("/v1/models", headers={"Host": host})
        assert r.status_code == 403, host
        assert r.json()["error"]["param"] == "host"
    assert local.get("/healthz", headers={"Host": "localhost:8000"}).status_code == 200
    assert local.get("/healthz", headers={"Host": "[::1]:8000"}).status_code == 200


def test_cross_site_simple_posts_are_refused(local: TestClient) -> None:
    """A cross-site form can POST text/plain or form data without a preflight."""
    body = json.dumps({"type": "kb", "query": "q"})
    for ctype in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data"):
        r = local.post("/v1/search", content=body, headers={"Content-Type": ctype})
        assert r.status_code == 415, ctype
    assert local.post("/v1/search", content=body,
                      headers={"Content-Type": "application/json"}).status_code == 200


def test_chunked_body_over_the_cap_is_refused(keyed: TestClient) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"type": "kb", "query": "'
        for _ in range(2048):
            yield b"x" * 1024
        yield b'"}'

    r = keyed.post("/v1/search", headers={**ALICE, "Content-Type": "application/json"},
                   content=chunks())
    assert r.status_code == 413


@given(st.text(min_size=1, max_size=40))
def test_metric_labels_stay_bounded(keyed: TestClient, search_type: str) -> None:
    keyed.post("/v1/search", headers=ALICE, json={"type": search_type, "query": "q"})
    text = keyed.get("/metrics").text
    types = {line.split('type="')[1].split('"')[0] for line in text.splitlines()
             if line.startswith("agent_search_searches_total{")}
    assert types <= {"kb", "web", "db", "tool", "mcp_resource", "other"}


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=12)
_search_body = st.one_of(
    _json,
    st.fixed_dictionaries({"type": st.sampled_from(["kb", "web", "", "KB "]),
                           "query": st.text(max_size=30)},
                          optional={"limit": _json, "wheres": _json, "options": _json}))
_chat_body = st.fixed_dictionaries(
    {"model": st.sampled_from(["offline", "nope", ""]),
     "messages": st.lists(st.fixed_dictionaries(
         {"role": st.sampled_from(["user", "system", "tool", "x"]),
          "content": st.one_of(st.text(max_size=40), _json)}), max_size=3)},
    optional={"stream": st.booleans(), "tools": _json, "search": _json})


@given(_search_body)
def test_search_never_fails_with_a_500(keyed: TestClient, body: Any) -> None:
    r = keyed.post("/v1/search", headers={**ALICE, "Content-Type": "application/json"},
                   content=json.dumps(body))
    assert r.status_code in (200, 400, 422), r.text
    if r.status_code != 200:
        assert r.json()["error"]["message"]


@given(_chat_body)
def test_chat_never_fails_with_a_500(keyed: TestClient, body: Any) -> None:
    r = keyed.post("/v1/chat/completions", headers={**ALICE, "Content-Type": "application/json"},
                   content=json.dumps(body))
    assert r.status_code in (200, 400, 404, 422), r.text


def test_the_page_renders_untrusted_text_as_text(keyed: TestClient) -> None:
    page = keyed.get("/")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    script = (STATIC / "app.js").read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in script
    assert 'parsed.protocol === "http:" || parsed.protocol === "https:"' in script


@pytest.mark.anyio
async def test_a_client_leaving_between_two_events_ends_the_llm_call(tmp_path: Path) -> None:
    """A client that reads the first token and leaves: the request is cancelled while
    the server sits between two events (not inside the assistant's stream). The stream
    used to be closed inside a shielded scope, which anyio refuses for an async
    generator holding a task group ("exit a cancel scope that isn't the current task's"):
    an internal error, and the LLM call left running. Now: no error, the stalled LLM
    call is cancelled at once, no task is left behind."""
    llm = ThreadedChatServer().start()
    try:
        cdir, adir = write_project(tmp_path, llm_url=llm.base_url,
                                   assistants={"stall": {"name": "s", "connector": "stall"}})
        service = Service.load(ServiceOptions(config_dir=cdir, assistants_dir=adir,
                                              builtin_handlers=False))
        register(WatchedHandler(), [a.searcher for a in service.assistants.values()])
        before = set(asyncio.all_tasks())
        started = time.monotonic()
        async with anyio.create_task_group() as tg:
            async def client() -> None:
                async with run_stream(service, service.assistants["stall"],
                                      [{"role": "user", "content": "think hard"}],
                                      Options(request_id="leaver"), "chat") as events:
                    async for event in events:
                        if isinstance(event, TextDelta):
                            tg.cancel_scope.cancel()  # the client is gone...
                            await anyio.sleep(5)  # ...while the server writes the event

            tg.start_soon(client)
        assert time.monotonic() - started < 5, "the stalled LLM call was not cancelled"
        await anyio.sleep(0.05)
        assert set(asyncio.all_tasks()) - before == set()
        await service.aclose()
    finally:
        llm.stop()


def test_every_v1_route_needs_a_key(keyed: TestClient) -> None:
    """The key is checked by middleware, before routing: no ``/v1/`` route (nor a path
    that matches none) answers without one, whatever its method; the OpenAPI document
    still declares the bearer scheme on each of them."""
    from agent_search.server._routes import router

    paths = [path for route in router.routes
             if (path := getattr(route, "path", "")).startswith("/v1/")]
    assert len(paths) >= 5
    for path in [*paths, "/v1/nothing-here"]:
        url = path.replace("{assistant_id}", "offline").replace("{request_id}", "abc")
        for method in ("GET", "POST", "DELETE"):
            r = keyed.request(method, url, json={})
            assert r.status_code == 401, (method, url, r.status_code)
            assert r.headers["www-authenticate"] == "Bearer"
    schema = keyed.get("/openapi.json").json()
    assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    for path, operations in schema["paths"].items():
        for operation in operations.values():
            assert (operation.get("security") == [{"HTTPBearer": []}]) == path.startswith("/v1/")


def test_a_route_reached_without_the_middleware_refuses() -> None:
    """Fail closed: the identity comes only from the middleware's scope entry."""
    from agent_search.server._errors import ApiError
    from agent_search.server._middleware import IDENTITY, identity_of

    for scope in ({}, {IDENTITY: None}, {IDENTITY: "alice"}, {IDENTITY: {"user_id": "a"}}):
        with pytest.raises(ApiError) as refused:
            identity_of(scope)
        assert refused.value.status == 401


@pytest.mark.parametrize(("root", "path"), [("", "/v1/models"), ("/api", "/api/v1/models"),
                                            ("/v", "/v1/models"), ("/v1", "/v1/v1/models")])
def test_the_key_check_sees_the_path_the_router_matches(root: str, path: str) -> None:
    """Authenticate decides on the same path the router routes (root_path removed as
    Starlette removes it), so no root_path set-up routes a /v1/ request it did not check."""
    from starlette._utils import get_route_path

    from agent_search.server._middleware import _route_path

    scope = {"type": "http", "path": path, "root_path": root}
    assert _route_path(scope) == get_route_path(scope)
