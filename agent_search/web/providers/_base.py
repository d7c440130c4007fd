"""The provider interface: one search engine API behind ``search()``.

A provider is usable on its own (the Semantic Kernel text-search layer wraps them) and
by the web handler. Every provider call goes through the same path: circuit breaker →
retries within the deadline → one attempt with a timeout → parse into
:class:`~agent_search.types.ResultItem`. Subclasses implement only ``_request`` (one
attempt, returning the native payload) and ``parse``.
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import os
import time
import warnings
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict

from agent_search.trace import first_line
from agent_search.types import ResultItem
from agent_search.web._limits import BreakerSettings, RetrySettings
from agent_search.web._normalize import one_line, redact, screen_url
from agent_search.web._resilience import (
    MIN_ATTEMPT_SECONDS,
    CircuitBreaker,
    call_with_retries,
    remaining_seconds,
)
from agent_search.web.errors import MissingAPIKeyError, ProviderError
from agent_search.web.providers._native import NativeFormat, NativeRecord

if TYPE_CHECKING:  # httpx where used: validating web.provider must not load the client
    import httpx
    from typing_extensions import Self

    from agent_search.web.settings import WebSettings

log = logging.getLogger("agent_search.web")

TIME_RANGES: tuple[str, ...] = ("day", "week", "month", "year")


class ProviderSettings(BaseModel):
    """The keys of one provider's own section of the ``web`` configuration,
    ``web.<provider>`` (``web: {provider: google, google: {cx: ...}}``): each provider
    class names its model (:attr:`WebProvider.settings_model`), so a provider's keys are
    checked, defaulted and documented by the provider, not by the shared
    :class:`~agent_search.web.settings.WebSettings`. Unknown keys are errors naming
    the key (``web.google.cxx``)."""

    model_config = ConfigDict(extra="forbid")


class LocaleSettings(ProviderSettings):
    """The market keys several search APIs take."""

    country: str | None = None
    language: str | None = None


@dataclass(frozen=True, slots=True)
class SearchParams:
    """One search as every provider sees it."""

    query: str
    limit: int = 10
    sites: tuple[str, ...] = ()
    time_range: str | None = None


@dataclass(slots=True)
class ProviderResponse:
    """The parsed items together with the provider's native payload (``raw``)."""

    provider: str
    items: list[ResultItem]
    raw: Any
    duration_ms: float = 0.0
    extras: dict[str, Any] = field(default_factory=dict)


def site_operators(query: str, sites: Sequence[str]) -> str:
    """``query`` restricted to ``sites`` with ``site:`` operators (OR-ed), the syntax of
    Google, Bing, Brave and SearXNG."""
    if not sites:
        return query
    ops = " OR ".join(f"site:{s}" for s in sites)
    return f"{query} ({ops})" if len(sites) > 1 else f"{query} {ops}"


