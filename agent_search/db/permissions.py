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


def permission_clause(perm: PermissionColumns, user_id: str | None,
                      team_id: str | None) -> sa.ColumnElement[bool]:
    """The visibility condition for a caller (``false`` when nothing is visible)."""
    allowed: list[sa.ColumnElement[bool]] = []
    if perm.public is not None:
        allowed.append(perm.public == sa.true())
    if perm.created_by is not None and user_id:
        owner = _identity_value(perm.created_by, user_id)
        if owner is not None:
            allowed.append(perm.created_by == owner)
    if perm.team_id is not None and team_id:
        team = _identity_value(perm.team_id, team_id)
        if team is not None:
            same_team = perm.team_id == team
            if perm.share is not None:
                same_team = sa.and_(same_team, perm.share == SHARE_TEAM)
            allowed.append(same_team)
    if not allowed:
        return sa.false()
    return sa.or_(*allowed)


def _identity_value(col: sa.Column[Any], value: str) -> Any:
    """A caller id in the column's type; None if it can't be one (then it matches
    nothing rather than erroring or matching loosely)."""
    if isinstance(col.type, sa.Integer):
        try:
            return int(value)
        except ValueError:
            return None
    return str(value)
