"""ASGI middleware that bounds and screens every request before any route runs, in this
order (outermost first):

* :class:`Screen` — security headers on every response; POST bodies must be JSON (a
  cross-site form cannot send ``application/json`` without a CORS preflight, which this
  service never grants); in local mode (no API keys) the ``Host`` must be a loopback
  name, so a DNS-rebinding page cannot talk to a server on 127.0.0.1.
* :class:`Authenticate` — every ``/v1/`` request: the caller's identity from its API key
  (401), one token of its rate-limit bucket (429), both before its body is read; the
  identity goes into the scope for the route (:func:`identity_of`). Plain ASGI, not a
  FastAPI dependency: solving a ``Depends`` chain per request cost more than the rest of
  the search route's own work.
* :class:`BodyLimit` — request bodies above ``max_body_bytes`` get 413 (by
  ``Content-Length`` at once, or as soon as a chunked body passes the cap); the body is
  read here, once, and replayed; after it, ``receive`` passes through so streams still
  see the client's disconnect. The file-upload route (``upload_path``) has its own cap,
  ``upload_bytes``, and its body is not buffered here: it streams to the route's
  multipart parser, counted, and passing the cap ends the request with 413. So does the
  body of ``streamed_path`` (a kb write of text documents), under ``max_body_bytes``:
  both routes take their write's place first, and a full queue is refused before a
  byte of the body is read.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent_search.server._auth import AuthError, Identity, KeyRing
from agent_search.server._errors import ApiError, error_body
from agent_search.server._metrics import Metrics
from agent_search.server._ratelimit import KeyedRateLimiter, retry_after_header

log = logging.getLogger("agent_search.server")
PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
            "img-src 'self' data:; base-uri 'none'; form-action 'none'; "
            "frame-ancestors 'none'")
"""The chat page's policy, and the default of every response that sets none."""
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]


REFUSAL_PAUSE_S = 1.0
"""The longest a rate-limited request waits for its 429 (the Retry-After says 1 s or more
anyway)."""
IDENTITY = "agent_search.identity"
"""The scope key under which :class:`Authenticate` leaves the caller's identity."""
AUTHENTICATED_PREFIX = "/v1/"


