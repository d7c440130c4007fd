"""The builtin generator: :func:`~agent_search.query.nl._parser.parse` behind the
:class:`~agent_search.query.dsl.DSLGenerator` interface, with its work bounded."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import anyio

from agent_search.language import classify
from agent_search.query.dsl import DSLGenerationError, ModelSchema
from agent_search.query.nl._answer import _calibration as calibration
from agent_search.query.nl._parser import parse
from agent_search.query.nl._reading._meaning import (
    NameMeanings,
    Reading,
    doubted,
    name_text,
    rewrite,
)
from agent_search.query.nl._rules._values import FUZZY_CUTOFF

MAX_ANALYSED_CHARS = 500
"""Longer queries are analysed on their first 500 characters (bounded work per search)."""
INLINE_CHARS = 200
INLINE_VALUES = 2_000
"""Queries up to INLINE_CHARS long, against schemas with at most INLINE_VALUES known values,
are parsed on the event loop (about a millisecond); anything bigger in a worker thread
(fuzzy matching costs query length × values), and so is the first Chinese question of the
process (jieba loads its dictionary)."""


class BuiltinDSLGenerator:
    """Rule-based generator (see :mod:`agent_search.query.nl`). ``strict`` makes a query it
    cannot read an error instead of a text-match fallback; ``now`` is injectable for
    relative dates."""

    name = "builtin"

    def __init__(self, *, strict: bool = False, fuzzy_cutoff: float = FUZZY_CUTOFF,
                 now: Callable[[], dt.datetime] | None = None,
                 meanings: NameMeanings | None = None) -> None:
        self.strict = strict
        self.fuzzy_cutoff = fuzzy_cutoff
        self.now = now or dt.datetime.now
        self.meanings = meanings

    async def generate(self, query: str, schemas: Sequence[ModelSchema], *,
                       feedback: str | None = None) -> dict[str, Any]:
        truncated = len(query) > MAX_ANALYSED_CHARS
        if truncated:  # a question, not a document: its head says what is asked
            cut = query[:MAX_ANALYSED_CHARS]
            query = cut.rsplit(None, 1)[0] if " " in cut.strip() else cut
        now = self.now()
        leftover: list[str] = []
        out = await self._parse(query, schemas, now, leftover)
        similarity: float | None = None
        if leftover and self.meanings is not None:
            out, leftover, similarity = await self._by_meaning(query, schemas, now, out,
                                                               leftover)
        # right or silent: a reading that accounts for too little of the question
        out = calibration.gated(out, calibration.assess(query, out, leftover, similarity,
                                                        schemas))
        if truncated:
            out["warnings"] = [*out.get("warnings", []),
                               f"only the first {MAX_ANALYSED_CHARS} characters of the query "
                               "were analysed"]
        return out

    async def _parse(self, query: str, schemas: Sequence[ModelSchema], now: dt.datetime,
                     leftover: list[str]) -> dict[str, Any]:
        run = partial(parse, query, list(schemas), now=now, strict=self.strict,
                      fuzzy_cutoff=self.fuzzy_cutoff, leftover=leftover)
        values = sum(len(f.values) for s in schemas for f in s.fields)
        first_of_language = not classify(query).ready()  # Chinese: jieba loads (~1 s)
        if len(query) > INLINE_CHARS or values > INLINE_VALUES or first_of_language:
            return await anyio.to_thread.run_sync(run)
        return run()

    async def _by_meaning(self, query: str, schemas: Sequence[ModelSchema],
                          now: dt.datetime, out: dict[str, Any],
                          leftover: list[str]) -> tuple[dict[str, Any], list[str], float | None]:
        """A second reading with the leftover phrases replaced by the names they mean
        (:mod:`~agent_search.query.nl._reading._meaning`), kept when fewer words are left over.
        Returns the reading kept, its leftover words and the lowest similarity of the
        names it read by meaning (None: the first reading, no name read by meaning)."""
        assert self.meanings is not None
        try:
            readings = await self.meanings.readings(query, leftover, schemas)
        except Exception as exc:  # no model here (not installed, broken): names only
            out["warnings"] = [*out.get("warnings", []),
                               f"phrases not matched by meaning: {type(exc).__name__}: "
                               f"{str(exc)[:120]}"]
            return out, leftover, None
        if not readings:  # a phrase that may name a table: nothing
            return doubted(out, readings), leftover, None
        again: list[str] = []
        try:
            second = await self._parse(rewrite(query, readings), schemas, now, again)
        except DSLGenerationError:
            return out, leftover, None
        if len(again) >= len(leftover) or not _uses_a_reading(second, readings):
            # a name read but not used (no condition, order, answer on it)
            return out, leftover, None
        said = "; ".join(f"{r.phrase!r} read as {r.name!r} (by meaning, {r.similarity:.2f})"
                         for r in readings)
        second["warnings"] = [*second.get("warnings", []), said]
        return second, again, min(r.similarity for r in readings)


_FIELDS_OF = ("wheres", "orders", "group_by", "aggregates", "having")


def _uses_a_reading(dsl: dict[str, Any], readings: Sequence[Reading]) -> bool:
    """Some name read by meaning is a field of a condition, order, group or aggregate of
    ``dsl``, or its model when something is also asked of that model — not only mentioned
    ("paid" read as ``Total`` with nothing asked of the total is no better reading), and
    never a model alone, nor with only a text match of other leftover words: "how does
    search work" read as "how does search *product*" would show every product."""
    read = {r.name for r in readings}
    said: list[str] = []

    def walk(node: Any, key: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k != "value":
                    walk(v, k)
        elif isinstance(node, list):
            for v in node:
                walk(v, key)
        elif isinstance(node, str) and key in (*_FIELDS_OF, "field", "aggregate"):
            said.append(f" {name_text(node)} ")

    for query in dsl.get("queries") or [dsl]:
        for key in _FIELDS_OF:
            walk(query.get(key), key)
        model = name_text(str(query.get("model", "")).rsplit(".", 1)[-1])
        if model in read and any(query.get(k) for k in ("wheres", "group_by", "aggregates")) \
                and not query.get("terms") and not query.get("relax"):  # not a text match
            return True
    return any(f" {name} " in text for name in read for text in said)
