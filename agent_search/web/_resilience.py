"""Retries inside the request's deadline, and a circuit breaker per provider.

Retries use tenacity (the engine stamina is built on) directly, because two decisions
need the whole retry state: the wait is the server's ``Retry-After`` when it sends one
(jittered exponential backoff otherwise), and the loop stops rather than start a wait
that would end past the deadline of the enclosing cancel scope
(:func:`anyio.current_effective_deadline`, set by the searcher from the request timeout).

The breaker is a few lines of state; the libraries for it are synchronous or tied to one
event loop, and it must cost nothing on the hot path.
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception

from agent_search.web._limits import BreakerSettings, RetrySettings
from agent_search.web.errors import CircuitOpenError, ProviderError

log = logging.getLogger("agent_search.web")

T = TypeVar("T")

MIN_ATTEMPT_SECONDS = 0.05
"""A retry is only started if at least this much time is left after its wait."""


def remaining_seconds() -> float:
    """Seconds left before the enclosing deadline (``inf`` when there is none)."""
    return anyio.current_effective_deadline() - anyio.current_time()


def _is_retryable(exc: BaseException) -> bool:
    return isinstance(exc, ProviderError) and exc.retryable


class _RetryLoop:
    """State for one retried call: decides waits and when to stop, and says why."""

    def __init__(self, settings: RetrySettings, provider: str) -> None:
        self.settings = settings
        self.provider = provider
        self.gave_up: str | None = None

    def wait(self, rcs: RetryCallState) -> float:
        exc = rcs.outcome.exception() if rcs.outcome else None
        retry_after = exc.retry_after if isinstance(exc, ProviderError) else None
        if retry_after is not None:
            return retry_after + random.uniform(0, min(0.1 * retry_after, 0.25))
        cap = min(self.settings.max_wait,
                  self.settings.initial_wait * 2 ** (rcs.attempt_number - 1))
        return random.uniform(0, cap)  # "full jitter"

    def stop(self, rcs: RetryCallState) -> bool:
        s = self.settings
        if rcs.attempt_number >= s.attempts:
            self.gave_up = f"after {rcs.attempt_number} attempts"
            return True
        exc = rcs.outcome.exception() if rcs.outcome else None
        retry_after = exc.retry_after if isinstance(exc, ProviderError) else None
        if retry_after is not None and retry_after > s.max_retry_after:
            self.gave_up = (f"Retry-After {retry_after:g}s is longer than "
                            f"retry.max_retry_after {s.max_retry_after:g}s")
            return True
        upcoming = rcs.upcoming_sleep
        left = remaining_seconds()
        if upcoming + MIN_ATTEMPT_SECONDS > left:
            self.gave_up = (f"not retried: waiting {upcoming:.2f}s would pass the deadline "
                            f"({max(0.0, left):.2f}s left)")
            return True
        return False

    def before_sleep(self, rcs: RetryCallState) -> None:
        exc = rcs.outcome.exception() if rcs.outcome else None
        log.info("web provider %s: attempt %d failed (%s); retrying in %.2fs",
                 self.provider, rcs.attempt_number,
                 exc.message if isinstance(exc, ProviderError) else type(exc).__name__,
                 rcs.upcoming_sleep)

    def give_up(self, rcs: RetryCallState) -> None:
        exc = rcs.outcome.exception() if rcs.outcome else None
        assert isinstance(exc, ProviderError)
        raise ProviderError(exc.provider, f"{exc.message} ({self.gave_up})", status=exc.status,
                            retryable=exc.retryable, retry_after=exc.retry_after) from exc


async def call_with_retries(call: Callable[[], Awaitable[T]], settings: RetrySettings,
                            provider: str) -> T:
    """Run ``call``; retry it on retryable :class:`ProviderError` while attempts and the
    deadline allow. The final error says why retrying stopped."""
    # fast path: the first attempt runs without the retry machinery
    try:
        return await call()
    except ProviderError as exc:
        if not exc.retryable or settings.attempts <= 1:
            raise
        first_failure: list[ProviderError] = [exc]

    async def attempt() -> T:
        if first_failure:  # replay the first failure so tenacity counts and waits for it
            raise first_failure.pop()
        return await call()

    loop = _RetryLoop(settings, provider)
    retrying = AsyncRetrying(
        retry=retry_if_exception(_is_retryable), wait=loop.wait, stop=loop.stop,
        sleep=anyio.sleep, before_sleep=loop.before_sleep, retry_error_callback=loop.give_up,
        reraise=True,
    )
    result: T = await retrying(attempt)
    return result


class CircuitBreaker:
    """Closed → (``failure_threshold`` consecutive failures) → open → (``reset_after``
    seconds) → half-open: one trial call; success closes, failure opens again."""

    def __init__(self, provider: str, settings: BreakerSettings | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.provider = provider
        self.settings = settings or BreakerSettings()
        self._clock = clock
        self.failures = 0
        self._opened_at: float | None = None
        self._trial_running = False

    @property
    def state(self) -> str:
        if self._opened_at is None:
            return "closed"
        if self._clock() - self._opened_at >= self.settings.reset_after:
            return "half-open"
        return "open"

    def before_call(self) -> None:
        """Raise :class:`CircuitOpenError` when calls must not go through now."""
        if not self.settings.enabled or self._opened_at is None:
            return
        elapsed = self._clock() - self._opened_at
        if elapsed < self.settings.reset_after or self._trial_running:
            retry_in = max(0.0, self.settings.reset_after - elapsed)
            raise CircuitOpenError(self.provider, self.failures, retry_in)
        self._trial_running = True  # half-open: this call is the trial

    def record_success(self) -> None:
        self.failures = 0
        self._opened_at = None
        self._trial_running = False

    def record_failure(self) -> None:
        self.failures += 1
        self._trial_running = False
        if self.failures >= self.settings.failure_threshold or self._opened_at is not None:
            if self._opened_at is None:
                log.warning("web provider %s: circuit opened after %d consecutive failures",
                            self.provider, self.failures)
            self._opened_at = self._clock()

    def release_trial(self) -> None:
        """A trial call ended without a verdict (cancelled): let the next call try."""
        self._trial_running = False


def finite(seconds: float, default: float) -> float:
    return seconds if math.isfinite(seconds) else default
