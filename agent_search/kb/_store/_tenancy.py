"""Per-tenant documents: who may read a chunk, stored on the chunk, enforced by the store.

Every chunk carries an access record in its payload (``acl_*``), set at ingest from the
caller's identity (``ctx`` or given) and the document's sharing, like the database's
permission columns (:mod:`agent_search.db._permissions`):

- ``acl_share`` = ``"public"`` → visible to everyone (documents ingested with no owner and
  no team are public: the shared knowledge base of a project);
- ``acl_owner`` = the caller's ``user_id`` → visible to its owner;
- ``acl_team`` = the caller's ``team_id`` and ``acl_share`` = ``"team"`` → visible to
  the team's members.

The kb handler ANDs :func:`visibility` of the context's identity into every query it
sends to the store (prefetches, fill-ins, payload reads), below the request's own
``wheres``: no request field, hook, tool argument or MCP call can widen it. A chunk
without an access record (it cannot be written by this version) matches nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from agent_search.kb._store._filters import Group, IndexKind, Match

ACL_OWNER = "acl_owner"
ACL_TEAM = "acl_team"
ACL_SHARE = "acl_share"
SHARE_TEAM = "team"
SHARE_PUBLIC = "public"
Share = Literal["team", "private"]
MAX_ID_CHARS = 200

# one keyword field for public / team / private: qdrant-edge-py 0.9 reads a boolean match
# value as the integer 1, so a boolean flag could not be matched on the embedded store
ACL_INDEXES: dict[str, IndexKind] = {ACL_OWNER: "keyword", ACL_TEAM: "keyword",
                                     ACL_SHARE: "keyword"}


def _identity(name: str, value: str | None) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > MAX_ID_CHARS or "\x00" in value:
        raise ValueError(f"{name} must be a string of at most {MAX_ID_CHARS} characters "
                         "without NUL")
    return value


@dataclass(frozen=True, slots=True)
class Access:
    """Who may read a document's chunks."""

    owner: str | None = None
    team: str | None = None
    public: bool = True
    share: Share | None = None

    @classmethod
    def of(cls, owner: str | None = None, team: str | None = None, *,
           public: bool | None = None, share: Share | None = None) -> Access:
        """Without owner and team a document is public; with them it is private to the
        owner and, when a team is given, shared with the team (``share="team"``, the
        default then; ``share="private"`` keeps it to the owner) unless ``public``."""
        owner, team = _identity("owner", owner), _identity("team", team)
        if share not in (None, "team", "private"):
            raise ValueError(f"share must be 'team' or 'private', got {share!r}")
        if owner is None and team is None:
            return cls(public=True if public is None else public, share=share)
        if share is None:
            share = "team" if team is not None else "private"
        return cls(owner, team, bool(public), share)

    def payload(self) -> dict[str, Any]:
        return {ACL_OWNER: self.owner, ACL_TEAM: self.team,
                ACL_SHARE: SHARE_PUBLIC if self.public else (self.share or "private")}


def visibility(user_id: str | None, team_id: str | None) -> Group:
    """The filter of the chunks a caller may read (public ones only for an anonymous
    caller); an identity that is not a plausible id matches only public chunks."""
    allowed: list[Group | Match] = [Match(ACL_SHARE, SHARE_PUBLIC)]
    user = user_id if isinstance(user_id, str) and user_id and "\x00" not in user_id else None
    team = team_id if isinstance(team_id, str) and team_id and "\x00" not in team_id else None
    if user is not None:
        allowed.append(Match(ACL_OWNER, user))
    if team is not None:
        allowed.append(Group(must=(Match(ACL_TEAM, team), Match(ACL_SHARE, SHARE_TEAM))))
    return Group(should=tuple(allowed))
