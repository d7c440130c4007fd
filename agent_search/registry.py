"""Handlers and the registry that routes a request to one of them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from agent_search.context import Context
    from agent_search.types import Request, Result


@runtime_checkable
class Handler(Protocol):
    """A search implementation for one search type (``web``, ``kb``, ``db`` or your own).

    ``search`` returns a :class:`Result`; raising is allowed (the searcher turns the
    exception into ``Result.error``) but returning an error Result is preferred when the
    handler knows what went wrong.

    A handler that holds connections may also define ``async aclose()``;
    :meth:`Searcher.aclose` calls it. One that reads a single named thing rather than
    answering free-text questions (like the ``mcp_resource`` data source) sets
    ``searchable = False``: auto search and the search tool then leave its type out.
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

    def resolve(self, ctx: Context, request: Request) -> Handler | None:
        for handler in self._handlers.get(request.type, ()):
            if handler.can_handle(ctx, request):
                return handler
        return None
