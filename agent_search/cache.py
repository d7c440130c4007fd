"""The result cache: an identical search within the TTL is answered without its handler.

Agent loops search the same thing again and again, and a web search is paid each time.
With ``cache.enabled`` the searcher keeps what a handler returned, keyed by everything
that can change the answer:

- who asks (user and team: one tenant's result is never served to another),
- the search type and the handler that answered,
- the request as the handler saw it (the query normalised: case and spacing; limit,
  filters, collections, options; not ``source``, ``timeout`` or ``rerank``, which the
  searcher applies afterwards),
- the type's configuration section and ``uses`` (another provider, another model is
  another key),
- the data version the handler reports (:meth:`cache_version`): the kb's collections as
  they are on disk now, the database file's state. A handler says it can be cached by
  having an async ``cache_version(ctx, request) -> str | None`` method; ``None`` (a
  version it cannot tell, e.g. a remote database) means "do not cache this one". A
  handler without the method is never cached.

Concurrent identical searches make one call (single flight): the first runs the handler,
the others wait for its Result. Only clean Results are kept: no error, no warning (a
warning says some part was left out: a partial result). Hits count the followers of a
flight too. Entries live ``cache.ttl`` seconds; the least recently used go first beyond
``cache.max_entries``. ``cache.types: {db: false}`` keeps a type out.

The searcher stamps (citation ids, source, weight) a copy of the kept Result each time,
so a cached answer gets the ids of the request it is served in.
"""

from __future__ import annotations

import hashlib
import json
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import anyio

from agent_search.types import Request, Result

if TYPE_CHECKING:
    from agent_search.config import SearchConfig
    from agent_search.context import Context

__all__ = ["CacheStats", "ResultCache", "normalise_query"]

_REQUEST_PART = {"source", "timeout", "rerank", "query"}
"""Request fields left out of the key: the searcher applies them after the handler (the
query goes in normalised)."""

_MEMO_LIMIT = 256
"""Configurations whose key part is remembered (sections are cached objects, so few)."""


def normalise_query(query: str) -> str:
    """The query as the key reads it: Unicode NFKC, case folded, spacing collapsed."""
    return " ".join(unicodedata.normalize("NFKC", query).casefold().split())


@dataclass(slots=True)
class CacheStats:
    """Hits and misses of one search type (a follower of a single flight is a hit)."""

    hits: int = 0
    misses: int = 0


@dataclass(slots=True)
class _Flight:
    done: anyio.Event = field(default_factory=anyio.Event)
    result: Result | None = None


@dataclass(slots=True)
class _Entry:
    result: Result
    expires: float


class ResultCache:
    """A bounded TTL cache of handler Results with single flight (one per searcher)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._flights: dict[str, _Flight] = {}
        self._config_parts: dict[tuple[int, str], tuple[SearchConfig, str]] = {}
        self.stats: dict[str, CacheStats] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Forget every entry (flights under way finish, unkept)."""
        self._entries.clear()

    async def key(self, ctx: Context, request: Request, handler: Any) -> str | None:
        """The key of ``request`` on ``handler`` for ``ctx``'s tenant, or None when the
        handler cannot be cached (no ``cache_version``, or no version now)."""
        version_of = getattr(handler, "cache_version", None)
        if version_of is None:
            return None
        try:
            version = await version_of(ctx, request)
        except Exception:  # a version it cannot tell: searched, not kept
            return None
        if version is None:
            return None
        fields = request.model_dump(mode="json", exclude=_REQUEST_PART)
        parts = (request.type, ctx.user_id or "", ctx.team_id or "",
                 type(handler).__qualname__, str(id(handler)),
                 self._config_part(ctx.config, request.type), str(version),
                 normalise_query(request.query), _canonical(fields))
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()

    async def run(self, key: str, search_type: str, call: Callable[[], Awaitable[Any]],
                  ttl: float, max_entries: int) -> Any:
        """The Result for ``key``: kept, shared with an identical call under way, or made
        by ``call`` (and kept when clean). A copy each time: the caller stamps it.
        Whatever ``call`` returns that is not a clean Result (None after a timeout, an
        error, garbage) is handed back as it is and not kept."""
        stats = self.stats.get(search_type)
        if stats is None:
            stats = self.stats[search_type] = CacheStats()
        now = self._clock()
        entry = self._entries.get(key)
        if entry is not None:
            if entry.expires > now:
                self._entries.move_to_end(key)
                stats.hits += 1
                return _served(entry.result, "hit")
            del self._entries[key]
        flight = self._flights.get(key)
        if flight is not None:
            await flight.done.wait()
            if flight.result is not None:
                stats.hits += 1
                return _served(flight.result, "hit")
            # the leader was cancelled or failed: this one searches itself
        return await self._lead(key, stats, call, ttl, max_entries)

    async def _lead(self, key: str, stats: CacheStats, call: Callable[[], Awaitable[Any]],
                    ttl: float, max_entries: int) -> Any:
        flight = self._flights[key] = _Flight()
        stats.misses += 1
        try:
            result = await call()
            if not isinstance(result, Result):
                return result
            if _clean(result):
                kept = result.model_copy(deep=True)
                flight.result = kept
                self._entries[key] = _Entry(kept, self._clock() + ttl)
                while len(self._entries) > max_entries:
                    self._entries.popitem(last=False)
            result.cache = "miss"
            return result
        finally:
            if self._flights.get(key) is flight:
                del self._flights[key]
            flight.done.set()

    def _config_part(self, config: SearchConfig, search_type: str) -> str:
        """The type's section and ``uses`` as one string (remembered per config object)."""
        known = self._config_parts.get((id(config), search_type))
        if known is not None and known[0] is config:
            return known[1]
        section = config.section(search_type)
        part = (section.model_dump_json() if section is not None else "") + \
            config.uses.model_dump_json()
        if len(self._config_parts) >= _MEMO_LIMIT:
            self._config_parts.clear()
        self._config_parts[(id(config), search_type)] = (config, part)
        return part


def _canonical(fields: dict[str, Any]) -> str:
    return json.dumps(fields, sort_keys=True, ensure_ascii=False, default=str)


def _clean(result: Result) -> bool:
    """A Result worth keeping: a success with nothing left out."""
    return result.error is None and not result.warnings and not result.rerank_error


def _served(result: Result, status: Literal["hit", "miss"]) -> Result:
    copy = result.model_copy(deep=True)
    copy.cache = status
    return copy
