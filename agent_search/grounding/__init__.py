"""Grounding: each sentence of an answer checked against the references of its request.

``ground(answer, references)`` splits the answer into sentences (pySBD; English and
Chinese), takes out what each claims (numbers, units, dates, names, content words) and
decides, without a language model, whether a reference says it:

- ``supported`` — a cited reference says it, or another reference of the request does
  (that one is added to ``support``: the citation the sentence should have had);
- ``unsupported`` — a number or name no reference states, one that differs from what the
  cited reference says, or nothing close in any reference; ``reason`` says which;
- ``no_claim`` — nothing to check (code, headings, questions, greetings, sentences about
  the answer itself);
- ``unchecked`` — the check could not decide (it failed, the sentence is past its bounds,
  or it is in a language the check does not read): never to be read as supported.
  ``unchecked(answer, reason)`` gives every sentence that status, for a caller whose
  check could not run at all.

See docs/grounding.md for how it decides and how well (bench/bench_grounding.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from agent_search.grounding._budget import SHARED_PAUSE, Budget
from agent_search.grounding._ground import (
    Embed,
    GroundedSentence,
    Status,
    Thresholds,
    ground,
    unchecked,
)
from agent_search.grounding._verify import Ask, candidates, verify

__all__ = ["SHARED_PAUSE", "STATUSES", "Ask", "Budget", "Embed", "GroundedSentence",
           "Status", "Thresholds", "candidates", "ground", "summary", "unchecked",
           "verify"]

STATUSES = ("supported", "unsupported", "no_claim", "unchecked")


def summary(grounding: Iterable[GroundedSentence | dict[str, Any]]) -> dict[str, int]:
    """Counts of ``supported`` / ``unsupported`` / ``no_claim`` / ``unchecked`` sentences."""
    counts = Counter(g.status if isinstance(g, GroundedSentence) else g.get("status")
                     for g in grounding)
    return {s: counts.get(s, 0) for s in STATUSES}
