"""Errors raised by web providers. The handler turns them into one-line ``Result.error``
text; callers using a provider directly catch :class:`ProviderError`.

Messages are composed here from facts we chose (status, provider name, a short reason),
never from a library's exception text, which may carry the request URL and so an API
key sent as a query parameter. For the same reason the providers raise them ``from
None``: a chained cause would print that text in every logged traceback (the one
exception to the package's ``from exc`` rule).
"""

from __future__ import annotations

from agent_search.errors import InputError, RunError


class ProviderError(RunError):
    """A provider call failed. ``retryable`` marks transient failures (429, 5xx, timeouts,
    connection errors); ``retry_after`` is the server's Retry-After in seconds, if any."""

    def __init__(self, provider: str, message: str, *, status: int | None = None,
                 retryable: bool = False, retry_after: float | None = None) -> None:
        self.provider = provider
        self.message = message
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        super().__init__(f"{provider}: {message}")


class MissingAPIKeyError(ProviderError, InputError):
    """No API key in the environment variable the configuration names: a provider
    failure the caller fixes by configuring, so also an :class:`InputError`."""

    def __init__(self, provider: str, env_var: str) -> None:
        super().__init__(provider, f"API key not configured (set {env_var})")
        self.env_var = env_var


class CircuitOpenError(ProviderError):
    """The provider's circuit breaker is open: recent calls failed, so we fail fast."""

    def __init__(self, provider: str, failures: int, retry_in: float) -> None:
        super().__init__(
            provider,
            f"circuit open after {failures} consecutive failures; next try in {retry_in:.1f}s",
        )
        self.retry_in = retry_in


class UnsafeURLError(InputError):
    """A page fetch was refused by the SSRF guard (scheme, or host resolving to a
    loopback, private, link-local or metadata address)."""
