"""How the stream quotes a database record, in one place.

The offline responder quotes records and the grounding checks the answer against its
references: both read a record through :func:`record_passage` and :func:`record_fields`,
so a field the responder quotes is, word for word, in the passage the grounding checks
(they used to disagree: the db handler joins fields with ``;``, which the grounding reads
as sentence ends, so a quote of five fields found at best two of them in one window and
was flagged unsupported). A result's count of matching records (``Result.total``) is a
fact of its records too: :func:`count_sentence` says it the same way to the model, in the
offline answer and in the grounding's passage.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agent_search._text import shown_number
from agent_search.types import Result, ResultItem

AGGREGATE = "aggregate"
"""``metadata.kind`` of a database answer row (a count, an average, one per group)."""

_FIELD_PART = re.compile(r"([^:;]{1,80}): ")


def is_record(item: ResultItem) -> bool:
    """A database row or answer row (its fields are in ``data``)."""
    return bool(item.data)


def is_aggregate(item: ResultItem) -> bool:
    return item.metadata.get("kind") == AGGREGATE


def _fields_only(item: ResultItem) -> bool:
    """Whether the item's content is only its fields rendered as ``name: value`` parts
    (what the db handler writes when a row has no text column), not prose of its own."""
    keys = {str(k) for k in (item.data or {})} | {str(k) for k in _related(item)}
    parts = [p for p in item.content.split("; ") if p.strip()]
    if not parts:
        return True
    for part in parts:
        m = _FIELD_PART.match(part)
        if m is None or m.group(1) not in keys:
            return False
    return True


def _related(item: ResultItem) -> Mapping[str, Any]:
    related = item.metadata.get("related")
    return related if isinstance(related, Mapping) else {}


def record_prose(item: ResultItem) -> str:
    """The record's own text (a description), or "" when its content only lists fields."""
    return "" if _fields_only(item) else item.content.strip()


def record_fields(item: ResultItem) -> list[tuple[str, str]]:
    """The record's fields as (name, value) text, in order: related records' titles
    first, then the row's fields. Left out: internal fields (``__*``), empty values, and
    the values already said by the title or the prose (a name, a description)."""
    said = {(item.title or "").strip(), record_prose(item)}
    related = _related(item)
    keys = {_key_of(str(k)) for k in related}
    out: dict[str, str] = {}
    for key, value in [*related.items(), *(item.data or {}).items()]:
        name = str(key)
        # left out: internal or empty, or the foreign key ("product_id") of a related
        # title shown ("product")
        if not _shown(name, value) or (name not in related and _key_of(name) in keys):
            continue
        text = " ".join(shown_number(value).split())
        if text and text not in said:
            out.setdefault(name, text)
    return list(out.items())


def _shown(name: str, value: Any) -> bool:
    """Whether a field is for the reader: not internal (``__*``), not empty, not a
    nested object or list."""
    return not name.startswith("__") and value is not None \
        and not isinstance(value, dict | list)


def _key_of(name: str) -> str:
    """A field name without an id suffix, lower case: "product_id", "ProductId" and
    "product" are one key."""
    low = name.lower()
    for suffix in ("_id", "id"):
        if low.endswith(suffix) and len(low) > len(suffix):
            return low[: -len(suffix)].rstrip("_")
    return low


def render_fields(fields: list[tuple[str, str]]) -> str:
    """``name: value, name: value`` — commas, never a sentence end between two fields, so
    every field of a record sits in one sentence of its passage."""
    return ", ".join(f"{name}: {value}" for name, value in fields)


def count_sentence(item: ResultItem, total: int) -> str:
    """What a search's count of matching records says, for one of its records. Where a
    permission filter applied, it counts what the caller may see, and says so."""
    where = item.metadata.get("table") or item.model or "the database"
    noun = "record" if total == 1 else "records"
    verb = "is" if total == 1 else "are"
    if visible_only(item):
        return f"{total} matching {noun} in {where} {verb} visible to you."
    return f"There {verb} {total} matching {noun} in {where}."


def list_sentence(item: ResultItem, total: int) -> str:
    """A list answer's total: how many records match beside the few quoted (no count of
    those few: a number no reference states reads as a claim to the grounding)."""
    return count_sentence(item, total)[:-1] + "; the top ones are quoted below."


def visible_only(item: ResultItem) -> bool:
    """Whether the record's search counted only what the caller may see (its table has
    permission columns)."""
    return bool(item.metadata.get("permission_filtered"))


def record_passage(item: ResultItem, total: int | None = None) -> str:
    """The text of a record as the grounding reads it: its prose, all its fields on one
    line, and the count of its search when one was asked for."""
    lines = [record_prose(item), render_fields(record_fields(item))]
    if total is not None:
        lines.append(count_sentence(item, total))
    return "\n".join(line for line in lines if line)


def record_counts(results: list[Result]) -> dict[str, int]:
    """Citation id → the count of matching records of the db search that found it, for
    searches that returned records (an aggregate's rows carry their own numbers)."""
    out: dict[str, int] = {}
    for result in filter(_lists_records, results):
        for item in result.items:
            if item.citation_id and is_record(item):
                out.setdefault(item.citation_id, result.total)
    return out


def _lists_records(result: Result) -> bool:
    """A db search that returned records (not an error, nothing, or aggregate rows)."""
    if result.type != "db" or result.error or not result.items:
        return False
    return not any(is_aggregate(i) for i in result.items)


def grounding_passages(references: list[ResultItem], counts: Mapping[str, int]
                       ) -> list[Any]:
    """The references as the grounding should read them: a record as its passage (one
    rendering with the responder's quotes, see the module docstring), anything else as
    it is."""
    out: list[Any] = []
    for item in references:
        if not is_record(item):
            out.append(item)
            continue
        out.append({"citation_id": item.citation_id,
                    "title": "" if is_aggregate(item) else item.title or "",
                    "content": record_passage(item, counts.get(item.citation_id or ""))})
    return out


def with_counts(references: list[ResultItem], counts: Mapping[str, int]
                ) -> list[ResultItem]:
    """The references for the model's prompt: a record whose search counted its matches
    says that count (the model would otherwise count the records it was shown)."""
    out: list[ResultItem] = []
    for item in references:
        total = counts.get(item.citation_id or "")
        if total is None:
            out.append(item)
            continue
        sentence = count_sentence(item, total)
        out.append(item.model_copy(update={"content": f"{item.content}\n{sentence}".strip()}))
    return out
