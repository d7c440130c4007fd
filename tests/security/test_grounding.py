"""The grounding fails closed (issue 32 item 5).

An answer (or a reference: a web page is untrusted too) with 309 or more Chinese numeral
characters in a run raised ``OverflowError`` in the numeral reader (4,301 or more:
``ValueError``, Python's limit on int strings); the stream caught it and sent
``grounding: []``, which reads as "nothing to flag". Now a run too long is no number, and
if the check cannot run, every sentence says so (``unchecked``, with the reason).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_search.agent import Assistant
from agent_search.grounding import STATUSES, ground, unchecked
from agent_search.language import CHINESE, MAX_VALUE, numeral_value

from ..support.agents import StaticHandler, run, text_of

REFS = [{"citation_id": "1", "title": "人口", "content": "2022年，北京市常住人口为2184.3万人。"}]

numeral_runs = st.text(alphabet=CHINESE.numerals + "点", min_size=1, max_size=6000)


@given(run_=numeral_runs)
def test_any_run_of_numerals_reads_as_a_bounded_number_or_none(run_: str) -> None:
    value = numeral_value(run_.replace("点", ""))
    assert value is None or 0 <= value < MAX_VALUE


@pytest.mark.parametrize("length", [309, 4301, 20_000])
@pytest.mark.parametrize("where", ["answer", "reference"])
def test_a_long_numeral_run_is_not_a_number_and_breaks_nothing(length: int, where: str
                                                              ) -> None:
    run_ = "九" * length
    answer = f"北京市常住人口为{run_ if where == 'answer' else '2184.3万'}人 #ref:1。北京是首都。"
    refs = [{"citation_id": "1", "title": "", "content": f"北京市常住人口为{run_}人。"}] \
        if where == "reference" else REFS
    out = ground(answer, refs)
    assert out and {g.status for g in out} <= set(STATUSES)
    assert all(answer[g.start:g.end] == g.text for g in out)


@given(prefix=st.sampled_from(["北京有", "人口为", "There are ", ""]), run_=numeral_runs,
       digits=st.integers(min_value=0, max_value=5000))
def test_any_numeral_run_in_answer_and_reference_is_grounded_without_error(
        prefix: str, run_: str, digits: int) -> None:
    answer = f"{prefix}{run_}人 #ref:1。{prefix}{'9' * digits} people #ref:1."
    refs = [{"citation_id": "1", "title": run_[:50], "content": answer + run_}]
    out = ground(answer, refs)
    assert out and {g.status for g in out} <= set(STATUSES)


def test_two_different_overlong_digit_runs_are_not_the_same_number() -> None:
    """400 and 401 nines both read as float infinity, so one "supported" the other."""
    refs = [{"citation_id": "1", "title": "", "content": f"There are {'9' * 401} people."}]
    (g,) = ground(f"There are {'9' * 400} people #ref:1.", refs)
    assert g.status != "supported"


def test_a_sentence_whose_check_fails_is_unchecked_not_dropped(monkeypatch) -> None:
    from agent_search.grounding import _ground

    real = _ground._verdict

    def failing(sentence, *args):  # type: ignore[no-untyped-def]
        if "50%" in sentence.span.text:
            raise OverflowError("int too large to convert to float")
        return real(sentence, *args)

    monkeypatch.setattr(_ground, "_verdict", failing)
    refs = [{"citation_id": "1", "title": "", "content": "Aspirin reduced stroke by 30%."}]
    out = ground("Aspirin reduced stroke by 30% #ref:1. Aspirin reduced stroke by 50% #ref:1.",
                 refs)
    assert [g.status for g in out] == ["supported", "unchecked"]
    assert "OverflowError" in out[1].reason and out[1].cited == ["1"]


def test_unchecked_gives_every_sentence_the_status() -> None:
    out = unchecked("One claim #ref:2. Another claim.\n\n```\ncode\n```", "it failed")
    assert [g.status for g in out] == ["unchecked"] * 3
    assert {g.reason for g in out} == {"it failed"} and out[0].cited == ["2"]


@pytest.mark.anyio
async def test_the_stream_reports_every_sentence_unchecked_when_the_check_fails(
        tmp_path: Path, monkeypatch) -> None:
    """Before, the stream's ``grounding`` was ``[]`` whenever the check raised."""
    from agent_search.agent import _grounding

    from ..support.llm_server import ThreadedChatServer

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OverflowError("int too large to convert to float")

    monkeypatch.setattr(_grounding, "ground", broken)
    server = ThreadedChatServer().start()
    try:
        root = tmp_path
        adir = root / "assistants" / "t"
        adir.mkdir(parents=True)
        (root / "config").mkdir()
        (root / "config" / "agent.yml").write_text(json.dumps(
            {"connectors": {"local": {"base_url": server.base_url, "model": "echo"}}}))
        (adir / "package.yao").write_text(json.dumps(
            {"name": "t", "connector": "local", "search": {"kb": True},
             "kb": {"collections": ["docs"]}}))
        assistant = Assistant.load(adir, config_dir=root / "config", builtin_handlers=False)
        assistant.searcher.registry.register(StaticHandler("kb", [
            {"title": "人口", "collection": "docs", "score": 0.9, "document_id": "a",
             "content": REFS[0]["content"]}]))
        events = await run(assistant, "北京市常住人口为九九九九人。北京是首都。")
    finally:
        server.stop()
    grounding = next(e for e in events if e["event"] == "grounding")["grounding"]
    text = text_of(events)
    assert len(grounding) == 2 and {g["status"] for g in grounding} == {"unchecked"}
    assert all("OverflowError" in g["reason"] for g in grounding)
    assert [text[g["start"]:g["end"]] for g in grounding] == [g["text"] for g in grounding]
    assert events[-1]["grounding"] == grounding
