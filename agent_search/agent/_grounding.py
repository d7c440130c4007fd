"""The grounding stage of a stream: the answer's sentences checked against the stream's
references (:mod:`agent_search.grounding`) in a worker thread, timed as a stage of the
record. A failure here never breaks the answer, nor passes as a clean one: every
sentence is then ``unchecked`` with the reason, and the record has a warning saying why.

The check is pure Python: in its thread it still holds the interpreter the event loop
needs. Each answer's check is bounded in CPU (:class:`agent_search.grounding.Budget`),
and the answers of a process are checked one at a time (:data:`_ONE_AT_A_TIME`), so
however many tenants' answers end together, at most one thread competes with the loop
that serves the others' searches."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
from anyio.lowlevel import RunVar

from agent_search.agent._record_text import grounding_passages
from agent_search.agent.llm.offline import OFFLINE_NOTICE
from agent_search.agent.records import STAGE
from agent_search.context import Context
from agent_search.grounding import SHARED_PAUSE, Budget, ground, unchecked
from agent_search.trace import first_line
from agent_search.types import ResultItem

_ONE_AT_A_TIME: RunVar[anyio.CapacityLimiter] = RunVar("grounding_limiter")
"""One grounding thread per event loop (a limiter belongs to its loop)."""


def _limiter() -> anyio.CapacityLimiter:
    try:
        return _ONE_AT_A_TIME.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(1)
        _ONE_AT_A_TIME.set(limiter)
        return limiter


async def ground_answer(ctx: Context, text: str, references: Sequence[ResultItem],
                        counts: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """The ``grounding`` entries of ``text`` (the answer as the client saw it). Database
    records are checked as the stream quotes them (:func:`grounding_passages`), with
    their search's count of matching records (``counts``, by citation id)."""
    node = ctx.trace.child("grounding", **{STAGE: True})
    try:
        passages = grounding_passages(list(references), counts or {})
        work = functools.partial(ground, text, passages,
                                 citation_format=ctx.config.citation.format,
                                 budget=Budget(pause=SHARED_PAUSE), home=ctx.config.home)
        done = await anyio.to_thread.run_sync(work, limiter=_limiter())
        return [_own_notice(g.to_dict()) for g in done]
    except Exception as exc:
        node.attributes.setdefault("warnings", []).append(
            f"grounding failed: {first_line(exc)}")
        return await _all_unchecked(ctx, text, f"the check could not run ({first_line(exc)})")
    finally:
        node.finish()


async def _all_unchecked(ctx: Context, text: str, reason: str) -> list[dict[str, Any]]:
    """Every sentence of ``text`` ``unchecked`` (split in a worker thread: pySBD is CPU
    work); the whole answer as one such entry should even that fail."""
    work = functools.partial(unchecked, text, reason,
                             citation_format=ctx.config.citation.format)
    try:
        return [g.to_dict() for g in await anyio.to_thread.run_sync(work, limiter=_limiter())]
    except Exception:
        core = text.strip()
        start = text.find(core) if core else 0
        return [{"text": core, "start": start, "end": start + len(core),
                 "status": "unchecked", "cited": [], "support": [], "reason": reason}
                ] if core else []


_NOTICE_HEAD, _, _NOTICE_TAIL = OFFLINE_NOTICE.partition("{reason}")


def _own_notice(entry: dict[str, Any]) -> dict[str, Any]:
    """The offline responder's notice ("I am offline (…), so I cannot compose an answer.")
    is the stream's own sentence: nothing a reference could support (its reason names
    settings such as an environment variable, which read as names)."""
    text = str(entry.get("text", "")).strip()
    if text.startswith(_NOTICE_HEAD) and text.endswith(_NOTICE_TAIL):
        return entry | {"status": "no_claim", "support": [],
                        "reason": "the offline responder's own notice"}
    return entry


def added_citations(grounding: Sequence[dict[str, Any]], used: Sequence[str]) -> list[str]:
    """Citation ids the grounding found support in that the answer did not cite."""
    seen = set(used)
    out: list[str] = []
    for entry in grounding:
        for cid in entry.get("support", ()):
            if cid not in seen:
                seen.add(cid)
                out.append(cid)
    return out
