"""Is the finished reading's *shape* the one the words ask for? The last check before a
search: a reason to answer nothing when it is not.

The parser's own checks (:mod:`._unsure`) compare the question with the plan while it is
being built; later steps (groups kept or dropped when the answer moves to another table,
a superlative's order given to records that became groups, a retarget) can leave a
reading whose shape no longer matches the words. These checks read only the question's
text and the DSL that will be run, so they mean the same on any schema and for any
generator of the reading:

- a **superlative** ("the most common hometown", "which grade has the most students")
  with nothing ordered and no maximum or minimum computed: every row or group is shown,
  not the one asked for;
- a **count** asked ("how many", "the number of") with nothing counted: no total asked
  for, no count computed, compared or ordered by, and no field holding a number of
  things stated ("``Num_Employees``");
- a number asked **per group** ("the number of matches *in different* competitions",
  "the average age *for each* job", "different publishers *together with* the number of
  publications") with no group formed: one number over every row is not it.

Each check is one regular expression of the language (English; a Chinese question is
read by the parser's own checks) and one test of the DSL, in :data:`CHECKS`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from agent_search.language import HAN_CHAR, normal_form
from agent_search.query.dsl import ModelSchema
from agent_search.query.nl._answer._stated import NAMES, VALUES
from agent_search.query.nl._answer._unsure import DISTINCT_COUNT, EXTREME
from agent_search.query.nl._lexicon import words_of
from agent_search.query.nl._reading._schema import model_mentions

_AMOUNT = (r"(?<!maximum )(?<!minimum )(?<!average )(?<!total )(?<!highest )(?<!lowest )"
           r"(?<!largest )(?<!smallest )(?<!greatest )(?<!max )(?<!min )")
COUNT_ASKED = re.compile(_AMOUNT + r"\b(?:how many|number of|count(?:s|ing)?)\b", re.I)
"""Words asking for a number of things (grammar, not a schema); "the maximum number of
final tables" asks for an amount, which an aggregate of a field gives."""
NUMBER_ASKED = re.compile(r"\b(?:how many|number of(?!\s+(?:each|every)\b)|count|average|"
                          r"avg|mean|total|sum|maximum|minimum)\b", re.I)
"""Words asking for a number computed over rows."""
PER_GROUP = re.compile(
    r"\b(?:for|in|of|by|to|within|across)\s+(?:each|every|different|various|all\s+the\s+"
    r"different)\b|\bper\b|\beach\s+of\b|\bgrouped\s+by\b|"
    r"(?<!how many )(?<!number of )(?<!count )(?<!count the )\b(?:different|each|every)\s+"
    r"\w+(?:\s+\w+)?\s+(?:and|with|together with|along with)\s+(?:the\s+|their\s+|its\s+)?"
    r"(?:number|count|total|average|sum)\b", re.I)
"""A number asked of each group ("in each district", "per year", "different publishers
together with the number of …")."""
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'|`[^`]*`|“[^”]*”")
_COUNTED_WORDS = frozenset({"num", "number", "count", "cnt", "no", "total"})
"""Words of a field's name saying it holds a number of things (``Num_Employees``,
``number_of_platforms``, ``AlbumCount``): "the number of employees" may name it."""

Check = Callable[[str, str, Sequence[Mapping[str, Any]], Sequence[ModelSchema]], "str | None"]


def unaccounted(query: str, out: Mapping[str, Any],
                schemas: Sequence[ModelSchema]) -> str | None:
    """The first reason (of :data:`CHECKS`) the reading ``out`` of ``query`` does not have
    the shape its words ask for, or None (also for a reading that searches nothing)."""
    queries = queries_of(out)
    if not queries or HAN_CHAR.search(query):
        return None
    text = _outside_quotes(query)
    for check in CHECKS:
        reason = check(query, text, queries, schemas)
        if reason is not None:
            return reason
    return None


