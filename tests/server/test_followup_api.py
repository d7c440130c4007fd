"""A follow-up over HTTP: the chat completion reads the last turn in the context of the
earlier ones in ``messages`` (stateless on the wire), and the search record says how."""

from __future__ import annotations

import httpx

from tests.support.service_api import Running


def test_chat_completion_reads_a_follow_up_in_context(running: Running) -> None:
    messages = [{"role": "user", "content": "How do I stream a response body?"},
                {"role": "assistant", "content": "Use the streaming reader."},
                {"role": "user", "content": "And asynchronously?"}]
    r = httpx.post(f"{running.url}/v1/chat/completions", headers=running.headers(),
                   json={"model": "offline", "messages": messages}, timeout=30)
    assert r.status_code == 200, r.text
    assert running.handler.queries[-1] == ("How do I stream a response body? "
                                           "And asynchronously?")
    record = httpx.get(f"{running.url}/v1/records/{r.headers['x-request-id']}",
                       headers=running.headers()).json()
    assert record["follow_up"]["how"] == "with the previous question's topic"
    assert record["follow_up"]["earlier"] == ["How do I stream a response body?"]


def test_a_turn_that_stands_alone_is_searched_alone_over_http(running: Running) -> None:
    messages = [{"role": "user", "content": "How do I stream a response body?"},
                {"role": "assistant", "content": "Use the streaming reader."},
                {"role": "user", "content": "Which invoices from Norway are unpaid?"}]
    r = httpx.post(f"{running.url}/v1/chat/completions", headers=running.headers(),
                   json={"model": "offline", "messages": messages}, timeout=30)
    assert r.status_code == 200, r.text
    assert running.handler.queries[-1] == "Which invoices from Norway are unpaid?"
