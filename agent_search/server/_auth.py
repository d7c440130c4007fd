"""Who is calling: ``Authorization: Bearer <key>`` → the identity configured for that key.

Keys are compared by their SHA-256 digest in constant time, so neither the configuration
nor the process holds a key in the clear once loaded (env keys are hashed at start). With
no keys configured the service runs in *local mode*: every caller is the anonymous
identity, and the server refuses to bind to anything but loopback (see ``cli/serve.py``).
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from agent_search.server.settings import ApiKeyEntry, ServerSettings

MAX_KEY_CHARS = 512
"""Longer Authorization values are rejected before hashing (bound input before cost)."""


@dataclass(frozen=True, slots=True)
class Identity:
    """The caller. ``key_id`` names the rate-limit bucket (the key's position in the
    configuration, never the key)."""

    key_id: str
    user_id: str | None
    team_id: str | None

    @property
    def owner(self) -> str:
        """How records are owned: the same user and team see the same records."""
        return f"{self.user_id or ''}\x1f{self.team_id or ''}"


ANONYMOUS = Identity(key_id="anonymous", user_id=None, team_id=None)


class AuthError(Exception):
    """No valid key; the message is safe to show (it never echoes the key)."""


class KeyRing:
    """The configured keys as digests, each with its identity."""

    def __init__(self, settings: ServerSettings) -> None:
        self._entries = list(settings.api_keys)
        self._keys: list[tuple[bytes, Identity]] = [
            (entry.digest(), Identity(self.key_id(i), entry.user_id, entry.team_id))
            for i, entry in enumerate(self._entries)]

    @staticmethod
    def key_id(position: int) -> str:
        """The bucket name of the configured key at ``position``."""
        return f"key{position}"

    def entries(self) -> list[tuple[str, ApiKeyEntry]]:
        """Each configured key's bucket name and entry, in order."""
        return [(self.key_id(i), entry) for i, entry in enumerate(self._entries)]

    @property
    def enabled(self) -> bool:
        """False in local mode (no keys configured)."""
        return bool(self._keys)

    def identify(self, authorization: str | None) -> Identity:
        """The identity of an ``Authorization`` header value; raises :class:`AuthError`."""
        if not self._keys:
            return ANONYMOUS
        if not authorization:
            raise AuthError("missing API key: send 'Authorization: Bearer <key>'")
        if len(authorization) > MAX_KEY_CHARS + 7:
            raise AuthError("invalid API key")
        scheme, _, key = authorization.strip().partition(" ")
        key = key.strip()
        if scheme.lower() != "bearer" or not key:
            raise AuthError("the Authorization header must be 'Bearer <key>'")
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()
        found: Identity | None = None
        for known, identity in self._keys:  # no early exit: same time for every key
            if hmac.compare_digest(known, digest) and found is None:
                found = identity
        if found is None:
            raise AuthError("invalid API key")
        return found
