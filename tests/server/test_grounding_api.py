"""Grounding over HTTP: the chat completion's extra field (the last chunk when
streaming), the native stream's ``grounding`` event and ``done``, the search record and
the metrics summary."""

from __future__ import annotations

import httpx

from tests.support.service_api import Running, ask, client, parse_sse


def check(text: str, grounding: list[dict]) -> None:
    assert grounding, "an answer has sentences"
    assert [text[g["start"]:g["end"]] for g in grounding] == [g["text"] for g in grounding]
    cited = [g for g in grounding if g["cited"]]
    assert cited and all(g["status"] == "supported" and g["support"] for g in cited)
    assert grounding[0]["status"] == "no_claim"  # "I am offline (...)": about the answer


def test_chat_completion_carries_the_grounding(running: Running) -> None:
    done = client(running).chat.completions.create(model="offline",
                                                   messages=ask("what does agent-search do?"))
    check(done.choices[0].message.content or "", (done.model_extra or {})["grounding"])


def test_streamed_chat_completion_has_it_on_the_last_chunk(running: Running) -> None:
    chunks = list(client(running).chat.completions.create(
        model="offline", messages=ask("what does agent-search do?"), stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    check(text, (chunks[-1].model_extra or {})["grounding"])


def test_native_stream_record_and_metrics(running: Running) -> None:
    r = httpx.post(f"{running.url}/v1/assistants/offline/stream", headers=running.headers(),
                   json={"messages": ask("how are citations numbered?")}, timeout=30)
    frames = parse_sse(r.text)
    text = "".join(d["text"] for n, d in frames if n == "text")
    grounding = next(d for n, d in frames if n == "grounding")["grounding"]
    check(text, grounding)
    assert frames[-1][1]["grounding"] == grounding
    record = httpx.get(f"{running.url}/v1/records/{r.headers['x-request-id']}",
                       headers=running.headers()).json()
    assert record["grounding"] == grounding
    metrics = httpx.get(f"{running.url}/metrics").text
    supported = sum(g["status"] == "supported" for g in grounding)
    line = next(m for m in metrics.splitlines()
                if m.startswith('agent_search_grounded_sentences_total{status="supported"}'))
    assert float(line.split()[-1]) >= supported
