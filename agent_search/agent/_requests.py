"""Building the search requests of the agent's paths (hook, user data, auto, tool).

Defaults are not filled in here: the searcher fills the limit from the type's section
(``max_results``) and each handler reads the rest of its section (collections, models,
threshold, graph) from the context's configuration, so a hook calling
``ctx.search.kb(q)``, auto search and ``Searcher.search`` all search the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
