"""Grounding's cost is bounded, and one answer's check does not hold the others up.

2,000 random common Han characters took 10-20 s to ground, 20,000 ran past 10 s: jieba's
part-of-speech HMM ran on every character its dictionary did not know (~5 ms each, pure
Python, holding the server's interpreter). And two tenants' answers ended together were
checked in two threads at once, both competing with the loop serving the others.

The bounds asserted are counts of work (characters given to the HMM, checks of the CPU
clock, threads at once), never the wall clock.
"""

from __future__ import annotations

import random
import threading
import time

import anyio
import jieba.posseg
import pytest

from agent_search.agent import _grounding
from agent_search.grounding import Budget, ground
from agent_search.searcher import Searcher

COMMON_HAN = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]


def _han(length: int, seed: int = 7) -> str:
    """Random common Han characters with a full stop now and then (sentences of ~30)."""
    rng = random.Random(seed)
    return "".join(rng.choice(COMMON_HAN) + ("。" if rng.random() < 0.03 else "")
                   for _ in range(length))


@pytest.fixture
def hmm_chars(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Characters handed to jieba's part-of-speech HMM. Past 2,000 the HMM refuses (so the
    test ends fast where the bound is missing; the count still says so)."""
    counted = [0]
    real = jieba.posseg.viterbi

    def counting(obs, *args):  # type: ignore[no-untyped-def]
        counted[0] += len(obs)
        if counted[0] > 2_000:
            raise RuntimeError("HMM past the test's bound")
        return real(obs, *args)

    monkeypatch.setattr(jieba.posseg, "viterbi", counting)
    return counted


@pytest.mark.parametrize("length", [2_000, 20_000])
def test_a_han_answer_gives_the_hmm_a_bounded_count_of_characters(
        hmm_chars: list[int], length: int) -> None:
    answer = _han(length)
    refs = [{"citation_id": "1", "title": "", "content": _han(3_000, seed=8)}]
    out = ground(answer, refs)
    assert hmm_chars[0] <= 500
    assert out and all(answer[g.start:g.end] == g.text for g in out)
    # past its bounds a sentence says why; no sentence failed on the way
    assert not any(g.reason.startswith("the check could not run") for g in out)


def test_a_name_the_dictionary_does_not_list_is_still_recognised(hmm_chars: list[int]
                                                                 ) -> None:
    """The bound keeps the HMM where it matters: a short run (a person's name)."""
    refs = [{"citation_id": "1", "title": "", "content": "记者李晓燕报道，项目于三月开工。"}]
    (g,) = ground("记者王晓燕报道，项目于三月开工 #ref:1。", refs)
    assert hmm_chars[0] > 0
    assert g.status == "unsupported" and "王晓燕" in g.reason


def test_past_its_cpu_bound_the_rest_of_the_answer_is_unchecked_with_the_reason() -> None:
    ticks = iter(range(10_000))  # a clock that advances 0.1 s each time it is read

    budget = Budget(cpu_seconds=0.45, clock=lambda: next(ticks) / 10)
    refs = [{"citation_id": "1", "title": "", "content": "Aspirin reduced stroke by 30%."}]
    answer = " ".join(["Aspirin reduced stroke by 30% #ref:1."] * 8)
    out = ground(answer, refs, budget=budget)
    statuses = [g.status for g in out]
    assert "supported" in statuses and statuses[-1] == "unchecked"
    first = statuses.index("unchecked")
    assert set(statuses[first:]) == {"unchecked"}
    assert all("bound" in g.reason for g in out[first:])


def test_references_past_the_bound_leave_every_sentence_unchecked() -> None:
    budget = Budget(cpu_seconds=0.0)
    refs = [{"citation_id": "1", "title": "", "content": "Aspirin reduced stroke by 30%."}]
    out = ground("Aspirin reduced stroke by 30% #ref:1. It is cheap #ref:1.", refs,
                 budget=budget)
    assert [g.status for g in out] == ["unchecked", "unchecked"]


def test_a_sentence_of_thousands_of_characters_is_not_read_as_one_claim() -> None:
    answer = _han(5_000).replace("。", "，") + " #ref:1。"
    (g,) = ground(answer, [{"citation_id": "1", "title": "", "content": answer}])
    assert g.status == "unchecked" and "too long" in g.reason


def test_answers_ended_together_are_checked_one_at_a_time_off_the_loop(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two tenants' answers: their checks never run in two threads at once, and never on
    the event loop's thread."""
    running, most, threads = [0], [0], []
    lock = threading.Lock()

    def slow_ground(text, passages, **kwargs):  # type: ignore[no-untyped-def]
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            threads.append(threading.get_ident())
        time.sleep(0.05)  # long enough for the other to start, were it allowed
        with lock:
            running[0] -= 1
        return []

    monkeypatch.setattr(_grounding, "ground", slow_ground)
    searcher = Searcher()

    async def main() -> int:
        loop_thread = threading.get_ident()
        async with anyio.create_task_group() as tg:
            for user in ("alice", "bob", "carol"):
                ctx = searcher.context(user_id=user)
                tg.start_soon(_grounding.ground_answer, ctx, "答案。", [])
        return loop_thread

    loop_thread = anyio.run(main)
    assert most[0] == 1 and len(threads) == 3
    assert loop_thread not in threads
