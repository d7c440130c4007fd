"""What the app shares across requests: the assistants, one Searcher for ``/v1/search``,
the keys, the rate limiter, the metrics, the record store, and the shutdown state.

Built once per process (each uvicorn worker builds its own) by :meth:`Service.load`.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio

from agent_search.agent import Assistant
from agent_search.config import BUILTIN_TYPES
from agent_search.errors import ConfigError
from agent_search.searcher import Searcher
from agent_search.server._auth import KeyRing
from agent_search.server._errors import ApiError
from agent_search.server._metrics import Metrics
from agent_search.server._ratelimit import KeyedRateLimiter, SharedRateLimiter
from agent_search.server._records import SharedRecordStore, records_url
from agent_search.server.settings import ServerSettings

log = logging.getLogger("agent_search.server")


@dataclass(frozen=True, slots=True)
class ServiceOptions:
    """Where the configuration and the assistants are (``agent-search serve`` flags)."""

    config_dir: Path | None = None
    assistants_dir: Path | None = None
    builtin_handlers: bool = True
    workers: int = 1
    """Processes serving the same configuration (``--workers``)."""


def find_assistants(root: Path | None) -> list[Path]:
    """The assistant folders (those with a ``package.yao``) directly under ``root``."""
    if root is None:
        return []
    if not root.is_dir():
        raise ConfigError("assistants folder not found", file=str(root))
    return sorted(p for p in root.iterdir() if (p / "package.yao").is_file())


TOKENIZERS_PARALLELISM = "TOKENIZERS_PARALLELISM"


def tokenize_in_callers_thread() -> None:
    """Have the embedding tokenizer (``tokenizers``) tokenize in the thread that asks,
    not in its process-wide pool, unless the operator set ``TOKENIZERS_PARALLELISM``.

    The pool is one for the whole process: a tenant's query waited there behind another
    tenant's upload batch, and the pool's threads keep the OS priority of the thread that
    first used it — in the service often an upload's lowered one, so every query's
    tokens were then made by low-priority threads. A query is a few dozen tokens and an
    upload's batch a few thousand; in the asking thread each goes at its own priority.
    The library reads the variable at every call, so this holds from now on."""
    os.environ.setdefault(TOKENIZERS_PARALLELISM, "false")


class Service:
    def __init__(self, *, settings: ServerSettings, searcher: Searcher,
                 assistants: dict[str, Assistant], records: SharedRecordStore,
                 workers: int = 1) -> None:
        self.settings = settings
        self.keys = KeyRing(settings)
        limit = settings.rate_limit
        shared = limit.shared if limit.shared != "auto" else \
            workers > 1 or records.url.get_backend_name() != "sqlite"
        limiters = {(limit.per_minute, limit.burst): SharedRateLimiter(
            limit.per_minute, limit.burst, records.url, shared=shared)}
        own: dict[str, SharedRateLimiter] = {}
        for key_id, entry in self.keys.entries():
            if entry.rate_limit is not None:
                rate = (entry.rate_limit.per_minute, entry.rate_limit.burst)
                if rate not in limiters:
                    limiters[rate] = SharedRateLimiter(*rate, records.url, shared=shared)
                own[key_id] = limiters[rate]
        self.limiter = KeyedRateLimiter(limiters[(limit.per_minute, limit.burst)], own)
        self.searcher = searcher
        self.assistants = assistants
        self.records = records
        types = set(searcher.registry.types)
        for assistant in assistants.values():
            types.update(assistant.searcher.registry.types)
        self.metrics = Metrics(types | {*BUILTIN_TYPES, "tool"})
        self.metrics.watch_caches(
            [searcher.cache, *(a.searcher.cache for a in assistants.values())])
        self.draining = False
        self.stop_streams = anyio.Event()
        self.streams = 0

    @classmethod
    def load(cls, options: ServiceOptions) -> Service:
        """Load the settings, the shared searcher and every assistant; a bad file raises
        :class:`ConfigError` naming it."""
        settings = ServerSettings.load(options.config_dir)
        tokenize_in_callers_thread()
        searcher = Searcher.from_config(options.config_dir,
                                        builtin_handlers=options.builtin_handlers)
        assistants: dict[str, Assistant] = {}
        for path in find_assistants(options.assistants_dir):
            assistants[path.name] = Assistant.load(
                path, config_dir=options.config_dir,
                builtin_handlers=options.builtin_handlers)
        config = searcher.config
        store = SharedRecordStore(records_url(settings.records_url, config.db.url, config.home))
        for assistant in assistants.values():
            assistant.records = store
        return cls(settings=settings, searcher=searcher, assistants=assistants, records=store,
                   workers=options.workers)

    async def warm(self, seconds: float = 60.0) -> None:
        """Get the handlers that can (``warm()``: the db handler's schema and its model of
        names by meaning) ready before the first request, so the first question is not
        the one that waits. Bounded; a failure here (a database down at start) is left
        for the searches to report."""
        searchers = [self.searcher, *(a.searcher for a in self.assistants.values())]
        handlers: dict[int, Callable[[], Awaitable[None]]] = {}
        for searcher in searchers:
            for search_type in searcher.registry.types:
                for handler in searcher.registry.handlers(search_type):
                    warm = getattr(handler, "warm", None)
                    if callable(warm):
                        handlers[id(handler)] = warm

        async def one(warm: Callable[[], Awaitable[None]]) -> None:
            with contextlib.suppress(Exception):
                await warm()

        with anyio.move_on_after(seconds):
            async with anyio.create_task_group() as tg:
                for warm in handlers.values():
                    tg.start_soon(one, warm)

    async def aclose(self) -> None:
        for assistant in self.assistants.values():
            with contextlib.suppress(Exception):
                await assistant.aclose()
        with contextlib.suppress(Exception):
            await self.searcher.aclose()
        await self.records.aclose()
        await self.limiter.aclose()

    def assistant(self, assistant_id: str, *, param: str = "model") -> Assistant:
        found = self.assistants.get(assistant_id)
        if found is None:
            from agent_search.errors import did_you_mean

            raise ApiError(404, f"{param}: no assistant {assistant_id[:100]!r}; "
                           "GET /v1/models lists them"
                           + did_you_mean(assistant_id[:100], self.assistants),
                           param=param, code="model_not_found")
        return found

    # -- streams and shutdown ------------------------------------------------------------

    def admit(self) -> None:
        """Refuse (503) a new stream while draining or when at ``max_streams``."""
        if self.draining:
            raise ApiError(503, "the server is shutting down", headers={"Retry-After": "5"})
        if self.streams >= self.settings.max_streams:
            raise ApiError(503, f"too many streams in flight ({self.settings.max_streams})",
                           headers={"Retry-After": "1"})

    @contextlib.contextmanager
    def stream_slot(self) -> Iterator[None]:
        """Count one stream in flight (for the cap, the gauge and the drain)."""
        self.streams += 1
        self.metrics.streams_in_flight.inc()
        try:
            yield
        finally:
            self.streams -= 1
            self.metrics.streams_in_flight.dec()

    async def drain(self, grace: float | None = None) -> None:
        """Refuse new work; give streams in flight ``grace`` seconds (default
        ``server.grace_seconds``), then end them with their final event."""
        self.draining = True
        grace = self.settings.grace_seconds if grace is None else grace
        log.info("draining: %d stream(s) in flight, %.1f s grace", self.streams, grace)
        with anyio.move_on_after(grace):
            while self.streams:
                await anyio.sleep(0.05)
        self.stop_streams.set()
