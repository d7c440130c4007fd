"""The builtin generator: :func:`~agent_search.query.nl._parser.parse` behind the
:class:`~agent_search.query.dsl.DSLGenerator` interface, with its work bounded."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import anyio

from agent_search.query.dsl import ModelSchema
from agent_search.query.nl._parser import parse
from agent_search.query.nl._values import FUZZY_CUTOFF

MAX_ANALYSED_CHARS = 500
"""Longer queries are analysed on their first 500 characters (bounded work per search)."""
INLINE_CHARS = 200
INLINE_VALUES = 2_000
"""Queries up to INLINE_CHARS long, against schemas with at most INLINE_VALUES known values,
are parsed on the event loop (about a millisecond); anything bigger in a worker thread
(fuzzy matching costs query length × values)."""


class BuiltinDSLGenerator:
    """Rule-based generator (see :mod:`agent_search.query.nl`). ``strict`` makes a query it
    cannot read an error instead of a text-match fallback; ``now`` is injectable for
    relative dates."""

    name = "builtin"

    def __init__(self, *, strict: bool = False, fuzzy_cutoff: float = FUZZY_CUTOFF,
                 now: Callable[[], dt.datetime] | None = None) -> None:
        self.strict = strict
        self.fuzzy_cutoff = fuzzy_cutoff
        self.now = now or dt.datetime.now

    async def generate(self, query: str, schemas: Sequence[ModelSchema], *,
                       feedback: str | None = None) -> dict[str, Any]:
        truncated = len(query) > MAX_ANALYSED_CHARS
        if truncated:  # a question, not a document: its head says what is asked
            cut = query[:MAX_ANALYSED_CHARS]
            query = cut.rsplit(None, 1)[0] if " " in cut.strip() else cut
        run = partial(parse, query, list(schemas), now=self.now(), strict=self.strict,
                      fuzzy_cutoff=self.fuzzy_cutoff)
        values = sum(len(f.values) for s in schemas for f in s.fields)
        if len(query) > INLINE_CHARS or values > INLINE_VALUES:  # keep the event loop free
            out = await anyio.to_thread.run_sync(run)
        else:
            out = run()
        if truncated:
            out["warnings"] = [*out.get("warnings", []),
                               f"only the first {MAX_ANALYSED_CHARS} characters of the query "
                               "were analysed"]
        return out