async def send_error(send: Send, status: int, message: str, *, param: str | None = None,
                     code: str | None = None,
                     headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    body = json.dumps(error_body(status, message, param=param, code=code)).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()), *headers]})
    await send({"type": "http.response.body", "body": body})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin-1"))
    return None


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int, *, upload_bytes: int | None = None,
                 upload_path: re.Pattern[str] | None = None,
                 streamed_path: re.Pattern[str] | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.upload_bytes = upload_bytes
        self.upload_path = upload_path
        self.streamed_path = streamed_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in _BODY_METHODS:
            await self.app(scope, receive, send)
            return
        upload = self.upload_bytes is not None and self.upload_path is not None \
            and scope["method"] == "POST" and bool(self.upload_path.fullmatch(_route_path(scope)))
        cap = self.upload_bytes if upload and self.upload_bytes is not None else self.max_bytes
        too_big = f"the request body is larger than {cap} bytes"
        length = _header(scope, b"content-length")
        if length is not None:
            if not length.strip().isdigit():
                await send_error(send, 400, "invalid Content-Length", param="content-length")
                return
            if int(length) > cap:
                await send_error(send, 413, too_big, param="body")
                return
        if upload or (self.streamed_path is not None and scope["method"] == "POST"
                      and self.streamed_path.fullmatch(_route_path(scope))):
            # counted, not buffered: the route may refuse before it reads the body
            await self.app(scope, _counted(receive, cap, too_big), send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await send_error(send, 413, too_big, param="body")
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _counted(receive: Receive, cap: int, too_big: str) -> Receive:
    """``receive``, raising a 413 :class:`ApiError` (answered by the app's handler, as
    the route is still reading its body) once more than ``cap`` bytes have come."""
    size = 0

    async def counting() -> Message:
        nonlocal size
        message = await receive()
        size += len(message.get("body", b""))
        if size > cap:
            raise ApiError(413, too_big, param="body")
        return message

    return counting


class Screen:
    """The outermost layer: every response it lets out — its own refusals, the routes'
    answers and errors, a 500 for an exception nothing else caught — carries the security
    headers, and a Content-Security-Policy (``csp``, the page's strict one) unless the
    response set its own; so every URL that can serve the page (``/``,
    ``/static/index.html``, ``/static//index.html``...) is covered."""

    def __init__(self, app: ASGIApp, *, local_mode: bool, csp: str = PAGE_CSP,
                 upload_path: re.Pattern[str] | None = None) -> None:
        self.app = app
        self.local_mode = local_mode
        self.csp = csp.encode()
        self.upload_path = upload_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = list(message.get("headers", []))
                if not any(k.lower() == b"content-security-policy" for k, _ in headers):
                    headers.append((b"content-security-policy", self.csp))
                message = {**message, "headers": [*headers, *_SECURITY_HEADERS]}
            await send(message)

        if self.local_mode and _host_name(_header(scope, b"host")) not in LOOPBACK_HOSTS:
            await send_error(send_with_headers, 403, "this server has no API keys and "
                             "answers only to loopback host names (127.0.0.1, localhost)",
                             param="host")
            return
        if scope["method"] in _BODY_METHODS:
            ctype = (_header(scope, b"content-type") or "").split(";")[0].strip().lower()
            if ctype == "multipart/form-data" and self.upload_path is not None \
                    and self.upload_path.fullmatch(_route_path(scope)):
                # a cross-site form can send multipart without a preflight: only from
                # this origin (a browser names it), or from a client that names none
                if not _same_origin(scope):
                    await send_error(send_with_headers, 403, "uploads are accepted only "
                                     "from this server's own page", param="origin")
                    return
            elif ctype != "application/json":
                await send_error(send_with_headers, 415, "the body must be JSON "
                                 "(Content-Type: application/json)", param="content-type")
                return
        try:
            await self.app(scope, receive, send_with_headers)
        except Exception as exc:
            if started:  # too late for an error response: let the server close it
                raise
            log.exception("internal error")
            await send_error(send_with_headers, 500, f"internal error: {type(exc).__name__}")


class Authenticate:
    """Identify every ``/v1/`` request and take a rate-limit token for it (see the module
    docstring); other paths (health, metrics, the page, the docs) pass untouched."""

    def __init__(self, app: ASGIApp, *, keys: KeyRing, limiter: KeyedRateLimiter,
                 metrics: Metrics) -> None:
        self.app = app
        self.keys = keys
        self.limiter = limiter
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _route_path(scope).startswith(AUTHENTICATED_PREFIX):
            await self.app(scope, receive, send)
            return
        try:
            identity = self.keys.identify(_header(scope, b"authorization"))
        except AuthError as exc:
            await send_error(send, 401, str(exc), code="invalid_api_key",
                             headers=[(b"www-authenticate", b"Bearer")])
            return
        wait = await self.limiter.take(identity.key_id)
        if wait > 0:
            self.metrics.rate_limited.inc()
            # answered after a pause (the body unread, nothing else done): a client that
            # retries at once can then cost the others a request a second per connection,
            # not hundreds (a sleeping refusal costs the event loop nothing)
            await anyio.sleep(min(max(wait, REFUSAL_PAUSE_S / 2), REFUSAL_PAUSE_S))
            await send_error(send, 429, f"rate limit exceeded; retry in {max(wait, 0.1):.1f} s",
                             code="rate_limit_exceeded",
                             headers=[(b"retry-after", retry_after_header(wait).encode())])
            return
        scope[IDENTITY] = identity
        await self.app(scope, receive, send)


def identity_of(scope: Scope) -> Identity:
    """The identity :class:`Authenticate` found for this request. Fails closed: a route
    reached without it (mounted elsewhere, a middleware left out) is refused with 401."""
    identity = scope.get(IDENTITY)
    if not isinstance(identity, Identity):
        raise ApiError(401, "missing API key: send 'Authorization: Bearer <key>'",
                       code="invalid_api_key", headers={"WWW-Authenticate": "Bearer"})
    return identity


def _route_path(scope: Scope) -> str:
    """The path the router matches (Starlette's rule): without the ``root_path`` the
    server was mounted under, when the path is below it."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root) and path[len(root):len(root) + 1] in ("/", ""):
        return path[len(root):]
    return path


def _same_origin(scope: Scope) -> bool:
    """No ``Origin`` (not a browser), or an ``Origin`` whose host and port are the
    request's ``Host``; and no ``Sec-Fetch-Site`` other than ``same-origin``/``none``."""
    site = _header(scope, b"sec-fetch-site")
    if site is not None and site.strip().lower() not in ("same-origin", "none"):
        return False
    origin = _header(scope, b"origin")
    if origin is None:
        return True
    host = (_header(scope, b"host") or "").strip().lower()
    scheme, _, rest = origin.strip().lower().partition("://")
    return scheme in ("http", "https") and bool(host) and rest == host


_HOST = re.compile(r"(?P<name>\[[0-9a-f:.]+\]|[^\[\]:]+)(?::\d{1,5})?")


def _host_name(host: str | None) -> str:
    """``example.com:8000`` → ``example.com``; ``[::1]:8000`` → ``[::1]``; a bare
    ``::1`` as is; anything else that is not a host and an optional port (``[::1]x``,
    ``[::1]:80:80``, ``a:b:c``) → "" (no match for any allowed name)."""
    if not host:
        return ""
    host = host.strip().lower()
    if host == "::1":
        return host
    found = _HOST.fullmatch(host)
    return found["name"] if found else ""


__all__ = ["IDENTITY", "LOOPBACK_HOSTS", "Authenticate", "BodyLimit", "Screen", "identity_of",
           "send_error"]
