"""The offline responder: what the assistant says when no LLM is configured.

It is extractive: for each of the top references it picks the sentences that share the
most words with the question, cites the reference, and says plainly that it is offline.
A database record is quoted as :mod:`agent_search.agent._record_text` renders it (the
rendering the grounding checks it against), and a question asking how many gets the
count its database search reported. No model, no network, deterministic.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping, Sequence

import anyio

from agent_search.agent._record_text import (
    count_sentence,
    is_aggregate,
    record_fields,
    record_prose,
    render_fields,
)
from agent_search.agent.llm._sentences import split_sentences
from agent_search.citation import format_marker, join_with_markers
from agent_search.query.stopwords import ENGLISH
from agent_search.types import ResultItem

_WORD = re.compile(r"\w+", re.UNICODE)
_MAX_TITLE_CHARS = 120
_MAX_SNIPPET_CHARS = 320
_MAX_SCANNED_CHARS = 20_000
"""Content read for sentences (a web page can be long; the best sentence is near the top
in practice, and splitting megabytes would stall the event loop)."""

_COUNT_QUESTION = re.compile(r"\b(?:how many|number of|count of)\b|多少[个位家条种本件名]|"
                             r"几[个位家条种本件名]|数量|总数|个数", re.IGNORECASE)
"""A question asking how many (English and Chinese): the answer states the count."""


_MAX_COUNTS = 3
"""Count sentences of one answer at most (one per database search: user data, hook and
auto searches may each have counted)."""


def asks_count(question: str) -> bool:
    return _COUNT_QUESTION.search(question) is not None


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if w.lower() not in ENGLISH and len(w) > 1}


def _best_sentences(question: str, content: str, max_chars: int = _MAX_SNIPPET_CHARS) -> str:
    """The sentences sharing words with the question (best first, shown in text order);
    the opening sentence when none does."""
    sentences = split_sentences(content)
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
_MAX_VALUE_CHARS = 40


def _record_facts(question: str, item: ResultItem) -> str:
    """A few fields of a database row: those the question mentions first, then other
    short fields (row ids, timestamps and long text left out); every field of an
    aggregate's answer row (its group and its numbers)."""
    fields = record_fields(item)
    if is_aggregate(item):
        return render_fields(fields)
    q = _words(question)
    short = [(k, v) for k, v in fields
             if k.lower() not in _SKIP_FIELDS and len(v) <= _MAX_VALUE_CHARS]
    mentioned = [f for f in short if _words(f[0]) & q]
    ordered = mentioned + [f for f in short if f not in mentioned]
    return render_fields(ordered[:_MAX_FIELDS])


def _quote(question: str, item: ResultItem) -> tuple[str, str]:
    """(title, what is quoted) of one reference."""
    title = _one_line(item.title or item.url or item.model or item.type or "reference",
                      _MAX_TITLE_CHARS) or "reference"
    if item.data:
        facts = _record_facts(question, item)
        if is_aggregate(item):
            return "", facts or title
        prose = _best_sentences(question, record_prose(item)[:_MAX_SCANNED_CHARS])
        return title, (f"{prose} ({facts})" if prose and facts else prose or facts or title)
    text = _without_code(item.content[:_MAX_SCANNED_CHARS]).strip()
    return title, (_best_sentences(question, text) if text else "") or title


_FENCED = re.compile(r"^[ \t]{0,3}(```|~~~).*?(?:^[ \t]{0,3}\1[^\n]*$|\Z)",
                     re.MULTILINE | re.DOTALL)


def _without_code(text: str) -> str:
    """The text without its fenced code blocks (a block flattened into one line of the
    answer reads as noise); the text as it is when it is nothing but code."""
    prose = _FENCED.sub("\n", text)
    return prose if prose.strip() else text


OFFLINE_NOTICE = "I am offline ({reason}), so I cannot compose an answer."
"""The offline answer's first sentence: the responder's own notice, not a claim from a
reference (the stream's grounding marks it ``no_claim``)."""


def _count_parts(question: str, references: Sequence[ResultItem], counts: Mapping[str, int],
                 fmt: str) -> list[tuple[str, bool]]:
    """The count of matching records, for a question asking how many, once per database
    search (cited with that search's first record among the references, quoted below or
    not: documents may outrank the records, the count is still the answer)."""
    if not counts or not asks_count(question):
        return []
    parts: list[tuple[str, bool]] = []
    said: set[tuple[str | None, int]] = set()
    for item in references:
        total = counts.get(item.citation_id or "")
        key = (item.model, total or 0)
        if total is None or key in said:
            continue
        if len(said) == _MAX_COUNTS:
            break
        said.add(key)
        parts += [(f"\n\n{count_sentence(item, total)} ", False),
                  (format_marker(item.citation_id or "", fmt), True)]
    return parts


def offline_answer(question: str, references: Sequence[ResultItem], *, reason: str,
                   fmt: str = "#ref:{id}", max_references: int = 3, searched: bool = True,
                   failed: Sequence[str] = (), counts: Mapping[str, int] | None = None) -> str:
    """The whole offline answer as text.

    Result text and the reason are untrusted: they go through :func:`join_with_markers`,
    so the only citation markers in the answer are the ones written here, one per
    reference quoted (a result saying "see #ref:4" cannot make 4 count as cited).
    With nothing to cite it says so (``searched``: whether any search ran; ``failed``:
    the search types that failed) rather than answering from nothing. ``counts``
    (citation id → its database search's count of matching records) answers a question
    asking how many."""
    top = [r for r in references if r.citation_id][:max_references]
    head = OFFLINE_NOTICE.format(reason=_one_line(reason, 300))
    if not top:
        return join_with_markers([(head + " " + _nothing_found(searched, failed), False)], fmt)
    parts: list[tuple[str, bool]] = [(head + " Here is what the top references say:", False)]
    cited = [r for r in references if r.citation_id]
    parts += _count_parts(question, cited, counts or {}, fmt)
    parts.append(("\n", False))
    for item in top:
        title, quoted = _quote(question, item)
        quoted = _one_line(quoted, 2 * _MAX_SNIPPET_CHARS)
        parts += [(f"\n- {title}: {quoted} " if title else f"\n- {quoted} ", False),
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
                                failed: Sequence[str] = (),
                                counts: Mapping[str, int] | None = None
                                ) -> AsyncIterator[str]:
    """The offline answer in word-sized chunks, like a model would stream it."""
    text = offline_answer(question, references, reason=reason, fmt=fmt, searched=searched,
                          failed=failed, counts=counts)
    for piece in re.findall(r"\S+\s*|\s+", text):
        yield piece
        await anyio.lowlevel.checkpoint()