def clean_site(site: str) -> str:
    """``https://www.example.com/`` → ``www.example.com``: providers want a bare host
    (optionally with a path prefix)."""
    s = site.strip()
    for prefix in ("https://", "http://"):
        if s.lower().startswith(prefix):
            s = s[len(prefix):]
    return s.strip("/")


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def decode_json(content: bytes, provider: str) -> Any:
    """JSON from a body, tolerating a UTF-8 byte-order mark (some APIs send one)."""
    try:
        return json.loads(content.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        raise ProviderError(provider, "invalid JSON in response") from None


class WebProvider(ABC):
    """Base class of web search providers.

    ``search`` gives items, ``search_response`` items plus the native payload,
    ``search_raw`` the native payload only. Errors are :class:`ProviderError` with a
    one-line message that never contains the API key.

    A provider class owns what the package knows about its API: the ``web.provider``
    value that names it (``name``), the environment variable holding its key, its
    default base URL, its native record format and the ``web`` settings it reads
    (``from_settings``). :func:`~agent_search.web.providers.create_provider` finds it
    by name in the registry built from the classes.
    """

    name: str = "provider"
    requires_key: ClassVar[bool] = True
    default_key_env: ClassVar[str | None] = None
    """The environment variable holding the API key (``web.api_key_env`` overrides)."""
    default_base_url: ClassVar[str | None] = None
    """The API's address (``web.base_url`` overrides)."""
    native: ClassVar[NativeFormat | None] = None
    """The API's own result records (None: the parsed items are the records)."""
    settings_model: ClassVar[type[ProviderSettings]] = ProviderSettings
    """The keys of the provider's own section ``web.<name>``, passed to the constructor
    under their own names (see :meth:`options_from`)."""
    settings_options: ClassVar[tuple[str, ...]] = ()
    """Deprecated: ``web`` keys of the shared section passed to the constructor (a
    provider written before :attr:`settings_model`); kept for a release."""

    # -- construction from the ``web`` section -------------------------------------------

    @classmethod
    def accepts(cls, name: str) -> bool:
        """Whether the ``web.provider`` value ``name`` names this class."""
        return name == cls.name

    @classmethod
    def spelling(cls) -> str:
        """How ``web.provider`` names this class, for error messages."""
        return cls.name

    @classmethod
    def check_settings(cls, settings: WebSettings) -> None:
        """Raise ValueError when ``settings`` cannot configure this provider (the
        builtin HTTP providers accept any: their extras have defaults)."""
        return None

    @classmethod
    def key_env_for(cls, settings: WebSettings) -> str | None:
        return settings.api_key_env or cls.default_key_env

    @classmethod
    def endpoint_for(cls, settings: WebSettings) -> str:
        """The address searches go to (providers sharing it share a circuit breaker)."""
        return settings.base_url or cls.default_base_url or ""

    @classmethod
    def from_settings(cls, settings: WebSettings, *, api_key: str | None = None,
                      breaker: CircuitBreaker | None = None) -> Self:
        """This provider configured from the ``web`` section; ``api_key`` is read from
        the environment variable the settings name when not given."""
        key_env = cls.key_env_for(settings)
        if api_key is None and key_env:
            api_key = os.environ.get(key_env) or None
        return cls(api_key=api_key, base_url=settings.base_url, timeout=settings.timeout,
                   retry=settings.retry, breaker=breaker or settings.breaker,
                   key_env=key_env, **cls.options_from(settings))

    @classmethod
    def options_from(cls, settings: WebSettings) -> dict[str, Any]:
        """The constructor arguments particular to this provider: its section
        ``web.<name>`` (validated by :attr:`settings_model`)."""
        if cls.settings_options:
            warnings.warn(f"{cls.__name__}.settings_options is deprecated: give the provider "
                          f"a settings_model (its keys then sit in web.{cls.name})",
                          DeprecationWarning, stacklevel=2)
        legacy = {option: getattr(settings, option, None) for option in cls.settings_options}
        return {**legacy, **settings.options_for(cls).model_dump()}

    def __init__(self, *, api_key: str | None = None, base_url: str | None = None,
                 timeout: float = 10.0, retry: RetrySettings | None = None,
                 breaker: CircuitBreaker | BreakerSettings | None = None,
                 key_env: str | None = None) -> None:
        if self.requires_key and not api_key:
            raise MissingAPIKeyError(self.name, key_env or self.default_key_env
                                     or f"{self.name.upper()}_API_KEY")
        self.api_key = api_key
        self.base_url = (base_url or self.default_base_url or "").rstrip("/")
        self.timeout = timeout
        self.retry = retry or RetrySettings()
        self.breaker = (breaker if isinstance(breaker, CircuitBreaker)
                        else CircuitBreaker(self.name, breaker))

    # -- public API ----------------------------------------------------------------------

    async def search(self, query: str, *, limit: int = 10, sites: Sequence[str] = (),
                     time_range: str | None = None) -> list[ResultItem]:
        return (await self.search_response(query, limit=limit, sites=sites,
                                           time_range=time_range)).items

    async def search_response(self, query: str, *, limit: int = 10, sites: Sequence[str] = (),
                              time_range: str | None = None) -> ProviderResponse:
        params = self._params(query, limit, sites, time_range)
        started = time.perf_counter()
        raw = await self._search_raw(params)
        try:
            items = self.parse(raw, params)
        except ProviderError:
            raise
        except Exception as exc:  # a payload we cannot read is the provider's failure
            raise ProviderError(self.name, f"unexpected response: {self._safe(first_line(exc))}"
                                ) from None
        for item in items:  # the builtin parsers screen links; this covers subclasses too
            item.url = screen_url(item.url, item.metadata)
        return ProviderResponse(self.name, items[: params.limit], raw,
                                duration_ms=(time.perf_counter() - started) * 1000)

    async def search_raw(self, query: str, *, limit: int = 10, sites: Sequence[str] = (),
                         time_range: str | None = None) -> Any:
        """The provider's native payload (decoded JSON, or the MCP tool result)."""
        return await self._search_raw(self._params(query, limit, sites, time_range))

    @abstractmethod
    def parse(self, raw: Any, params: SearchParams) -> list[ResultItem]:
        """Items from a native payload, in the provider's order."""

    def native_records(self, raw: Any) -> tuple[list[NativeRecord], int | None] | None:
        """The typed records of a native payload and the provider's total, or None when
        the provider has no native format."""
        return self.native.read(raw) if self.native is not None else None

    async def aclose(self) -> None:
        return None

    async def __aenter__(self) -> WebProvider:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- the call path -------------------------------------------------------------------

    @abstractmethod
    async def _request(self, params: SearchParams, timeout: float) -> Any:
        """One attempt; raise :class:`ProviderError` (``retryable`` for transient cases)."""

    def _params(self, query: str, limit: int, sites: Sequence[str],
                time_range: str | None) -> SearchParams:
        if not query or not query.strip():
            raise ProviderError(self.name, "query must not be empty")
        if time_range is not None and time_range not in TIME_RANGES:
            raise ProviderError(self.name, f"time_range {time_range!r} is not one of "
                                           f"{', '.join(TIME_RANGES)}")
        return SearchParams(query.strip(), max(1, int(limit)), self._sites(sites), time_range)

    def _sites(self, sites: Sequence[str]) -> tuple[str, ...]:
        """``sites`` cleaned (a bare string is one site; blanks dropped); a site that is
        not a host name is a ProviderError naming it."""
        if isinstance(sites, str):
            sites = [sites]
        cleaned = tuple(clean_site(s) for s in sites if s and s.strip())
        bad = next((site for site in cleaned if not _is_site(site)), None)
        if bad is not None:
            raise ProviderError(self.name, f"invalid site {bad[:80]!r}: expected a host "
                                           "name such as example.com (optionally /path)")
        return cleaned

    async def _search_raw(self, params: SearchParams) -> Any:
        self.breaker.before_call()
        try:
            raw = await call_with_retries(partial(self._attempt, params), self.retry, self.name)
        except ProviderError as exc:
            if exc.retryable:
                self.breaker.record_failure()
            else:  # the provider answered (e.g. 401, 400): it is up
                self.breaker.record_success()
            raise
        except BaseException:
            self.breaker.release_trial()
            raise
        self.breaker.record_success()
        return raw

    async def _attempt(self, params: SearchParams) -> Any:
        left = remaining_seconds() - MIN_ATTEMPT_SECONDS / 2
        timeout = min(self.timeout, left)
        if timeout <= 0:
            raise ProviderError(self.name, "deadline exceeded before the request was sent")
        try:
            return await self._request(params, timeout)
        except ProviderError as exc:
            exc.message = self._safe(exc.message)
            exc.args = (f"{exc.provider}: {exc.message}",)
            raise
        except Exception as exc:
            raise ProviderError(self.name, self._safe(first_line(exc))) from None

    def _safe(self, text: str) -> str:
        return one_line(redact(text, [self.api_key]))


class HttpProvider(WebProvider):
    """A provider spoken to over HTTP with httpx; subclasses build the request."""

    def __init__(self, *, client: httpx.AsyncClient | None = None, **kwargs: Any) -> None:
        import httpx

        super().__init__(**kwargs)
        if not self.base_url:
            raise ProviderError(self.name, "base_url not configured (set web.base_url)")
        self._own_client = client is None
        self.client = client or httpx.AsyncClient(
            base_url=self.base_url, headers=self.auth_headers(), follow_redirects=False,
            timeout=self.timeout)

    def auth_headers(self) -> dict[str, str]:
        return {}

    async def aclose(self) -> None:
        if self._own_client:
            await self.client.aclose()

    async def _send(self, method: str, path: str, *, timeout: float,
                    params: Mapping[str, Any] | None = None, json_body: Any = None,
                    headers: Mapping[str, str] | None = None) -> Any:
        """One HTTP exchange → decoded JSON, or a :class:`ProviderError` saying why not."""
        import httpx

        try:
            response = await self.client.request(
                method, path, params=_clean_params(params), json=json_body,
                headers=dict(headers) if headers else None, timeout=timeout)
        except httpx.TransportError as exc:
            raise transport_error(self.name, exc, timeout) from None
        return self._check(response)

    def _check(self, response: httpx.Response) -> Any:
        status = response.status_code
        if 200 <= status < 300:
            return decode_json(response.content, self.name)
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        if status == 429:
            raise ProviderError(self.name, "HTTP 429 rate limited", status=status,
                                retryable=True, retry_after=retry_after)
        if status >= 500:
            raise ProviderError(self.name, f"HTTP {status} server error", status=status,
                                retryable=True, retry_after=retry_after)
        if status in (401, 403):
            raise ProviderError(self.name, f"HTTP {status}: API key rejected", status=status)
        detail = _error_detail(response)
        raise ProviderError(self.name, f"HTTP {status}{': ' + detail if detail else ''}",
                            status=status)


def transport_error(provider: str, exc: httpx.TransportError, timeout: float) -> ProviderError:
    """The retryable error for a request that got no HTTP answer (timeout, connection)."""
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return ProviderError(provider, f"timed out after {timeout:.3g}s", retryable=True)
    return ProviderError(provider, f"connection failed ({type(exc).__name__})", retryable=True)


def _clean_params(params: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if params is None:
        return None
    return {k: v for k, v in params.items() if v is not None and v != ""}


def _error_detail(response: httpx.Response) -> str:
    """A short reason from an error body (``error``/``message``/``detail`` fields)."""
    try:
        body = json.loads(response.content.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        return one_line(response.text, 120) if response.text else ""
    if not isinstance(body, dict):
        return ""
    for key in ("error", "message", "detail", "errors"):
        value = _reason(body.get(key))
        if value:
            return one_line(str(value), 120)
    return ""


def _reason(value: Any) -> Any:
    """The message inside one error field: an object's ``message`` (or ``error``), a
    list's first entry (its ``message`` when an object), else the value itself."""
    if isinstance(value, dict):
        return value.get("message") or value.get("error") or value
    if isinstance(value, list) and value:
        return value[0].get("message") if isinstance(value[0], dict) else value[0]
    return value


def _is_site(site: str) -> bool:
    """A cleaned site is a host name (optionally with a path): not empty, no space,
    quote or parenthesis (search operators)."""
    return bool(site) and not any(c.isspace() or c in "\"()" for c in site)
