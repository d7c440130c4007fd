"""Per-key token buckets: ``burst`` requests at once, refilled at ``per_minute``.

Buckets are keyed by the identity's ``key_id``, of which there are as many as configured
keys (plus the anonymous one), so memory stays bounded whatever callers send.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


class RateLimiter:
    """``take(key)`` → 0 when allowed, else the seconds until a token is available."""

    def __init__(self, per_minute: float, burst: int) -> None:
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()

    def take(self, key: str, *, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = self._buckets[key] = _Bucket(self.burst, now)
            elapsed = max(0.0, now - bucket.updated)
            bucket.tokens = min(self.burst, bucket.tokens + elapsed * self.rate)
            bucket.updated = now
            if bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                return 0.0
            return (1.0 - bucket.tokens) / self.rate


def retry_after_header(wait: float) -> str:
    """Whole seconds, at least 1 (HTTP's Retry-After has no fractions)."""
    return str(max(1, math.ceil(wait)))
