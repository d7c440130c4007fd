"""What a hook sees as ``ctx``: ``ctx.search.web/kb/db/parallel/any/race`` and the
request's identity.

Every search made here has source ``"hook"`` (weight ``weights.hook``) and shares the
stream's :class:`~agent_search.context.Context`, so citation ids stay unique across hook
searches, user data sources and auto search. The results are remembered and merged into
the references the LLM sees.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agent_search.agent._requests import build_request
from agent_search.types import Request, Result

if TYPE_CHECKING:
    from agent_search.context import Context
    from agent_search.searcher import Searcher


class HookSearch:
    """``ctx.search`` of a hook. Methods never raise for a failed search: check
    ``result.error``."""

    def __init__(self, searcher: Searcher, ctx: Context) -> None:
        self._searcher = searcher
        self._ctx = ctx
        self.results: list[Result] = []

    async def web(self, query: str, *, limit: int | None = None,
                  sites: Sequence[str] | None = None, time_range: str | None = None,
                  rerank: dict[str, Any] | None = None, **options: Any) -> Result:
        return await self._one({"type": "web", "query": query, "limit": limit,
                                "rerank": rerank},
                               {"sites": list(sites) if sites else None,
                                "time_range": time_range, **options})

    async def kb(self, query: str, *, collections: Sequence[str] | None = None,
                 threshold: float | None = None, limit: int | None = None,
                 graph: bool | None = None, rerank: dict[str, Any] | None = None,
                 **options: Any) -> Result:
        return await self._one({"type": "kb", "query": query, "limit": limit,
                                "min_score": threshold, "rerank": rerank},
                               {"collections": list(collections) if collections else None,
                                "graph": graph, **options})

    async def db(self, query: str, *, models: Sequence[str] | None = None,
                 wheres: Sequence[dict[str, Any]] | None = None,
                 orders: Sequence[dict[str, Any]] | None = None,
                 select: Sequence[str] | None = None, limit: int | None = None,
                 rerank: dict[str, Any] | None = None, **options: Any) -> Result:
        return await self._one({"type": "db", "query": query, "limit": limit,
                                "rerank": rerank},
                               {"models": list(models) if models else None,
                                "wheres": list(wheres) if wheres else None,
                                "orders": list(orders) if orders else None,
                                "select": list(select) if select else None, **options})

    async def parallel(self, requests: Sequence[dict[str, Any] | Request]) -> list[Result]:
        """All requests at once; results in request order."""
        results = await self._searcher.search_many(self._prepare(requests), ctx=self._ctx)
        self.results.extend(results)
        return results

    async def any(self, requests: Sequence[dict[str, Any] | Request]) -> Result:
        """The first successful result; the other searches are cancelled."""
        result = await self._searcher.any(self._prepare(requests), ctx=self._ctx)
        self.results.append(result)
        return result

    async def race(self, requests: Sequence[dict[str, Any] | Request]) -> Result:
        """The first finished result, success or not; the others are cancelled."""
        result = await self._searcher.race(self._prepare(requests), ctx=self._ctx)
        self.results.append(result)
        return result

    def _prepare(self, requests: Sequence[dict[str, Any] | Request]) -> list[Any]:
        return [build_request(r, "hook") for r in requests]

    async def _one(self, fields: dict[str, Any], options: dict[str, Any]) -> Result:
        options = {k: v for k, v in options.items() if v is not None}  # None: not given
        if options:
            fields["options"] = options
        request = build_request(fields, "hook")
        result = await self._searcher.search(request, ctx=self._ctx)
        self.results.append(result)
        return result


class HookContext:
    """The ``ctx`` argument of ``create`` and ``next`` hooks."""

    def __init__(self, *, searcher: Searcher, ctx: Context, assistant_id: str,
                 options: Any, search: HookSearch | None = None) -> None:
        self.search = search or HookSearch(searcher, ctx)
        self.searcher = searcher
        """The assistant's searcher (e.g. to register a handler of the hook's own)."""
        self.context = ctx
        self.assistant_id = assistant_id
        self.options = options
        self.memory: dict[str, Any] = {}
        """Scratch space shared by the create and next hooks of one stream."""

    @property
    def request_id(self) -> str:
        return self.context.request_id

    @property
    def user_id(self) -> str | None:
        return self.context.user_id

    @property
    def team_id(self) -> str | None:
        return self.context.team_id
