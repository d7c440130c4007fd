"""The ``server:`` section of ``config/agent.yml``: API keys and the limits of the service.

```yaml
server:
  api_keys:
    - env: AGENT_SEARCH_KEY_ALICE     # the key is in this environment variable
      user_id: alice
      team_id: t1
    - sha256: 9f86d08...             # or the SHA-256 (hex) of the key
      user_id: bob
      rate_limit: {per_minute: 6000, burst: 600}   # this key's own bucket (optional)
  rate_limit: {per_minute: 600, burst: 60, shared: auto}   # shared: across workers
  max_body_bytes: 1048576
  max_messages: 100
  keepalive_seconds: 15               # SSE comment on a quiet stream
```

A key itself never appears in a file: only the name of the variable that holds it, or
its digest. Every limit has a default, so an empty section is a working one.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agent_search._config_files import config_error, read_yaml
from agent_search.errors import ConfigError
from agent_search.types import Count, Number

_HEX64 = re.compile(r"[0-9a-fA-F]{64}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class KeyRateLimit(_Strict):
    """One key's own bucket, in place of ``server.rate_limit``'s (whose ``shared`` it
    follows): a trusted internal caller, or a tenant that pays for more, gets a larger
    bucket without raising every other key's."""

    per_minute: Number = Field(gt=0, le=1_000_000)
    burst: Count = Field(ge=1, le=100_000)


class ApiKeyEntry(_Strict):
    """One key: where to find it (``env`` or ``sha256``), the identity it stands for, and
    optionally its own rate limit."""

    env: str | None = Field(default=None, min_length=1, max_length=200)
    sha256: str | None = None
    user_id: str = Field(min_length=1, max_length=200)
    team_id: str | None = Field(default=None, max_length=200)
    rate_limit: KeyRateLimit | None = None

    @model_validator(mode="after")
    def _one_source(self) -> ApiKeyEntry:
        if (self.env is None) == (self.sha256 is None):
            raise ValueError("an API key needs exactly one of 'env' or 'sha256'")
        if self.sha256 is not None and not _HEX64.fullmatch(self.sha256):
            raise ValueError("sha256 must be 64 hexadecimal characters (the key's digest)")
        return self

    def digest(self) -> bytes:
        """The SHA-256 of the key. ``env`` keys are read now: a missing variable is a
        configuration error (a key that silently matches nothing would lock users out)."""
        if self.sha256 is not None:
            return bytes.fromhex(self.sha256)
        assert self.env is not None
        value = os.environ.get(self.env)
        if not value:
            raise ConfigError(f"environment variable {self.env} (an API key) is not set",
                              key="server.api_keys")
        return hashlib.sha256(value.encode()).digest()


class RateLimit(_Strict):
    """A token bucket per API key: ``per_minute`` tokens refill evenly, ``burst`` at most.
    ``shared``: keep the buckets in the record database so the limit holds across worker
    processes and hosts; ``auto`` (default) does when the service runs several workers
    or records go to a server database (PostgreSQL: possibly several hosts); one process
    on a local records file keeps them in memory (exact there, and no write a request)."""

    per_minute: Number = Field(default=600.0, gt=0, le=1_000_000)
    burst: Count = Field(default=60, ge=1, le=100_000)
    shared: Literal["auto"] | bool = "auto"


class ServerSettings(_Strict):
    api_keys: list[ApiKeyEntry] = Field(default_factory=list, max_length=10_000)
    rate_limit: RateLimit = Field(default_factory=RateLimit)
    max_body_bytes: Count = Field(default=1 << 20, ge=1024, le=64 << 20)
    max_messages: Count = Field(default=100, ge=1, le=10_000)
    max_searches: Count = Field(default=20, ge=1, le=1000,
                              description="Requests in one POST /v1/search list")
    max_streams: Count = Field(default=256, ge=1, le=100_000,
                             description="Streams in flight; more get 503")
    records_url: str | None = Field(default=None, description="Database for search "
                                    "records; default db.url, else records.sqlite")
    grace_seconds: Number = Field(default=10.0, ge=0, le=3600,
                                 description="How long streams may finish on shutdown")
    keepalive_seconds: Number = Field(default=15.0, ge=0.1, le=3600,
                                     description="A quiet stream gets an SSE comment this "
                                     "often, so proxies do not close it as idle")
    # uvicorn's own default (5 s) equals httpx's (and so the openai client's) pool expiry:
    # a client reusing a connection just as the server closed it got a ReadError (11 of
    # 2,000 requests under load). The server must hold an idle connection longer than any
    # client or proxy in front of it may still reuse it.
    http_keep_alive_seconds: Number = Field(
        default=75.0, ge=1, le=3600,
        description="How long an idle HTTP connection is kept open for the client's next "
        "request (uvicorn's timeout_keep_alive); above the clients' and proxies' pool "
        "timeouts (httpx and openai 5 s, aiohttp 15 s, nginx and cloud balancers 60 s)")

    header_timeout_seconds: Number = Field(
        default=5.0, ge=0.5, le=300,
        description="A connection that has not sent a complete request head this long "
        "after connecting (or after starting its next request) is closed")
    max_connections_per_client: Count = Field(
        default=256, ge=1, le=1_000_000,
        description="Open connections one client address may hold; more are answered 503 "
        "and closed (behind a reverse proxy every connection is the proxy's: raise it)")

    @classmethod
    def load(cls, config_dir: str | Path | None) -> ServerSettings:
        """The ``server`` section of ``<config_dir>/agent.yml``; defaults when absent."""
        if config_dir is None:
            return cls()
        path = Path(config_dir) / "agent.yml"
        if not path.is_file():
            return cls()
        data: dict[str, Any] = read_yaml(path)
        section = data.get("server") or {}
        if not isinstance(section, dict):
            raise ConfigError("must be a mapping", file=str(path), key="server")
        try:
            return cls.model_validate(section)
        except ValidationError as exc:
            raise config_error(exc, file=str(path), section="server", model=cls) from None
