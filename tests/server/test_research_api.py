"""Research mode over HTTP: ``POST /v1/research`` and the streams' ``research`` flag."""

from __future__ import annotations

import httpx

from tests.support.service_api import Running, parse_sse

QUESTION = "What does alpha mean and where does beta come from?"


def test_research_endpoint_answers_as_the_caller(running: Running) -> None:
    running.handler.callers.clear()
    r = httpx.post(f"{running.url}/v1/research", headers=running.headers("alice"),
                   json={"question": QUESTION, "types": ["kb"], "max_rounds": 2})
    assert r.status_code == 200, r.text
    body = r.json()
    assert [p["text"] for p in body["parts"]] == ["What does alpha mean",
                                                 "where does beta come from?"]
    assert body["budget"]["rounds"]["limit"] == 2
    assert body["stopped"] and body["items"]
    ids = [i["citation_id"] for i in body["items"]]
    assert len(ids) == len(set(ids))
    assert running.handler.callers and set(running.handler.callers) == {("alice", "t1")}
    assert r.headers["X-Request-Id"]


def test_research_budgets_only_go_down(running: Running) -> None:
    r = httpx.post(f"{running.url}/v1/research", headers=running.headers(),
                   json={"question": QUESTION, "max_searches": 10_000})
    assert r.status_code == 200, r.text
    limit = running.service.searcher.config.research.max_searches
    assert r.json()["budget"]["searches"]["limit"] == limit


def test_research_refuses_bad_input(running: Running) -> None:
    url = f"{running.url}/v1/research"
    assert httpx.post(url, headers=running.headers(), json={"question": ""}).status_code == 422
    bad = httpx.post(url, headers=running.headers(), json={"question": "x", "types": ["nope"]})
    assert bad.status_code == 422 and "nope" in bad.text
    extra = httpx.post(url, headers=running.headers(), json={"question": "x", "rounds": 9})
    assert extra.status_code == 422
    assert httpx.post(url, json={"question": "x"}).status_code == 401


def test_a_stream_with_research_streams_its_plan(running: Running) -> None:
    r = httpx.post(f"{running.url}/v1/assistants/offline/stream", headers=running.headers(),
                   json={"messages": [{"role": "user", "content": QUESTION}],
                         "search": True, "research": True}, timeout=30)
    assert r.status_code == 200
    names = [name for name, _ in parse_sse(r.text)]
    assert "research_plan" in names and "research_round" in names
    assert names.index("research_plan") < names.index("done")
