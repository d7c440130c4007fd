"""The HTTP API against a real uvicorn server: the official openai client (streaming,
non-streaming, tools, errors), the native SSE stream, search, records, identity."""

from __future__ import annotations

import httpx
import openai
import pytest

from tests.support.service_api import Running, ask, client, parse_sse


def test_health_ready_models(running: Running) -> None:
    assert httpx.get(f"{running.url}/healthz").json() == {"status": "ok"}
    ready = httpx.get(f"{running.url}/readyz")
    assert ready.status_code == 200, ready.text
    assert ready.json()["checks"]["records"] == "ok"
    ids = [m.id for m in client(running).models.list()]
    assert ids == ["broken", "cite", "offline", "stall", "tools"]
    schema = httpx.get(f"{running.url}/openapi.json").json()
    search = schema["paths"]["/v1/search"]["post"]  # a plain route, documented from models
    body = search["requestBody"]["content"]["application/json"]["schema"]
    assert {"$ref": "#/components/schemas/Request"} in body["anyOf"]
    assert "query" in schema["components"]["schemas"]["Request"]["properties"]


def test_openai_non_streaming_with_references(running: Running) -> None:
    done = client(running).chat.completions.create(model="offline",
                                                   messages=ask("what does agent-search do?"))
    text = done.choices[0].message.content or ""
    assert "offline" in text and "#ref:1" in text
    extra = done.model_extra or {}
    refs = extra["references"]
    assert refs and refs[0]["citation_id"] == "1"
    assert refs[0]["content"].startswith("Fact 0") and refs[0]["url"].startswith("https://")
    assert "1" in extra["citations"]["used"]
    assert done.choices[0].finish_reason == "stop"


def test_openai_streaming_with_a_model(running: Running) -> None:
    stream = client(running).chat.completions.create(
        model="cite", messages=ask("tell me about the docs"), stream=True)
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert "#ref:1" in text and "999" not in text.replace("#ref:999", "")
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    extra = last.model_extra or {}
    assert [r["citation_id"] for r in extra["references"]] == ["1", "2"]
    assert extra["citations"]["unknown"] == ["999"]
    assert extra["request_id"] and chunks[0].id == f"chatcmpl-{extra['request_id']}"


def test_openai_tools_the_assistant_enables(running: Running) -> None:
    tool = {"type": "function", "function": {"name": "search", "parameters": {}}}
    done = client(running).chat.completions.create(model="tools", messages=ask("hi there"),
                                                   tools=[tool])  # type: ignore[list-item]
    text = done.choices[0].message.content or ""
    assert text.startswith("From the tool:") and "#ref:" in text
    assert (done.model_extra or {})["references"], "the tool's results are referenced"
    with pytest.raises(openai.BadRequestError, match=r"tools\[0\]\.function\.name"):
        client(running).chat.completions.create(
            model="offline", messages=ask("x y z w"),
            tools=[{"type": "function", "function": {"name": "search"}}])  # type: ignore[list-item]


def test_openai_errors(running: Running) -> None:
    with pytest.raises(openai.NotFoundError, match="no assistant 'nope'"):
        client(running).chat.completions.create(model="nope", messages=ask("hi"))
    with pytest.raises(openai.AuthenticationError, match="invalid API key"):
        openai.OpenAI(base_url=f"{running.url}/v1", api_key="sk-wrong",
                      max_retries=0).models.list()
    with pytest.raises(openai.UnprocessableEntityError, match=r"messages\.0\.role"):
        client(running).chat.completions.create(
            model="offline", messages=[{"role": "robot", "content": "hi"}])  # type: ignore[list-item]
    with pytest.raises(openai.InternalServerError, match="hook broke"):
        client(running).chat.completions.create(model="broken", messages=ask("hi"))
    with pytest.raises(openai.APIError, match="hook broke"):
        list(client(running).chat.completions.create(model="broken", messages=ask("hi"),
                                                     stream=True))


