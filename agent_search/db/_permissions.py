"""Permission filters: which records a caller may see.

A table is *permission-aware* when it has ``__yao_created_by`` or ``__yao_team_id``
(Yao's permission columns; ``public`` and ``share`` refine them). For such a table every
search — hook, auto or direct, natural-language or explicit DSL, and every relation
subquery — is ANDed with this clause, built from the caller's identity in the context:

- ``public`` is true → visible to everyone;
- OwnerOnly: ``__yao_created_by`` = the caller's ``user_id`` → visible to its owner;
- TeamOnly: ``__yao_team_id`` = the caller's ``team_id`` and ``share`` = ``'team'`` (when
  the table has ``share``) → visible to the team's members.

A caller with neither a user nor a team sees only public records. The clause is added by
the query builder itself, outside the DSL, so no generated or hook-given DSL can remove it.
Tables without those columns are not filtered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

CREATED_BY = "__yao_created_by"
TEAM_ID = "__yao_team_id"
PUBLIC = "public"
SHARE = "share"
SHARE_TEAM = "team"


@dataclass(frozen=True, slots=True)
class PermissionColumns:
    created_by: Any
    team_id: Any
    public: Any
    share: Any

    @classmethod
    def of(cls, table: sa.FromClause) -> PermissionColumns | None:
        """The permission columns of ``table``, or None if it is not permission-aware."""
        cols = {c.name.lower(): c for c in table.columns}
        created_by, team_id = cols.get(CREATED_BY), cols.get(TEAM_ID)
        if created_by is None and team_id is None:
            return None
        return cls(created_by, team_id, cols.get(PUBLIC), cols.get(SHARE))

    def describe(self, user_id: str | None, team_id: str | None) -> str:
        parts = []
        if self.public is not None:
            parts.append("public")
        if self.created_by is not None and user_id:
            parts.append("owner")
        if self.team_id is not None and team_id:
            parts.append("team")
        return " or ".join(parts) or "none"


def permission_clause(perm: PermissionColumns, user_id: str | None, team_id: str | None, *,
                      include_public: bool = True) -> sa.ColumnElement[bool]:
    """The visibility condition for a caller (``false`` when nothing is visible);
    without ``include_public``, the rows visible to the caller as owner or team member."""
    ways = (perm.public == sa.true() if perm.public is not None and include_public else None,
            _as_owner(perm, user_id), _as_team_member(perm, team_id))
    allowed = [way for way in ways if way is not None]
    if not allowed:
        return sa.false()
    return sa.or_(*allowed)


def _as_owner(perm: PermissionColumns, user_id: str | None) -> sa.ColumnElement[bool] | None:
    """The rows ``user_id`` created (None: no such column, no caller, or an id that is
    not one in the column's type)."""
    if perm.created_by is None or not user_id:
        return None
    owner = identity_value(perm.created_by, user_id)
    return None if owner is None else perm.created_by == owner


def _as_team_member(perm: PermissionColumns, team_id: str | None
                    ) -> sa.ColumnElement[bool] | None:
    """The rows of team ``team_id`` shared with the team (when a share column says)."""
    if perm.team_id is None or not team_id:
        return None
    team = identity_value(perm.team_id, team_id)
    if team is None:
        return None
    same_team: sa.ColumnElement[bool] = perm.team_id == team
    if perm.share is None:
        return same_team
    return sa.and_(same_team, perm.share == SHARE_TEAM)


_CANONICAL_INT = re.compile(r"0|-?[1-9][0-9]{0,18}", re.ASCII)


def identity_value(col: Any, value: str) -> Any:
    """A caller id in the column's type, in one canonical form; None when it is not one
    (then it matches nothing rather than erroring or matching loosely).

    An integer column matches only the ASCII decimal spelling ``str(int(x))`` of a 64-bit
    integer: ``"01"``, ``" 1 "``, ``"١"``, ``"𝟏"``, ``"1\\n"`` or ``"1_2"`` are not user 1 or
    12. A text column compares the id exactly as given."""
    if "\x00" in value:
        return None
    if isinstance(col.type, sa.Integer):
        if _CANONICAL_INT.fullmatch(value) is None:
            return None
        number = int(value)
        return number if -(2 ** 63) <= number < 2 ** 63 else None
    return value
