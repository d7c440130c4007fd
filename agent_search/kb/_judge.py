"""An optional answerability judge: an OpenAI-compatible chat model asked which of the
top passages answer the question (``kb.judge_url`` and ``kb.judge_model``; off by
default).

The scores say how far a passage stands above unrelated text, and the foreign-word rule
(:mod:`agent_search.kb._retrieval._foreign`) what the question names that the passage
does not; neither reads the passage. A question about a neighbouring tool that a page
mentions in passing still gets a confident hit. Where an assistant has a model, it can
read the question and the first :attr:`~agent_search.kb.settings.KBSettings.judge_passages`
passages and say which answer it. A passage it rejects scores 0 (under any floor); the
hits below the judged ones are capped by the lowest one it kept, or 0 when it kept none.

One call per search, bounded by ``kb.judge_timeout``. When the endpoint fails, stalls or
answers something else than the JSON asked for, the hits are kept as they were and the
result carries a warning saying why: a judge that cannot judge never costs an answer.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from agent_search.kb._retrieval import Hit
    from agent_search.kb.settings import KBSettings

PASSAGE_CHARS = 1_500
"""Most characters of one passage sent to the judge (a chunk is ~256 tokens)."""
REPLY_CHARS = 4_000
"""Most characters of the judge's reply read (the answer asked for is a short list)."""
_JSON = re.compile(r"\{.*\}", re.DOTALL)
_SYSTEM = ("You check search results. Say which passages answer the user's question "
           "(not merely mention its words or a related tool). Answer with the JSON asked "
           "for, nothing else.")


def _task(query: str, hits: list[tuple[str, Hit]]) -> str:
    passages = [{"n": n, "title": str(h.payload.get("title") or ""),
                 "text": str(h.payload.get("content") or "")[:PASSAGE_CHARS]}
                for n, (_, h) in enumerate(hits, start=1)]
    return json.dumps({"question": query, "passages": passages,
                       "answer": 'JSON {"answering": [numbers of the passages that answer '
                                 'the question; [] when none does]}'}, ensure_ascii=False)


def parse(text: str, count: int) -> set[int] | None:
    """The passage numbers (1..``count``) of the judge's reply, or None when the reply is
    not the JSON asked for."""
    match = _JSON.search(text)
    try:
        reply: Any = json.loads(match.group(0)) if match else None
    except ValueError:
        return None
    values = reply.get("answering") if isinstance(reply, dict) else None
    if not isinstance(values, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in values):
        return None
    return {v for v in values if 1 <= v <= count}


def apply(hits: list[tuple[str, Hit]], judged: int, answering: set[int]
          ) -> list[tuple[str, Hit]]:
    """``hits`` (ranked) with the first ``judged`` scored by the verdict: a rejected one
    0, an accepted one as it was; those below capped by the lowest accepted score."""
    out: list[tuple[str, Hit]] = []
    floor = min((hits[n - 1][1].score for n in answering), default=0.0)
    for n, (collection, hit) in enumerate(hits, start=1):
        kept = hit.score if n in answering else 0.0
        out.append((collection, replace(hit, score=kept if n <= judged
                                        else min(hit.score, floor))))
    return out


async def judge(settings: KBSettings, query: str, hits: list[tuple[str, Hit]]
                ) -> tuple[list[tuple[str, Hit]], str | None]:
    """``hits`` (ranked) after the judge's verdict on the first ones, and a warning when
    it gave none (the hits then unchanged)."""
    from agent_search._assembly import chat_client
    from agent_search.errors import RunError

    if not hits or not settings.judge_url or not settings.judge_model:
        return hits, None
    top = hits[:settings.judge_passages]
    seconds = float(settings.judge_timeout)
    text = ""
    client = chat_client()("kb judge", base_url=settings.judge_url,
                           model=settings.judge_model,
                           api_key_env=settings.judge_api_key_env, timeout=seconds)
    try:
        with anyio.move_on_after(seconds) as scope:
            async for event in client.stream_chat([
                    {"role": "system", "content": _SYSTEM},
                    {"role": "user", "content": _task(query, top)}]):
                if event.kind == "text":
                    text += event.text
                if len(text) > REPLY_CHARS:
                    break
        if scope.cancelled_caught:
            return hits, f"kb judge: no answer within {seconds:g} s; hits kept unjudged"
    except RunError as exc:  # the endpoint failed (the client's LLMError)
        return hits, f"kb judge: {exc}; hits kept unjudged"
    finally:
        await client.aclose()
    answering = parse(text, len(top))
    if answering is None:
        return hits, "kb judge: its answer was not the JSON asked for; hits kept unjudged"
    return apply(hits, len(top), answering), None
