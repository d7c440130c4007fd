"""A mistyped name over HTTP: the assistant ("model") and the search type get the name
they are likely a typo of, and a search type no handler serves is a 422 before anything
runs (it was a 200 whose Result held the error)."""

from __future__ import annotations

import httpx

from tests.support.service_api import Running, ask


def test_a_mistyped_model_gets_a_did_you_mean(running: Running) -> None:
    for path, body in (("/v1/chat/completions", {"model": "ofline", "messages": ask("hi")}),
                       ("/v1/assistants/ofline/stream", {"messages": ask("hi")})):
        r = httpx.post(f"{running.url}{path}", json=body, headers=running.headers())
        assert r.status_code == 404, r.text
        assert "did you mean 'offline'?" in r.json()["error"]["message"], r.text
    far = httpx.post(f"{running.url}/v1/chat/completions", headers=running.headers(),
                     json={"model": "zzzzzz", "messages": ask("hi")})
    assert far.status_code == 404 and "did you mean" not in far.text


def test_an_unknown_search_type_is_a_422_with_a_suggestion(running: Running) -> None:
    one = httpx.post(f"{running.url}/v1/search", headers=running.headers(),
                     json={"type": "kbb", "query": "what does agent-search do?"})
    assert one.status_code == 422, one.text
    error = one.json()["error"]
    assert error["param"] == "type" and error["code"] == "unknown_search_type"
    assert "did you mean 'kb'?" in error["message"]
    started = running.handler.started
    many = httpx.post(f"{running.url}/v1/search", headers=running.headers(),
                      json=[{"type": "kb", "query": "a"}, {"type": "wbe", "query": "b"}])
    assert many.status_code == 422 and many.json()["error"]["param"] == "requests[1].type"
    assert running.handler.started == started  # refused before any search ran
    fine = httpx.post(f"{running.url}/v1/search", headers=running.headers(),
                      json={"type": "kb", "query": "what does agent-search do?"})
    assert fine.status_code == 200 and fine.json()["error"] is None
