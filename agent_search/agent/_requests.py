"""Building the search requests of the agent's paths (hook, user data, auto, tool), and
the keyword query of an auto search whose handler wants keywords.

Defaults are not filled in here: the searcher fills the limit from the type's section
(``max_results``) and each handler reads the rest of its section (collections, models,
threshold, graph) from the context's configuration, so a hook calling
``ctx.search.kb(q)``, auto search and ``Searcher.search`` all search the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_search.agent._stages import stage_warnings
from agent_search.context import Context
from agent_search.trace import TraceNode
from agent_search.types import Request, Source


def build_request(raw: Mapping[str, Any] | Request, source: Source) -> Request | dict[str, Any]:
    """``raw`` with the given ``source``.

    Returns a :class:`Request`, or the raw mapping unchanged (with ``source`` set) when it
    does not validate, so the searcher reports the error in the Result as for any call.
    """
    data = raw.model_dump(exclude_unset=True) if isinstance(raw, Request) else dict(raw)
    data["source"] = source
    data = {k: v for k, v in data.items() if v is not None}
    try:
        return Request.model_validate(data)
    except Exception:
        return data


async def keyword_fields(ctx: Context, query: str, node: TraceNode) -> dict[str, Any]:
    """The request fields of an auto search whose handler wants keywords: the message's
    keywords as the query (the message itself when none came out), extracted once, so
    the handler is told not to extract again; the keywords go on the stage's ``node``
    for the record."""
    config = ctx.config
    keywords = await ctx.deps.keywords(
        config.uses.keyword, query, max_keywords=config.keyword.max_keywords,
        language=config.keyword.language, warnings=stage_warnings(node))
    node.attributes["keywords"] = keywords
    fields: dict[str, Any] = {"options": {"keywords": False}}
    if keywords:
        fields["query"] = " ".join(keywords)
    return fields