def test_native_stream_events(running: Running) -> None:
    r = httpx.post(f"{running.url}/v1/assistants/offline/stream", headers=running.headers(),
                   json={"messages": ask("how are citations numbered?")}, timeout=30)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    frames = parse_sse(r.text)
    names = [n for n, _ in frames]
    assert names[0] == "search_start" and names[-3:] == ["citations", "grounding", "done"]
    assert "search_result" in names and "search_complete" in names and "text" in names
    assert names.index("search_complete") < names.index("text")
    rid = r.headers["x-request-id"]
    for name, data in frames:
        assert data["event"] == name and data["request_id"] == rid
    done = frames[-1][1]
    assert done["error"] is None and done["references"][0]["content"]


def test_identity_drives_every_search(running: Running) -> None:
    running.handler.callers.clear()
    httpx.post(f"{running.url}/v1/search", headers=running.headers("bob"),
               json={"type": "kb", "query": "anything"})
    httpx.post(f"{running.url}/v1/assistants/offline/stream", headers=running.headers("alice"),
               json={"messages": ask("who am i asking as")}, timeout=30)
    client(running, "bob").chat.completions.create(model="offline", messages=ask("and now?"),
                                                   extra_body={"user": "alice"})
    assert running.handler.callers == [("bob", "t2"), ("alice", "t1"), ("bob", "t2")]


def test_search_single_list_merge_and_validation(running: Running) -> None:
    url, h = f"{running.url}/v1/search", running.headers()
    one = httpx.post(url, headers=h, json={"type": "kb", "query": "alpha", "limit": 2})
    assert one.status_code == 200 and one.json()["type"] == "kb"
    assert one.json()["items"][0]["citation_id"] and one.json()["error"] is None
    many = httpx.post(url, headers=h, json=[{"type": "kb", "query": "a"},
                                             {"type": "web", "query": "b"}]).json()
    assert [r["type"] for r in many] == ["kb", "web"]
    assert many[1]["error"]  # no web handler: a Result with error, not an HTTP error
    merged = httpx.post(url, headers=h, json={"requests": [{"type": "kb", "query": "a"},
                                                           {"type": "kb", "query": "b"}],
                                              "merge": True}).json()
    assert merged["type"] == "merged" and merged["items"]
    bad = httpx.post(url, headers=h, json={"type": "kb", "query": "a", "limit": 0})
    assert bad.status_code == 422 and bad.json()["error"]["param"] == "limit"
    bad = httpx.post(url, headers=h, json=[{"type": "kb", "query": " "}])
    assert bad.status_code == 422 and bad.json()["error"]["param"] == "requests.0.query"
    many_requests = [{"type": "kb", "query": "q"}] * 21
    bad = httpx.post(url, headers=h, json=many_requests)
    assert bad.status_code == 422 and "limit is 20" in bad.json()["error"]["message"]
    bad = httpx.post(url, headers={**h, "content-type": "application/json"}, content=b"{nope")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "json_invalid"


def test_deprecated_request_fields_are_named_in_a_warning_header(running: Running) -> None:
    url, h = f"{running.url}/v1/search", running.headers()
    current = httpx.post(url, headers=h, json={"type": "kb", "query": "alpha",
                                               "options": {"graph": False}})
    assert current.status_code == 200 and "warning" not in current.headers
    one = httpx.post(url, headers=h, json={"type": "kb", "query": "alpha", "graph": False,
                                           "threshold": 0.1})
    assert one.status_code == 200 and one.json()["error"] is None
    assert one.headers["warning"] == (
        '299 agent-search "Request field \'graph\' is deprecated: pass it as options.graph", '
        '299 agent-search "Request field \'threshold\' is deprecated: it is min_score, the '
        'one relevance floor"')
    many = httpx.post(url, headers=h, json=[{"type": "kb", "query": "a"},
                                            {"type": "kb", "query": "b", "collections": []}])
    assert many.status_code == 200
    assert many.headers["warning"] == ('299 agent-search "requests[1]: Request field '
                                       '\'collections\' is deprecated: pass it as '
                                       'options.collections"')


