"""The leaf settings of the ``web`` section: retries, the circuit breaker, page fetching
and MCP search servers.

They depend on nothing of the web package, so the providers and the resilience layer
can use them while :mod:`agent_search.web.settings` (whose ``provider`` check needs the
provider classes) is built on top, with no import circle.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agent_search.mcp.client import MCPServerSettings
from agent_search.types import Count, Number


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RetrySettings(_Strict):
    """Retries of 429 and 5xx answers, timeouts and connection failures. Waits are
    exponential with full jitter, or the server's Retry-After when it sends one; no wait
    is started that would end past the request's deadline."""

    attempts: Count = Field(default=3, ge=1, le=10)
    initial_wait: Number = Field(default=0.2, ge=0)
    max_wait: Number = Field(default=5.0, ge=0)
    max_retry_after: Number = Field(default=30.0, ge=0,
                                   description="A longer Retry-After is not waited for")


class BreakerSettings(_Strict):
    """Per-provider circuit breaker: after ``failure_threshold`` consecutive failed
    searches the provider is not called for ``reset_after`` seconds; then one trial call
    decides whether it closes again."""

    enabled: bool = True
    failure_threshold: Count = Field(default=5, ge=1)
    reset_after: Number = Field(default=30.0, gt=0)


class CallBudget(_Strict):
    """At most ``calls`` calls to a provider in each window of ``per`` seconds: a
    provider whose budget is spent is not called (the next one in ``web.providers``
    answers, or the search says the budget is spent)."""

    calls: Count = Field(ge=1)
    per: Number = Field(default=60.0, gt=0, description="Seconds of one budget window")


class FetchSettings(_Strict):
    """Full-page fetching (request option ``fetch_pages``)."""

    max_pages: Count = Field(default=5, ge=1, le=50)
    concurrency: Count = Field(default=4, ge=1, le=32)
    timeout: Number = Field(default=8.0, gt=0, description="Seconds per page, redirects included")
    max_bytes: Count = Field(default=2_000_000, ge=1024, description="Body bytes read per page")
    max_chars: Count = Field(default=20_000, ge=100, description="Text characters kept per page")
    max_redirects: Count = Field(default=5, ge=0, le=20)
    user_agent: str = "agent-search/0.1 (+page fetch for search results)"


class MCPSearchServerSettings(MCPServerSettings):
    """An MCP server offering a search tool (``web.provider: "mcp:<server>"``): how to
    reach it, the tool to call, and whether to keep one connection open."""

    tool: str = "search"
    keep_alive: bool = Field(default=True, description=(
        "Keep one connection (one server process for stdio) open across searches"))