def queries_of(out: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The DSL queries of a reading: its ``queries``, or the reading itself."""
    if "queries" in out:
        return [q for q in out["queries"] if isinstance(q, Mapping)]
    return [out] if "model" in out else []


def _outside_quotes(query: str) -> str:
    """The question with quoted words blanked (a quoted value asks for nothing)."""
    return _QUOTED.sub(lambda m: " " * len(m.group(0)), query)


def _said(pattern: re.Pattern[str], query: str, text: str,
          queries: Sequence[Mapping[str, Any]]) -> Iterator[re.Match[str]]:
    """Matches of ``pattern`` outside quotes, not written as a name (capitalised
    mid-sentence: "Greatest Hits") and not inside a value a condition compares with."""
    values = " ".join(VALUES.strings(queries)).lower()
    for m in pattern.finditer(text.lower()):
        if m.start() > 0 and query[m.start()].isupper():
            continue
        if m.group(0).lower() in values:
            continue
        yield m


def _field_words(schemas: Sequence[ModelSchema]) -> set[str]:
    """The words of every field's name ("highest" of ``Highest_Point``)."""
    return {w for s in schemas for f in s.fields for w in words_of(f.name).split()}


def superlative_unordered(query: str, text: str, queries: Sequence[Mapping[str, Any]],
                          schemas: Sequence[ModelSchema]) -> str | None:
    """A superlative with nothing ordered and no maximum or minimum computed."""
    for q in queries:
        if q.get("orders") or any(re.match(r"\s*(?:max|min)\s*\(", str(a), re.I)
                                  for a in q.get("aggregates") or []):
            return None
    names = _field_words(schemas)
    for m in _said(EXTREME, query, text, queries):
        if m.group(0).lower() not in names:
            return (f"{m.group(0).lower()!r} asks for the highest or lowest, and nothing "
                    "is ordered or taken at its extreme; no rows are shown (they would "
                    "not be the one asked for)")
    return None


def count_uncounted(query: str, text: str, queries: Sequence[Mapping[str, Any]],
                    schemas: Sequence[ModelSchema]) -> str | None:
    """A count asked, nothing counted (see the module)."""
    for q in queries:
        if q.get("total_asked") or any("count" in n.lower() or _COUNTED_WORDS & set(
                words_of(n).split()) for n in NAMES.strings(q)):
            return None
    m = next(_said(COUNT_ASKED, query, text, queries), None)
    if m is None:
        return None
    return (f"{m.group(0).lower()!r} asks for a number of things, and nothing is counted; "
            "no rows are shown (they are not the number asked for)")


def group_not_formed(query: str, text: str, queries: Sequence[Mapping[str, Any]],
                     schemas: Sequence[ModelSchema]) -> str | None:
    """A number asked per group, no group formed (see the module)."""
    if any(q.get("group_by") for q in queries):
        return None
    text = DISTINCT_COUNT.sub(lambda m: " " * len(m.group(0)), text)  # distinct values
    if next(_said(NUMBER_ASKED, query, text, queries), None) is None:
        return None
    starts = _answered_starts(query, queries, schemas)
    m = next((m for m in _said(PER_GROUP, query, text, queries)
              if not _names_answered(m, text, starts)), None)
    if m is None:
        return None
    return (f"{' '.join(m.group(0).lower().split())!r} asks for a number per group, and no "
            "group is formed; nothing is shown (one number over every row is not it)")


def _answered_starts(query: str, queries: Sequence[Mapping[str, Any]],
                     schemas: Sequence[ModelSchema]) -> set[int]:
    """Where the question names a table the queries answer on."""
    answered = {str(q.get("model", "")).lower() for q in queries}
    return {a for model, spans in model_mentions(normal_form(query), schemas).items()
            if model.lower() in answered for a, _ in spans}


def _names_answered(m: re.Match[str], text: str, starts: set[int]) -> bool:
    """The group word is followed by the answered table's own name ("the room count of
    *each apartment*" asked of apartments): one number per row, no group."""
    rest = m.end()
    if m.group(0).lower().rstrip().endswith(("each", "every", "different", "various")):
        rest += len(text[rest:]) - len(text[rest:].lstrip())
        return rest in starts
    return any(a in starts for a in range(m.start(), m.end()))


CHECKS: tuple[Check, ...] = (superlative_unordered, count_uncounted, group_not_formed)
"""The checks, in the order their reasons are given (one reason per question)."""
