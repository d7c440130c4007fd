"""How the searcher makes a search's Result: its error line, its defaults, its stamp.

The searcher is the one boundary where a handler's outcome becomes the Result callers
see, as httpx maps every transport error in one place. Everything here is that
boundary's bookkeeping, kept apart from the control flow in :mod:`agent_search.searcher`:

- :func:`search_error` words every failure of a search as ``"<type>: <message>"`` — the
  handler's error Result, its exception, its overrun, its wrong return type — so a
  handler (builtin or custom) says only what went wrong and never prefixes its type;
- :func:`with_defaults` fills a request's limit and its handler's options, once;
- :func:`stamp` applies the relevance floor and the limit, then gives the items their
  source, weight and request-unique citation ids.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from agent_search._links import safe_url
from agent_search._text import scrub
from agent_search.config import floor_of
from agent_search.registry import parse_options
from agent_search.types import Request, Result, SearchOptions

if TYPE_CHECKING:
    from agent_search.config import SearchConfig, TypeConfig
    from agent_search.context import Context

RequestLike = Request | Mapping[str, Any]


def search_error(search_type: str, message: str | None) -> str:
    """The one wording of a failed search: ``"<type>: <message>"`` on one line.

    A message that already starts with ``"<type>: "`` is not prefixed again, so a
    handler written before this rule (or one that words its own errors) reads the same.
    """
    line = " ".join((message or "").split()) or "failed"
    prefix = f"{search_type}: "
    return line if not search_type or line.startswith(prefix) else prefix + line


def failed_result(request: Request, search_id: str, message: str) -> Result:
    """A failed Result of ``request``; ``message`` is already worded (see
    :func:`search_error`)."""
    return Result(
        type=request.type,
        query=request.query,
        source=request.source,
        search_id=search_id,
        error=message,
    )


def shared_deadline(
    ctx: Context, requests: Sequence[RequestLike], now: float, cutoff: float
) -> float:
    """The latest time limit among ``requests``: no search is cut short by the shared
    scope. A limit that can't be read before validation makes it the call's cutoff."""
    longest = ctx.config.options.timeout
    for raw in requests:
        if isinstance(raw, Request):
            seconds: Any = raw.timeout
        else:
            seconds = raw.get("timeout") if isinstance(raw, Mapping) else None
        if seconds is None:
            continue
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            return cutoff
        longest = max(longest, float(seconds))
    return min(cutoff, now + longest)


def timeout_error(request: Request, deadline: float, now: float, cutoff: float) -> str:
    why = "deadline exceeded" if deadline >= cutoff else "timed out"
    return search_error(request.type, f"{why} after {_fmt_seconds(max(0.0, deadline - now))}")


def type_and_query(raw: RequestLike) -> tuple[str, str]:
    """What a request says its type and query are, even one that does not validate."""
    if isinstance(raw, Request):
        return raw.type, raw.query
    if isinstance(raw, Mapping):  # echoed in the error Result: must serialise
        return scrub(str(raw.get("type", "")))[:64], scrub(str(raw.get("query", "")))
    return "", ""


def not_started(raw: RequestLike) -> Result:
    """The Result of a search whose task was cancelled before it could start."""
    rtype, query = type_and_query(raw)
    return Result(type=rtype, query=query,
                  error=search_error(rtype, "deadline exceeded before it started"))


def with_defaults(request: Request, section: TypeConfig | None, limit: int,
                  handler: object, config: SearchConfig) -> Request:
    """``request`` with everything it leaves unset filled, in the one place defaults are
    filled, before the search costs anything: its ``limit``, and its options parsed by
    ``handler``'s options model (a :class:`SearchOptions`) and filled from ``config``
    (:meth:`SearchOptions.filled`); a bad option raises
    :class:`~agent_search.errors.InputError` naming it. A handler without such a model
    gets the ``request_defaults`` of its ``section`` in its options dict instead.

    A shallow copy (the caller's request is not changed), cheaper than ``model_copy`` on
    the hot path, and no copy when nothing is missing."""
    model = getattr(handler, "options_model", None)
    parsed: SearchOptions | None = None
    options: dict[str, Any] | None = None
    if isinstance(model, type) and issubclass(model, SearchOptions):
        parsed = parse_options(model, request.options).filled(config)
    elif section is not None and section.request_defaults:
        options = _section_defaults(request.options, section)
    if request.limit is not None and parsed is None and options is None:
        return request
    copy = request.__copy__()
    values: dict[str, Any] = {} if request.limit is not None else {"limit": limit}
    if options is not None:
        values["options"] = options
    if values:
        store(copy, **values)
    if parsed is not None:
        private = copy.__pydantic_private__
        assert private is not None  # Request declares a private attribute
        private["_parsed_options"] = parsed
    return copy


def _section_defaults(given: dict[str, Any], section: TypeConfig) -> dict[str, Any] | None:
    """``given`` options with the section's ``request_defaults`` where they are unset
    (None when none is missing)."""
    missing: dict[str, Any] = {}
    for name in section.request_defaults:
        if not given.get(name):
            default = getattr(section, name, None)
            if default:
                missing[name] = list(default) if isinstance(default, list) else default
    return {**given, **missing} if missing else None


_STAMPED_FIELDS = ("source", "weight", "citation_id", "type")


def stamp(ctx: Context, request: Request, result: Result, search_id: str, limit: int,
          section: TypeConfig | None) -> None:
    """Floor, cut and stamp ``result`` in place: the searcher, not the handler, owns
    identity, source, weight and citation ids. ``section`` is the type's configuration
    (looked up once per search by the caller).

    The relevance floor comes before anything else: what is under it never reaches a
    merge, an event or a prompt, and the Result says how much was dropped."""
    items = result.items
    floor = request.min_score
    if floor is None:
        floor = floor_of(section)
    if floor and items:
        kept = [item for item in items if item.score >= floor]
        if len(kept) < len(items):
            store(result, dropped_below_floor=result.dropped_below_floor
                  + len(items) - len(kept))
            items[:] = kept
    if len(items) > limit:
        del items[limit:]
    rtype, source = request.type, request.source
    store(result, type=rtype, query=request.query, source=source,
          search_id=search_id, total=max(result.total, len(items)))
    weight = ctx.config.weights.for_source(source)
    first_id = ctx.citations.reserve(len(items))
    unsafe_urls = 0
    for n, item in enumerate(items, first_id):
        values = item.__dict__
        values["source"] = source
        values["weight"] = weight
        values["citation_id"] = str(n)
        if not values["type"]:
            values["type"] = rtype
        url = values["url"]
        if url is not None:
            values["url"] = safe = safe_url(url)
            unsafe_urls += safe is None
        item.__pydantic_fields_set__.update(_STAMPED_FIELDS)
    if unsafe_urls:
        result.warnings.append(
            f"{rtype}: removed {unsafe_urls} item url(s) that were not plain http(s) links"
        )


def store(model: BaseModel, **values: Any) -> None:
    """Set already-valid field values without pydantic's validating ``__setattr__``,
    which costs more than the rest of a search's bookkeeping on the hot path."""
    model.__dict__.update(values)
    model.__pydantic_fields_set__.update(values)


def ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _fmt_seconds(s: float) -> str:
    return f"{s:.3g}s" if math.isfinite(s) else "∞"
