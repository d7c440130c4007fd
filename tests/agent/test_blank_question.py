"""A question of only spaces is refused at once, naming the message (issue 31 item 2): it
used to run no search and answer nothing, silently."""

from __future__ import annotations

from typing import Any

import pytest

from agent_search.agent import validate_conversation

from ..support.agents import AssistantFactory


@pytest.mark.parametrize("content", ["", "   ", "\n\t ", None,
                                     [{"type": "text", "text": "  "}]])
def test_a_blank_last_question_is_a_value_error(content: Any) -> None:
    with pytest.raises(ValueError, match=r"messages\[1\]: the question is empty"):
        validate_conversation([{"role": "system", "content": "be brief"},
                               {"role": "user", "content": content}])


def test_what_is_still_a_question() -> None:
    assert validate_conversation(["hi"])[0]["content"] == "hi"
    # user data parts are searched on their own, with or without text
    data = [{"type": "data", "model": "products"}]
    assert validate_conversation([{"role": "user", "content": data}])
    # an empty earlier turn, or an assistant turn last, is not the question
    assert validate_conversation([{"role": "user", "content": " "},
                                  {"role": "assistant", "content": "?"}])


def test_the_stream_refuses_it_before_running(make_assistant: AssistantFactory) -> None:
    assistant = make_assistant()
    with pytest.raises(ValueError, match="question is empty"):
        assistant.stream(["   "])
    with pytest.raises(ValueError, match="question is empty"):
        assistant.run_stream([{"role": "user", "content": "\n"}])
