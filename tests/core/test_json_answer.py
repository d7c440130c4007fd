"""The one parser of a model's JSON answer (the research planner and the agent's
delegations both use it): the JSON found inside prose, of the kind asked for, within
bounds whatever the text."""

from __future__ import annotations

import pytest

from agent_search._json_answer import MAX_STARTS, NoJSONAnswer, parse_json_answer


def test_json_inside_prose_and_fences_is_found() -> None:
    assert parse_json_answer('Sure!\n```json\n{"a": [1]}\n```') == {"a": [1]}
    assert parse_json_answer("x [1, 2] y") == [1, 2]


def test_the_first_value_of_the_kind_asked_for() -> None:
    text = 'As [1] says: {"parts": ["a", "b"]} and then {"other": 1}'
    assert parse_json_answer(text) == [1]
    assert parse_json_answer(text, kinds=(dict,)) == {"parts": ["a", "b"]}
    # braces after the object do not spoil it (a greedy match from the first { to the
    # last } did)
    assert parse_json_answer('{"parts": ["a"]} (see {the docs})', kinds=(dict,)) == \
        {"parts": ["a"]}


def test_broken_json_is_passed_over_for_a_later_value() -> None:
    assert parse_json_answer('{not json} then {"ok": true}') == {"ok": True}


def test_no_json_is_one_error_quoting_the_start() -> None:
    with pytest.raises(NoJSONAnswer) as caught:
        parse_json_answer("I cannot help with that")
    assert str(caught.value) == "answer contains no JSON: 'I cannot help with that'"
    with pytest.raises(NoJSONAnswer, match=r"\(\+9700 more characters\)"):
        parse_json_answer("x" * 10_000)
    with pytest.raises(NoJSONAnswer):
        parse_json_answer("[1, 2]", kinds=(dict,))


@pytest.mark.parametrize("text", ["[" * 100_000, "{" * 5 + '"a":' + "[" * 100_000,
                                  '{"a": ' + "[" * 200 + "]" * 200 + "}"])
def test_nesting_without_bound_is_no_answer_not_a_crash(text: str) -> None:
    # the decoder gives up on deep nesting with RecursionError (not a ValueError): it
    # escaped the parser before; a value deeper than the service accepts is refused too
    with pytest.raises(NoJSONAnswer):
        parse_json_answer(text)


def test_a_text_of_brackets_is_tried_a_bounded_number_of_times() -> None:
    # every start fails; the value after the first MAX_STARTS brackets is not looked for
    text = "[x " * (MAX_STARTS + 1) + "[1]"
    with pytest.raises(NoJSONAnswer):
        parse_json_answer(text)
    assert parse_json_answer("[x " * (MAX_STARTS - 1) + "[1]") == [1]
