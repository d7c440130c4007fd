"""What the HTTP server does about connections that send nothing: uvicorn times a
connection out only after a request (``timeout_keep_alive``), so 1,100 connections that
never sent a byte held 1,100 of the process's 1,024 open files and every other client
was refused until they closed.

* :func:`raise_open_file_limit` — at start, the soft limit of open files is raised to the
  hard one (the administrator's ceiling; commonly 1,024 soft and far more hard).
* :class:`GuardedHttpToolsProtocol` — uvicorn's httptools protocol with two guards:
  a connection that has not sent a complete request head within ``header_timeout``
  seconds of connecting (or of starting its next request) is closed; and one client
  address holds at most ``max_per_client`` connections at once (more are answered 503
  and closed at once).
* :class:`GuardedH11Protocol` — the same guards on uvicorn's pure-Python h11 protocol,
  for an installation without httptools (uvicorn's own "auto" choice falls back to h11
  there, and would have no guard at all).

``agent-search serve`` names :data:`PROTOCOL` as uvicorn's ``http`` protocol: the httptools
one when httptools is installed, the h11 one otherwise — as uvicorn's "auto" chooses.

A reverse proxy in front (docs/http-service.md) is still what an operator exposed to the
internet should run: it bounds clients before they reach this process. Behind one, every
connection comes from the proxy's address: raise ``server.max_connections_per_client``.
"""

from __future__ import annotations

import asyncio
import logging
import resource
from collections import Counter
from dataclasses import dataclass
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("agent_search.server")
try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # httptools is optional for uvicorn: its h11 protocol is then used
    HttpToolsProtocol = None  # type: ignore[assignment,misc]

H11_PROTOCOL = "agent_search.server._connections:GuardedH11Protocol"
HTTPTOOLS_PROTOCOL = "agent_search.server._connections:GuardedHttpToolsProtocol"
PROTOCOL = HTTPTOOLS_PROTOCOL if HttpToolsProtocol is not None else H11_PROTOCOL
"""How uvicorn's ``http`` option names the protocol (a string: worker processes import
it themselves): the httptools one when httptools is installed, else the h11 one."""
_MAX_RAISED = 1 << 20
_BUSY = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n"
         b"connection: close\r\ncontent-length: 47\r\n\r\n"
         b"too many connections from this client address\n")


@dataclass
class ConnectionLimits:
    """The guards' settings (``server.header_timeout_seconds``,
    ``server.max_connections_per_client``)."""

    header_timeout: float = 5.0
    max_per_client: int = 256


LIMITS = ConnectionLimits()
"""This process's limits: set by :func:`configure` when the app is built."""


def configure(header_timeout: float, max_per_client: int) -> None:
    LIMITS.header_timeout = header_timeout
    LIMITS.max_per_client = max_per_client


def raise_open_file_limit() -> int:
    """Raise the soft limit of open files to the hard one; the soft limit now. A limit
    the system refuses to raise is left as it was (logged)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = _MAX_RAISED if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError) as exc:
            log.warning("could not raise the open-file limit from %d to %d: %s",
                        soft, target, exc)
            return soft
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class _Guards:
    """What both guarded protocols share: the per-address count at connect and close, and
    the request-head deadline (armed, disarmed, fired). The per-address counts live on
    uvicorn's server state, shared by every connection of this server. Mixed in before
    uvicorn's protocol class, whose ``connection_made`` sets ``client`` and ``transport``."""

    _head_timer: asyncio.TimerHandle | None = None
    _counted: str | None = None
    client: tuple[str, int] | None
    server_state: Any
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[misc]  # sets self.transport
        host = self.client[0] if self.client else None
        if host is not None:
            counts = _per_client(self.server_state)
            if counts[host] >= LIMITS.max_per_client:
                self.transport.write(_BUSY)
                self.transport.close()
                return
            counts[host] += 1
            self._counted = host
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._counted is not None:
            counts = _per_client(self.server_state)
            counts[self._counted] -= 1
            if counts[self._counted] <= 0:
                del counts[self._counted]
            self._counted = None
        super().connection_lost(exc)  # type: ignore[misc]

    def _arm(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(LIMITS.header_timeout, self._too_slow)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _too_slow(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing():
            self.transport.close()


class GuardedH11Protocol(_Guards, H11Protocol):
    """uvicorn's h11 protocol with the guards. h11 has no "message begun" callback: after
    each piece of data, a connection whose peer is still ``IDLE`` in h11's terms (no
    complete request head yet) has the deadline armed; once the head is complete it is
    disarmed. An idle kept-alive connection sends nothing, so it stays under uvicorn's
    keep-alive timeout alone, as with httptools."""

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self._arm()  # bytes of a head that is not complete yet
        else:
            self._disarm()


if HttpToolsProtocol is not None:

    class GuardedHttpToolsProtocol(_Guards, HttpToolsProtocol):
        """uvicorn's httptools protocol with the guards: the deadline is armed at connect
        and when a kept-alive connection begins its next request, and disarmed once the
        head is complete."""

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._arm()  # the next request on a kept-alive connection: a deadline too

        def on_headers_complete(self) -> None:
            self._disarm()
            super().on_headers_complete()


def _per_client(state: Any) -> Counter[str]:
    counts: Counter[str] | None = getattr(state, "agent_search_per_client", None)
    if counts is None:
        counts = Counter()
        state.agent_search_per_client = counts
    return counts


__all__ = ["H11_PROTOCOL", "HTTPTOOLS_PROTOCOL", "LIMITS", "PROTOCOL", "ConnectionLimits",
           "GuardedH11Protocol", "configure", "raise_open_file_limit"]