def test_records_only_for_their_owner(running: Running) -> None:
    r = httpx.post(f"{running.url}/v1/assistants/offline/stream", headers=running.headers(),
                   json={"messages": ask("record this question")}, timeout=30)
    rid = r.headers["x-request-id"]
    mine = httpx.get(f"{running.url}/v1/records/{rid}", headers=running.headers())
    assert mine.status_code == 200
    assert mine.json()["query"] == "record this question" and mine.json()["references"]
    theirs = httpx.get(f"{running.url}/v1/records/{rid}", headers=running.headers("bob"))
    assert theirs.status_code == 404
    assert httpx.get(f"{running.url}/v1/records/nope", headers=running.headers()
                     ).status_code == 404
    assert httpx.get(f"{running.url}/v1/records/a%20b", headers=running.headers()
                     ).status_code == 422


def test_limits_name_the_field(running: Running) -> None:
    url, h = f"{running.url}/v1/chat/completions", running.headers()
    too_many = httpx.post(url, headers=h, json={"model": "offline",
                                                "messages": ask("x") * 101})
    assert too_many.status_code == 422 and too_many.json()["error"]["param"] == "messages"
    big = httpx.post(url, headers=h, json={"model": "offline",
                                           "messages": ask("x" * (1 << 20))})
    assert big.status_code == 413 and big.json()["error"]["param"] == "body"
    missing = httpx.post(url, headers=h, json={"messages": ask("x")})
    assert missing.status_code == 422 and missing.json()["error"]["param"] == "model"
    form = httpx.post(url, headers=h, data={"model": "offline"})
    assert form.status_code == 415


def test_metrics(running: Running) -> None:
    httpx.post(f"{running.url}/v1/assistants/offline/stream", headers=running.headers(),
               json={"messages": ask("first token please")}, timeout=30)
    client(running).chat.completions.create(model="offline", messages=ask("a chat too"))
    httpx.post(f"{running.url}/v1/search", headers=running.headers(),
               json=[{"type": "kb", "query": "m"}, {"type": "web", "query": "m"}])
    text = httpx.get(f"{running.url}/metrics").text
    assert 'agent_search_searches_total{status="ok",type="kb"}' in text
    assert 'agent_search_searches_total{status="error",type="web"}' in text  # no handler
    assert "agent_search_search_duration_seconds_bucket" in text
    assert 'agent_search_time_to_first_token_seconds_count{endpoint="native"}' in text
    assert 'agent_search_stream_duration_seconds_count{endpoint="chat"}' in text
    assert "agent_search_streams_in_flight 0.0" in text
    assert "agent_search_rate_limited_requests_total" in text


def test_usage_is_estimated_and_streamed_on_request(running: Running) -> None:
    done = client(running).chat.completions.create(model="offline",
                                                   messages=ask("how are tokens counted?"))
    text = done.choices[0].message.content or ""
    usage = done.usage
    assert usage is not None and usage.completion_tokens == -(-len(text) // 4)
    assert usage.prompt_tokens >= len("how are tokens counted?") // 4
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert (usage.model_extra or {})["estimated"] is True

    plain = list(client(running).chat.completions.create(model="cite", messages=ask("q"),
                                                         stream=True))
    assert all(c.usage is None for c in plain)  # only when asked, as OpenAI does
    chunks = list(client(running).chat.completions.create(
        model="cite", messages=ask("q"), stream=True,
        stream_options={"include_usage": True}))
    last, final = chunks[-1], chunks[-2]
    assert last.choices == [] and last.usage is not None
    assert final.choices[0].finish_reason == "stop" and final.usage is None
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert last.usage.completion_tokens == -(-len(text) // 4)
