"""The offline responder: what the assistant says when no LLM is configured.

It is extractive: for each of the top references it picks the sentences that share the
most words with the question, cites the reference, and says plainly that it is offline.
A database record is quoted as :mod:`agent_search.agent._record_text` renders it (the
rendering the grounding checks it against), and a question asking how many gets the
count its database search reported. No model, no network, deterministic.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence

import anyio

from agent_search.agent._record_text import (
    count_sentence,
    is_aggregate,
    list_sentence,
    record_fields,
    record_prose,
    render_fields,
)
from agent_search.agent.llm._quotes import Unit, best_units, fence, words
from agent_search.citation import format_marker, join_with_markers
from agent_search.language import ENGLISH
from agent_search.types import ResultItem

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
    return words(text, ENGLISH.stopwords)


def _best_sentences(question: str, content: str, max_chars: int = _MAX_SNIPPET_CHARS) -> str:
    """The whole sentences sharing words with the question (best first, shown in text
    order), as one line of prose; the opening sentence when none does."""
    return " ".join(u.text for u in best_units(question, content, max_chars, ENGLISH.stopwords)
                    if u.text)


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


def _quote(question: str, item: ResultItem) -> tuple[str, list[Unit]]:
    """(title, what is quoted) of one reference: whole sentences, code as code
    (:mod:`agent_search.agent.llm._quotes`), a record's prose and fields."""
    title = _one_line(item.title or item.url or item.model or item.type or "reference",
                      _MAX_TITLE_CHARS) or "reference"
    if item.data:
        return _record_quote(question, item, title)
    quoted = best_units(question, item.content[:_MAX_SCANNED_CHARS], _MAX_SNIPPET_CHARS,
                        ENGLISH.stopwords)
    return title, quoted or [Unit(title)]


def _record_quote(question: str, item: ResultItem, title: str) -> tuple[str, list[Unit]]:
    """A record's quote: its prose's best sentences with the fields the question names
    (an aggregate's figures alone, without a title)."""
    facts = _record_facts(question, item)
    if is_aggregate(item):
        return "", [Unit(facts or title)]
    prose = _best_sentences(question, record_prose(item)[:_MAX_SCANNED_CHARS])
    return title, [Unit(f"{prose} ({facts})" if prose and facts else prose or facts or title)]


def _bullet(title: str, quoted: Sequence[Unit]) -> str:
    """One reference's line of the answer: its sentences on the line, a code block a
    sentence introduces right after it, inside the list item (then the prose goes on
    in a paragraph of the item)."""
    out = f"\n- {title}: " if title else "\n- "
    line: list[str] = []
    for unit in quoted:
        if unit.text:
            line.append(_one_line(unit.text, 2 * _MAX_SNIPPET_CHARS))
        if unit.code is not None:
            out += " ".join(line) + ("\n\n" if line else "") + fence(unit.code, "  ") + "\n\n  "
            line = []
    return out + " ".join(line) + (" " if line else "")


OFFLINE_NOTICE = "I am offline ({reason}), so I cannot compose an answer."
"""The offline answer's first sentence: the responder's own notice, not a claim from a
reference (the stream's grounding marks it ``no_claim``)."""


def _count_parts(question: str, references: Sequence[ResultItem], counts: Mapping[str, int],
                 fmt: str, quoted: Sequence[ResultItem]) -> list[tuple[str, bool]]:
    """The count of matching records, once per database search (cited with that
    search's first record among the references, quoted below or not: documents may
    outrank the records, the count is still the answer): for a question asking how
    many, and for a list whose records quoted below are fewer than those that match."""
    if not counts:
        return []
    counting = asks_count(question)
    parts: list[tuple[str, bool]] = []
    for item, total in _first_of_each_count(references, counts):
        if len(parts) == 2 * _MAX_COUNTS:  # two parts per count said
            break
        if counting or 0 < _quoted_of(item, total, quoted, counts) < total:
            sentence = count_sentence(item, total) if counting else list_sentence(item, total)
            parts += [(f"\n\n{sentence} ", False),
                      (format_marker(item.citation_id or "", fmt), True)]
    return parts


def _quoted_of(item: ResultItem, total: int, quoted: Sequence[ResultItem],
               counts: Mapping[str, int]) -> int:
    """How many of the records quoted below come from ``item``'s search (its model,
    its count)."""
    return sum(q.model == item.model and counts.get(q.citation_id or "") == total
               for q in quoted)


def _first_of_each_count(references: Sequence[ResultItem], counts: Mapping[str, int]
                         ) -> Iterator[tuple[ResultItem, int]]:
    """Each reference with a count (its database search's), and the count; once per
    model and count, the first such reference."""
    seen: set[tuple[str | None, int]] = set()
    for item in references:
        total = counts.get(item.citation_id or "")
        if total is not None and (item.model, total) not in seen:
            seen.add((item.model, total))
            yield item, total


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
    cited = [r for r in references if r.citation_id]
    top = cited[:max_references]
    head = OFFLINE_NOTICE.format(reason=_one_line(reason, 300))
    if not top:
        return join_with_markers([(head + " " + _nothing_found(searched, failed), False)], fmt)
    parts: list[tuple[str, bool]] = [(head + " Here is what the top references say:", False)]
    parts += _count_parts(question, cited, counts or {}, fmt, top)
    parts.append(("\n", False))
    for item in top:
        parts += [(_bullet(*_quote(question, item)), False),
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
