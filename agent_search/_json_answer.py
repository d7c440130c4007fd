"""The JSON in a model's answer: one parser for every caller that asks a model for JSON.

Models wrap the JSON asked for in prose or Markdown fences ("Sure! ```json {...} ```"),
so the answer is the first JSON value of the wanted kind that decodes from one of the
text's ``{`` or ``[``. The core owns the parser because two layers ask for JSON: the
research planner (core) and the delegations of the agent runtime (above it); the core
may not import the agent, the agent may import the core.

The text comes from outside (a model, an assistant, an MCP tool), so its cost is
bounded: at most :data:`MAX_STARTS` positions are tried, a value nested so deep that the
decoder gives up (``RecursionError``, which is not a ``ValueError``) is a failed start,
not a crash, and a value nested deeper than :data:`~agent_search._text.MAX_JSON_DEPTH`
is refused like the HTTP service refuses such a body.
"""

from __future__ import annotations

import json
from typing import Any

from agent_search._text import MAX_JSON_DEPTH, too_deep
from agent_search.errors import RunError

MAX_STARTS = 256
"""Opening brackets tried at most (prose citing "[1] [2]" is tried and passed over
cheaply; a text made of brackets stops here instead of costing its length squared)."""

SHOWN_CHARS = 300
"""How much of an answer without JSON the error shows (enough to tell a refusal or an
LLM error from garbage, bounded so a long answer cannot flood a log or a Result)."""

_DECODER = json.JSONDecoder()


class NoJSONAnswer(RunError):
    """The answer holds no JSON value of the kind asked for (the model, not the caller's
    input, failed); the message quotes its start."""


def parse_json_answer(text: str, kinds: tuple[type, ...] = (dict, list)) -> Any:
    """The first JSON value in ``text`` whose type is one of ``kinds`` (an object or an
    array by default), found at an opening bracket; :class:`NoJSONAnswer` when there is
    none (see the module for the bounds)."""
    openers = ("[" if list in kinds else "") + ("{" if dict in kinds else "")
    at = _next_opener(text, openers, 0)
    for _ in range(MAX_STARTS):
        if at < 0:
            break
        decoded = _value_at(text, at)
        if decoded is None:
            at = _next_opener(text, openers, at + 1)
        elif too_deep(decoded[0], MAX_JSON_DEPTH):
            at = _next_opener(text, openers, decoded[1])  # nor the values nested inside it
        else:
            return decoded[0]
    shown = text[:SHOWN_CHARS]
    more = f" (+{len(text) - len(shown)} more characters)" if len(text) > len(shown) else ""
    raise NoJSONAnswer(f"answer contains no JSON: {shown!r}{more}")


def _next_opener(text: str, openers: str, start: int) -> int:
    """Where the first of ``openers`` at or after ``start`` is, or -1: one ``str.find``
    per opener, so prose between brackets costs no Python loop."""
    return min((i for i in (text.find(o, start) for o in openers) if i >= 0), default=-1)


def _value_at(text: str, start: int) -> tuple[Any, int] | None:
    """The JSON value that starts at ``start`` and where it ends, or None when none
    decodes there (a value too deep for the decoder included)."""
    try:
        return _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
