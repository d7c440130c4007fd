"""The grounding stage of a stream: the answer's sentences checked against the stream's
references (:mod:`agent_search.grounding`) in a worker thread, timed as a stage of the
record. A failure here never breaks the answer: the grounding is then empty and the
record has a warning saying why."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import anyio

from agent_search.agent._record_text import grounding_passages
from agent_search.agent.llm.offline import OFFLINE_NOTICE
from agent_search.agent.records import STAGE
from agent_search.context import Context
from agent_search.grounding import ground
from agent_search.trace import first_line
from agent_search.types import ResultItem


async def ground_answer(ctx: Context, text: str, references: Sequence[ResultItem],
                        counts: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """The ``grounding`` entries of ``text`` (the answer as the client saw it). Database
    records are checked as the stream quotes them (:func:`grounding_passages`), with
    their search's count of matching records (``counts``, by citation id)."""
    node = ctx.trace.child("grounding", **{STAGE: True})
    try:
        passages = grounding_passages(list(references), counts or {})
        work = functools.partial(ground, text, passages,
                                 citation_format=ctx.config.citation.format)
        return [_own_notice(g.to_dict()) for g in await anyio.to_thread.run_sync(work)]
    except Exception as exc:
        node.attributes.setdefault("warnings", []).append(
            f"grounding failed: {first_line(exc)}")
        return []
    finally:
        node.finish()


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
