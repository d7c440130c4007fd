"""Opaque cursors for paged listings (kb documents, search records; issue 33 item 3).

A cursor says where the next page starts (the engine's scroll offset, the last record's
time and id) and *whose listing it belongs to*: a digest of its scope — the route, the
collection, the caller's user and team. A request reads a cursor only against its own
scope, computed from the request (the authenticated caller, the collection in the path),
never from the cursor, so a cursor made for another caller or another collection, or one
edited by hand, is refused (:class:`CursorError`, a 422 naming ``cursor``). The position
inside is validated before it reaches a store, and every page is still filtered by what
the caller may read: a cursor can only say where to start reading one's own listing.
Cursors are base64url JSON, at most :data:`MAX_CURSOR` characters; they carry no secret
and need none (every worker of a deployment reads every other's).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any

from agent_search.errors import InputError

MAX_CURSOR = 512
MAX_LIMIT = 1000
"""The largest page a listing returns (``limit`` above it is refused)."""
DEFAULT_LIMIT = 100


class CursorError(InputError):
    """The cursor is not one of this listing (malformed, altered, or another scope's)."""


def _digest(scope: tuple[str, ...]) -> str:
    return hashlib.sha256("\x00".join(scope).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def make_cursor(scope: tuple[str, ...], position: dict[str, Any]) -> str:
    """The cursor of ``position`` in the listing ``scope``."""
    raw = json.dumps({"v": 1, "s": _digest(scope), "p": position}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def read_cursor(cursor: str, scope: tuple[str, ...]) -> dict[str, Any]:
    """The position a cursor of ``scope`` holds; :class:`CursorError` otherwise."""
    bad = CursorError("cursor: not a cursor of this listing (pass the next_cursor of the "
                      "previous page of the same listing, unchanged)")
    if not cursor or len(cursor) > MAX_CURSOR:
        raise bad
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError) as exc:
        raise bad from exc
    if not isinstance(data, dict) or data.get("v") != 1 or data.get("s") != _digest(scope) \
            or not isinstance(data.get("p"), dict):
        raise bad
    position: dict[str, Any] = data["p"]
    return position


def check_limit(limit: int) -> int:
    """``limit`` within 1..:data:`MAX_LIMIT`; ``ValueError`` naming it otherwise."""
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit: a page holds 1 to {MAX_LIMIT} items, not {limit}")
    return limit
