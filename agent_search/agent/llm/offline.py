"""The offline responder: what the assistant says when no LLM is configured.

It is extractive: for each of the top references it picks the sentences that share the
most words with the question, cites the reference, and says plainly that it is offline.
No model, no network, deterministic.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence

import anyio

from agent_search.citation import format_marker, join_with_markers
from agent_search.query.stopwords import ENGLISH
from agent_search.types import ResultItem

_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_WORD = re.compile(r"\w+", re.UNICODE)
_MAX_TITLE_CHARS = 120
_MAX_SNIPPET_CHARS = 320
_MAX_SCANNED_CHARS = 20_000
"""Content read for sentences (a web page can be long; the best sentence is near the top
in practice, and splitting megabytes would stall the event loop)."""


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if w.lower() not in ENGLISH and len(w) > 1}


def _best_sentences(question: str, content: str, max_chars: int = _MAX_SNIPPET_CHARS) -> str:
    """The sentences sharing words with the question (best first, shown in text order);
    the opening sentence when none does."""
    sentences = [s.strip() for s in _SENTENCE.split(content) if s and s.strip()]
    if not sentences:
        return ""
    q = _words(question)
    overlap = [len(q & _words(s)) for s in sentences]
    ranked = sorted((i for i in range(len(sentences)) if overlap[i] > 0),
                    key=lambda i: (-overlap[i], i)) or [0]
    chosen: list[int] = []
    length = 0
    for i in ranked:
        if chosen and length + len(sentences[i]) > max_chars:
            break
        chosen.append(i)
        length += len(sentences[i])
    text = " ".join(sentences[i] for i in sorted(chosen))
    return text if len(text) <= max_chars else text[: max_chars - 1].rstrip() + "…"


_SKIP_FIELDS = frozenset({"id", "name", "title", "description", "created_at", "updated_at",
                          "deleted_at"})
_MAX_FIELDS = 4


def _record_facts(question: str, data: dict[str, object]) -> str:
    """A few fields of a database row: those the question mentions first, then other
    short scalar fields (ids, permission columns and long text left out)."""
    q = _words(question)
    fields = [k for k, v in data.items()
              if k not in _SKIP_FIELDS and not k.startswith("__")
              and isinstance(v, str | int | float | bool) and len(str(v)) <= 40]
    mentioned = [k for k in fields if k.lower() in q]
    ordered = mentioned + [k for k in fields if k not in mentioned]
    return ", ".join(f"{k}: {data[k]}" for k in ordered[:_MAX_FIELDS])


def _describe(question: str, item: ResultItem) -> str:
    text = item.content[:_MAX_SCANNED_CHARS].strip()
    if item.data:
        facts = _record_facts(question, item.data)
        if facts:
            text = _best_sentences(question, text) if text else ""
            return f"{text} ({facts})" if text else facts
    return text or item.title or ""


OFFLINE_NOTICE = "I am offline ({reason}), so I cannot compose an answer."
"""The offline answer's first sentence: the responder's own notice, not a claim from a
reference (the stream's grounding marks it ``no_claim``)."""


def offline_answer(question: str, references: Sequence[ResultItem], *, reason: str,
                   fmt: str = "#ref:{id}", max_references: int = 3, searched: bool = True,
                   failed: Sequence[str] = ()) -> str:
    """The whole offline answer as text.

    Result text and the reason are untrusted: they go through :func:`join_with_markers`,
    so the only citation markers in the answer are the ones written here, one per
    reference quoted (a result saying "see #ref:4" cannot make 4 count as cited).
    With nothing to cite it says so (``searched``: whether any search ran; ``failed``:
    the search types that failed) rather than answering from nothing."""
    top = [r for r in references if r.citation_id][:max_references]
    head = OFFLINE_NOTICE.format(reason=_one_line(reason, 300))
    if not top:
        return join_with_markers([(head + " " + _nothing_found(searched, failed), False)], fmt)
    parts: list[tuple[str, bool]] = [(head + " Here is what the top references say:\n", False)]
    for item in top:
        title = _one_line(item.title or item.url or item.model or item.type or "reference",
                          _MAX_TITLE_CHARS) or "reference"
        described = _describe(question, item)
        snippet = (described if item.data else _best_sentences(question, described)) or title
        parts += [(f"\n- {title}: {_one_line(snippet, 2 * _MAX_SNIPPET_CHARS)} ", False),
                  (format_marker(item.citation_id or "", fmt), True)]
    return join_with_markers(parts, fmt)


def _nothing_found(searched: bool, failed: Sequence[str]) -> str:
    if not searched:
        return "No search was run for this question, so I have no reference to show."
    text = "I found no relevant reference for this question, so I have nothing to cite."
    if failed:
        kinds = ", ".join(_one_line(f, 32) for f in failed[:5])
        text += f" Some searches failed ({kinds}); a relevant source may exist."
    return text


def _one_line(text: str, limit: int) -> str:
    return " ".join(text[: limit * 2].split())[:limit]


async def stream_offline_answer(question: str, references: Sequence[ResultItem], *,
                                reason: str, fmt: str = "#ref:{id}", searched: bool = True,
                                failed: Sequence[str] = ()) -> AsyncIterator[str]:
    """The offline answer in word-sized chunks, like a model would stream it."""
    text = offline_answer(question, references, reason=reason, fmt=fmt, searched=searched,
                          failed=failed)
    for piece in re.findall(r"\S+\s*|\s+", text):
        yield piece
        await anyio.lowlevel.checkpoint()
