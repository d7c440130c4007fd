"""``agent-search ask`` says when the grounding could not check sentences (status
``unchecked``): said once, never silent, since silence reads as "all supported"."""

from __future__ import annotations

import io

from rich.console import Console

from agent_search.cli.ask import _Display
from agent_search.events import Grounding


def _shown(entries: list[dict[str, object]]) -> str:
    out = io.StringIO()
    display = _Display(Console(file=out, width=200, force_terminal=False), "[{}]")
    display.show(Grounding(request_id="r1", grounding=entries))
    return out.getvalue()


def test_unchecked_sentences_are_said_once_with_the_reason() -> None:
    entries = [{"text": f"s{i}", "start": 0, "end": 2, "status": "unchecked",
                "reason": "the check failed: too long"} for i in range(3)]
    shown = _shown(entries)
    assert shown.count("not checked") == 1
    assert "3 sentences not checked" in shown and "too long" in shown


def test_supported_sentences_print_nothing() -> None:
    assert _shown([{"text": "ok", "start": 0, "end": 2, "status": "supported"}]) == ""
