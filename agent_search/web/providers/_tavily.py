"""Tavily, through the official ``tavily-python`` async client.

The client is handed an httpx client of ours: that is how ``base_url`` reaches it, how
the per-attempt timeout applies, and how the ``Retry-After`` header of a 429/5xx (which
the client's exceptions drop) is still seen by the retry loop.
"""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from agent_search.types import ResultItem
from agent_search.web._normalize import (
    answer_item,
    mapping,
    provider_score,
    records_at,
    result_metadata,
    web_item,
)
from agent_search.web.errors import ProviderError
from agent_search.web.providers._base import (
    HttpProvider,
    ProviderSettings,
    SearchParams,
    parse_retry_after,
    transport_error,
)
from agent_search.web.providers._native import NativeFormat, NativeRecord

if TYPE_CHECKING:  # imported where used: validating web.provider must not load the clients
    import httpx

class TavilyResult(NativeRecord):
    """One ``results`` entry of Tavily ``/search``."""

    title: str | None = None
    url: str | None = None
    content: str | None = None
    score: float | None = None
    raw_content: str | None = None
    published_date: str | None = None


_NATIVE = NativeFormat(("results",), TavilyResult, "url")

_last_response: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "tavily_last_response", default=None)


async def _remember_response(response: httpx.Response) -> None:
    holder = _last_response.get()
    if holder is not None:
        holder["status"] = response.status_code
        holder["retry_after"] = parse_retry_after(response.headers.get("retry-after"))


class TavilySettings(ProviderSettings):
    """``web.tavily``: search depth, Tavily's answer as first item, country boost."""

    search_depth: Literal["basic", "advanced", "fast", "ultra-fast"] = "basic"
    include_answer: bool = Field(default=True, description="Tavily's answer as first item")
    country: str | None = None


class TavilyProvider(HttpProvider):
    """``POST {base_url}/search`` with a bearer key; sites → ``include_domains``.

    Tavily's own relevance score is kept (clamped to 0..1): it is already a 0..1
    estimate of relevance (the recorded answers give 0.59–0.95 to relevant pages), so it
    sits on the project's scale as it is; a result without a usable score gets the rank
    score."""

    name = "tavily"
    default_key_env = "TAVILY_API_KEY"
    default_base_url = "https://api.tavily.com"
    native = _NATIVE
    settings_model = TavilySettings

    def __init__(self, *, search_depth: str = "basic", include_answer: bool = False,
                 country: str | None = None, topic: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.search_depth = search_depth
        self.include_answer = include_answer
        self.country = country
        self.topic = topic
        from tavily import AsyncTavilyClient

        self.client.event_hooks["response"].append(_remember_response)
        self.tavily = AsyncTavilyClient(api_key=self.api_key, client=self.client)

    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}

    async def _request(self, params: SearchParams, timeout: float) -> Any:
        import httpx
        from tavily.errors import (
            BadRequestError,
            ForbiddenError,
            InvalidAPIKeyError,
            UsageLimitExceededError,
        )
        from tavily.errors import TimeoutError as TavilyTimeoutError

        holder: dict[str, Any] = {}
        token = _last_response.set(holder)
        try:
            return await self.tavily.search(
                params.query, search_depth=self.search_depth, topic=self.topic,
                time_range=params.time_range, max_results=min(params.limit, 20),
                include_domains=list(params.sites) or None,
                include_answer=self.include_answer or None, country=self.country,
                timeout=timeout)
        except TavilyTimeoutError:
            raise ProviderError(self.name, f"timed out after {timeout:.3g}s",
                                retryable=True) from None
        except UsageLimitExceededError:
            raise ProviderError(self.name, "HTTP 429 rate limited", status=429, retryable=True,
                                retry_after=holder.get("retry_after")) from None
        except (InvalidAPIKeyError, ForbiddenError):
            status = holder.get("status")
            raise ProviderError(self.name, f"HTTP {status}: API key rejected",
                                status=status) from None
        except BadRequestError as exc:
            raise ProviderError(self.name, f"HTTP 400: {exc}", status=400) from None
        except httpx.HTTPStatusError as exc:
            status = exc.response.status_code
            raise ProviderError(self.name, f"HTTP {status} "
                                f"{'server error' if status >= 500 else 'error'}",
                                status=status, retryable=status >= 500,
                                retry_after=holder.get("retry_after")) from None
        except httpx.TransportError as exc:
            raise transport_error(self.name, exc, timeout) from None
        finally:
            _last_response.reset(token)

    def parse(self, raw: Any, params: SearchParams) -> list[ResultItem]:
        items: list[ResultItem] = []
        answer = answer_item(self.name, params.query, mapping(raw).get("answer"),
                             kind="answer") if self.include_answer else None
        if answer is not None:
            items.append(answer)
        for i, r in enumerate(records_at(raw, *_NATIVE.path), start=1):
            meta = result_metadata(self.name, i, published=r.get("published_date"), record=r,
                                   fields=(("raw_content", "raw_content"), ("favicon", "favicon")))
            items.append(web_item(r.get("title"), r.get("content"), r.get("url"),
                                  provider_score(r.get("score"), i), meta))
        return items
