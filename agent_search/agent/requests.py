"""Building search requests with the configuration's defaults filled in.

Used for every path (hook, user data, auto) so that a hook calling ``ctx.search.kb(q)``
searches the assistant's collections just like auto search does; options given in the
call win (the hook level of the configuration).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_search.config import SearchConfig
from agent_search.types import Request, Source


def build_request(config: SearchConfig, raw: Mapping[str, Any] | Request,
                  source: Source) -> Request | dict[str, Any]:
    """``raw`` with defaults of ``config`` and the given ``source``.

    Returns a :class:`Request`, or the raw mapping unchanged (with ``source`` set) when it
    does not validate, so the searcher reports the error in the Result as for any call.
    """
    data = raw.model_dump(exclude_unset=True) if isinstance(raw, Request) else dict(raw)
    data["source"] = source
    data = {k: v for k, v in data.items() if v is not None}
    rtype = str(data.get("type", "")).strip().lower()
    if rtype == "web":
        data.setdefault("limit", config.web.max_results)
    elif rtype == "kb":
        if not data.get("collections"):
            data["collections"] = list(config.kb.collections)
        if config.kb.threshold is not None:
            data.setdefault("threshold", config.kb.threshold)
        data.setdefault("graph", config.kb.graph)
    elif rtype == "db":
        if not data.get("models"):
            data["models"] = list(config.db.models)
        data.setdefault("limit", min(config.db.max_results, config.options.max_limit))
    if "limit" in data and isinstance(data["limit"], int):
        data["limit"] = min(data["limit"], config.options.max_limit)
    try:
        return Request.model_validate(data)
    except Exception:
        return data
