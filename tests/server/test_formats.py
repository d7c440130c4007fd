"""The chat-completion frames, without a server."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agent_search.server._sse import sse
from agent_search.server._streams import ChatFormat, message_text


@given(st.text(max_size=50))
def test_a_content_frame_is_the_chunk_it_stands_for(text: str) -> None:
    fmt = ChatFormat("rid", "model-\"x\"")
    assert fmt.content_frame(text) == sse(fmt.chunk({"content": text}))


def test_message_text_reads_strings_and_text_parts() -> None:
    messages = [{"role": "system", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "hello"},
                                             {"type": "data", "id": "x"}, "junk"]},
                {"role": "assistant", "content": None}]
    assert message_text(messages) == "be brief\nhello"
