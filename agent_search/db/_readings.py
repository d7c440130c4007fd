"""A second reading that gives other rows: one value read in two fields.

When the same words match a known value of two fields equally well ("North America" is a
``Continent`` and a ``Region``; "Iron Maiden" an album's title and its artist's name), the
builtin parser keeps both readings as an ``or`` of two conditions with the same value.
That is harmless when both readings select the same rows (a country whose ``Name`` and
``LocalName`` are both "Angola") and a guess between two answers when they do not: the
rows shown are then those of two questions at once, some of them not asked for.

:func:`either_differs` asks the database: each reading's count of matches under the
query's other conditions, and the count of both together. A branch selects a subset of
the ``or``; a branch whose count is the ``or``'s selects all of its rows. A reading
that selects nothing under the other conditions is no reading ("Jane Peacock": a support
rep named Peacock, or one whose manager is, with the first name Jane — only the first
exists); a reading that holds the others' rows is the answer of one reading ("Iron Maiden
albums": the album titled so is one of the band's). Two readings with rows, none holding
the others', make the ``or`` the answer of no reading: a reason to show nothing (right
or silent). Counting stops at :data:`CAP`: when every count reaches it the
readings cannot be told apart cheaply and the answer stands.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_search.db._builder import Caller, build_count
from agent_search.db._catalog import Catalog, ModelEntry
from agent_search.types import QueryWhere

CAP = 10_000
"""Matches counted per reading (beyond it, readings are not compared)."""
EQUALITY = frozenset({"=", "in"})


def either(where: QueryWhere) -> bool:
    """``where`` is one value read in several fields: an ``or`` of equalities with the
    same value, each on another field."""
    branches = where.or_
    if not branches or len(branches) < 2:
        return False
    if any(b.is_group or b.op not in EQUALITY for b in branches):
        return False
    fields = {b.field for b in branches}
    return len(fields) == len(branches) and all(b.value == branches[0].value
                                                for b in branches)


async def either_differs(conn: Any, catalog: Catalog, entry: ModelEntry, caller: Caller,
                         wheres: Sequence[QueryWhere]) -> str | None:
    """A reason to show nothing when a value read in two fields selects other rows in
    each (see the module), or None."""
    for i, where in enumerate(wheres):
        if not either(where):
            continue
        assert where.or_ is not None
        others = [*wheres[:i], *wheres[i + 1:]]
        counts = [await _count(conn, catalog, entry, caller, [*others, branch])
                  for branch in [where, *where.or_]]
        found = [c for c in counts[1:] if c]  # a reading that selects nothing is none
        if len(found) > 1 and counts[0] > max(found) and min(found) <= CAP:
            said = " or ".join(f"{b.field} = {b.value!r}" for b in where.or_)
            return (f"{where.or_[0].value!r} is read in two fields that select other rows "
                    f"({said}: {', '.join(map(str, counts[1:]))} matches); the question "
                    "does not say which is meant, so no rows are shown")
    return None


async def _count(conn: Any, catalog: Catalog, entry: ModelEntry, caller: Caller,
                 wheres: list[QueryWhere]) -> int:
    stmt = build_count(catalog, entry, wheres=wheres, caller=caller, cap=CAP)
    return int((await conn.execute(stmt)).scalar_one())
