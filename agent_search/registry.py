"""Handlers and the registry that routes a request to one of them.

The registry is the list of what can be searched: the CLI's ``search TYPE`` choices, the
MCP server's tools and its ``search`` tool's types, the HTTP service and auto search all
read it, so a handler registered once (in Python, or by an ``agent_search.handlers``
entry point, see :mod:`agent_search._builtins`) is reachable from every interface.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterator, Mapping
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, Field, ValidationError

from agent_search.errors import ConfigError, InputError

if TYPE_CHECKING:
    from agent_search.context import Context
    from agent_search.types import Request, Result


@runtime_checkable
class Handler(Protocol):
    """A search implementation for one search type (``web``, ``kb``, ``db`` or your own).

    Attributes:
        type: the search type it answers (lower case), e.g. ``"news"``.
        options_model: optional pydantic model of the ``request.options`` keys it reads;
            interfaces offer its fields' choices (the CLI's ``--mode``), and
            :func:`parse_options` validates a request's options against it.
        searchable: optional, default True; False for a handler that reads one named
            thing rather than answering free-text questions.
        keyword_queries: optional, default False; True for a handler that searches
            keywords better than a conversational message (a web search engine): auto
            search then extracts the message's keywords once (``uses.keyword``, through
            ``ctx.deps.keywords``), searches them, and sets the request option
            ``keywords: false`` to say the query is keywords already.
        reads_history: optional, default False; True for a handler that reads a
            conversation's follow-up itself from the request option ``history`` (the
            earlier user turns, oldest first): the database's.

    Methods:
        can_handle(ctx, request): whether it takes this request (the first registered
            handler of the type that says yes gets it).
        search(ctx, request): the :class:`Result`. Say only what went wrong in
            ``Result.error``; the searcher words it ``"<type>: <message>"``. Raising is
            allowed (the searcher turns the exception into that line) but an error Result
            is preferred when the handler knows what went wrong. The searcher has filled
            ``request.limit`` and the section's request defaults, and applies the
            relevance floor, the limit and citation ids to what comes back.

    A handler that holds connections may also define ``async aclose()``;
    :meth:`Searcher.aclose` calls it; and ``async ping()``, raising when its store or
    database cannot be reached: the HTTP service's ``/readyz`` calls it. One that reads
    a single named thing rather than answering free-text questions (like the
    ``mcp_resource`` data source) sets ``searchable = False``: auto search and the
    search tool then leave its type out.
    """

    type: str

    def can_handle(self, ctx: Context, request: Request) -> bool: ...

    async def search(self, ctx: Context, request: Request) -> Result: ...


class Registry:
    """Handlers by type, in registration order; the first that can handle a request wins."""

    def __init__(self) -> None:
        self._handlers: dict[str, list[Handler]] = {}

    def register(self, handler: Handler, *, first: bool = False) -> None:
        """Add ``handler`` for its ``type``; ``first=True`` puts it ahead of earlier ones."""
        if not isinstance(getattr(handler, "type", None), str) or not handler.type:
            raise TypeError(f"{handler!r} has no search type (a non-empty str attribute 'type')")
        if not callable(getattr(handler, "search", None)) or not callable(
            getattr(handler, "can_handle", None)
        ):
            raise TypeError(f"{handler!r} is not a Handler (needs can_handle() and search())")
        bucket = self._handlers.setdefault(handler.type.lower(), [])
        if first:
            bucket.insert(0, handler)
        else:
            bucket.append(handler)

    def unregister(self, handler: Handler) -> None:
        bucket = self._handlers.get(handler.type.lower(), [])
        if handler in bucket:
            bucket.remove(handler)

    def handlers(self, search_type: str) -> list[Handler]:
        return list(self._handlers.get(search_type.lower(), []))

    @property
    def types(self) -> list[str]:
        """The search types with a handler, in registration order."""
        return [t for t, hs in self._handlers.items() if hs]

    @property
    def searchable_types(self) -> list[str]:
        """The types with a handler that answers free-text questions, in registration
        order (the built-in ones first, then yours): what auto search falls back to and
        the search tool offers."""
        return [t for t, hs in self._handlers.items()
                if any(getattr(h, "searchable", True) for h in hs)]

    def keyword_queries(self, search_type: str) -> bool:
        """Whether a handler of ``search_type`` wants keywords rather than the message
        (its ``keyword_queries``): what auto search asks before it builds the request."""
        return any(getattr(h, "keyword_queries", False)
                   for h in self._handlers.get(search_type.lower(), ()))

    def reads_history(self, search_type: str) -> bool:
        """Whether a handler of ``search_type`` reads a follow-up against the earlier turns
        of a conversation itself (its ``reads_history``: the db's): auto search then
        passes the last turn as the query and the earlier user turns as the request
        option ``history``."""
        return any(getattr(h, "reads_history", False)
                   for h in self._handlers.get(search_type.lower(), ()))

    def options_model(self, search_type: str) -> type[BaseModel] | None:
        """The options model of the first handler of ``search_type`` that has one."""
        for handler in self._handlers.get(search_type.lower(), ()):
            model = getattr(handler, "options_model", None)
            if isinstance(model, type) and issubclass(model, BaseModel):
                return model
        return None

    def resolve(self, ctx: Context, request: Request) -> Handler | None:
        for handler in self._handlers.get(request.type, ()):
            if handler.can_handle(ctx, request):
                return handler
        return None


_T = TypeVar("_T")


def entry_point_plugins(group: str, what: str,
                        make: Callable[[Any], _T]) -> Iterator[tuple[str, _T, str]]:
    """``(name, make(loaded object), key)`` for each entry point of ``group``, in name
    order: the one door every extension point (handlers, web providers, kb stores) reads
    plug-ins through. A plug-in that cannot be imported, or that ``make`` refuses, is a
    ConfigError naming its entry point (``key`` is ``group.name``), never a traceback or a
    plug-in silently left out."""
    for point in sorted(entry_points(group=group), key=lambda p: p.name):
        where = f"{group}.{point.name}"
        try:
            made = make(point.load())
        except ConfigError:
            raise
        except Exception as exc:
            raise ConfigError(f"{what} plug-in {point.value!r} failed to load: "
                              f"{type(exc).__name__}: {exc}", key=where) from exc
        yield point.name, made, where


_M = TypeVar("_M", bound=BaseModel)


def parse_options(model: type[_M], raw: Mapping[str, Any] | None) -> _M:
    """``request.options`` validated by a handler's options ``model``; a bad value is an
    :class:`~agent_search.errors.InputError` of one line naming the option and the value,
    e.g. ``invalid option mode: Input should be 'hybrid', 'dense' or 'sparse', got
    'fuzzy'``."""
    try:
        return model.model_validate(dict(raw or {}))
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "options"
        msg = str(err["msg"]).removeprefix("Value error, ")
        shown = repr(err["input"])
        shown = shown if len(shown) <= 80 else f"{shown[:77]}..."  # the caller's value, cut
        got = f", got {shown}" if err["type"] != "value_error" and loc != "options" else ""
        raise InputError(f"invalid option {loc}: {msg}{got}") from exc


_BOUNDS = ("gt", "ge", "lt", "le", "min_length", "max_length")


def config_option(model: type[BaseModel], name: str, key: str) -> Any:
    """A request option's field (``None`` when unset) with the bounds of the config key
    ``name`` of ``model`` — the key it overrides for one search, named ``key``
    (``"kb.prefetch"``) in the option's schema. A request may ask for no more than a
    config may: the option ``prefetch`` is capped where ``kb.prefetch`` is (10,000), and
    the cap is read from the config's field, so the two cannot drift apart."""
    field = model.model_fields[name]
    bounds = {attr: getattr(m, attr) for m in field.metadata for attr in _BOUNDS
              if getattr(m, attr, None) is not None}
    return Field(default=None, description=field.description,
                 json_schema_extra={"config_key": key}, **bounds)


def option_choices(model: type[BaseModel] | None, name: str) -> tuple[str, ...]:
    """The values a ``Literal`` option field of ``model`` accepts (empty when the model
    has no such field): what an interface offers as choices."""
    field = None if model is None else model.model_fields.get(name)
    if field is None:
        return ()
    found: list[str] = []
    pending: list[Any] = [field.annotation]
    while pending:
        tp = pending.pop(0)
        if typing.get_origin(tp) is typing.Literal:
            found.extend(str(a) for a in typing.get_args(tp))
        else:
            pending.extend(typing.get_args(tp))
    return tuple(found)
