"""The value types of the text-search abstraction: options in, results out.

Names follow Semantic Kernel's ADR (``SearchOptions``, ``KernelSearchResults``,
``TextSearchResult``) in Python spelling.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent_search.errors import FilterError
from agent_search.textsearch.filters import TextSearchFilter
from agent_search.types import ABSOLUTE_MAX_LIMIT

T = TypeVar("T")
U = TypeVar("U")

MAX_SKIP = 1_000
"""Largest ``skip``: providers page by fetching ``top + skip`` results and dropping the
first ``skip``, so a huge skip would be a huge fetch."""


class SearchOptions(BaseModel):
    """How many results, from where, and which.

    ``top`` results after skipping ``skip``; ``include_total_count`` asks for
    :attr:`KernelSearchResults.total_count`; ``filter`` restricts the search (see
    :mod:`agent_search.textsearch.filters`).
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    top: int = Field(default=5, ge=1, le=ABSOLUTE_MAX_LIMIT)
    skip: int = Field(default=0, ge=0, le=MAX_SKIP)
    include_total_count: bool = False
    filter: TextSearchFilter | None = None

    @field_validator("filter", mode="before")
    @classmethod
    def _filter_from_json(cls, v: Any) -> Any:
        if v is None or isinstance(v, TextSearchFilter):
            return v
        if isinstance(v, dict | list):
            return TextSearchFilter.from_json(v)
        raise FilterError(f"filter must be a TextSearchFilter or its JSON form, not "
                          f"{type(v).__name__}")

    @property
    def fetch_count(self) -> int:
        """How many results to ask the backend for so ``skip`` + ``top`` are covered."""
        return min(self.top + self.skip, ABSOLUTE_MAX_LIMIT)

    def page(self, items: Sequence[U]) -> list[U]:
        """``items`` without the first ``skip``, at most ``top``."""
        return list(items[self.skip:self.skip + self.top])


class TextSearchResult(BaseModel):
    """A normalised result: ``name``, ``value`` (the text), ``link``.

    ``inner_content`` keeps the record it was made from (a
    :class:`~agent_search.types.ResultItem`, a provider's page, a custom record);
    ``citation_id`` is the request-unique id when the result came through the searcher or
    a context was given, so an answer can cite it.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str | None = None
    value: str = ""
    link: str | None = None
    citation_id: str | None = None
    inner_content: Any = Field(default=None, exclude=True, repr=False)

    def to_json(self) -> dict[str, Any]:
        """The form a tool returns to a model: name, value, link (and citation id)."""
        data: dict[str, Any] = {"name": self.name, "value": self.value, "link": self.link}
        if self.citation_id is not None:
            data["citation_id"] = self.citation_id
        return data


class _Replayable(Generic[T]):
    """An async iterable over a list that can be iterated more than once."""

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[T]) -> None:
        self._items = list(items)

    def __aiter__(self) -> AsyncIterator[T]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[T]:
        for item in self._items:
            yield item


@dataclass(slots=True)
class KernelSearchResults(Generic[T]):
    """The results of one text search.

    ``results`` is async-iterable (``async for r in res.results``), as in the ADR, and may be
    iterated again; :meth:`to_list` collects it. ``total_count`` is set when
    ``include_total_count`` was asked and the backend knows it. ``metadata`` carries
    backend details (e.g. ``search_id``, ``duration_ms``, ``warnings``).
    """

    items: list[T] = field(default_factory=list)
    total_count: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def results(self) -> _Replayable[T]:
        return _Replayable(self.items)

    async def to_list(self) -> list[T]:
        return [item async for item in self.results]

    def __len__(self) -> int:
        return len(self.items)

    def map(self, fn: Any) -> KernelSearchResults[Any]:
        """The same results with each item passed through ``fn`` (metadata kept)."""
        return KernelSearchResults([fn(i) for i in self.items], self.total_count,
                                   dict(self.metadata))
