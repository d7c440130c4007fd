"""What one run hands to handlers and rerankers: ``ctx.deps``.

Like pydantic-ai's ``RunContext.deps``, one typed object, filled once when a run starts
(by :meth:`Searcher.context <agent_search.searcher.Searcher.context>`, or by an
assistant's stream with its delegates), travels with the :class:`~agent_search.Context`
so no shared handler has to be changed to pass anything in:

- ``generators``: NL → DSL generators by ``uses.query`` name (the db handler's);
- ``keywords``: the keyword extractor ``uses.keyword`` names (the web handler's, and
  the agent's for auto web searches: extracted once per search);
- ``rerankers``: the resolver of the rerankers a run's delegates provide
  (``model:<name>``, ``mcp:<server>.<tool>``, an assistant id), which the searcher
  consults after its own named rerankers — see
  :func:`agent_search.rerank.resolve_reranker`, the one resolution for request-level
  and merge-level reranking.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeVar

from agent_search.trace import first_line

if TYPE_CHECKING:
    from agent_search.context import Context
    from agent_search.query.dsl import DSLGenerator
    from agent_search.rerank import Reranker


class KeywordExtractor(Protocol):
    """Keywords of ``text`` for ``processor`` (the ``uses.keyword`` value). Never raises:
    what failed is one line in ``warnings``, and no keywords means "search the text"."""

    def __call__(self, processor: str | None, text: str, *, max_keywords: int,
                 language: str, warnings: list[str]) -> Awaitable[list[str]]: ...


RerankerResolver = Callable[["Context", str], "Reranker | None"]
"""``(ctx, name) -> Reranker | None``: a run's delegated reranker by name, None when the
name is not one of its kinds. Raises (one line) when the name is its kind but cannot be
built, e.g. a ``model:<name>`` missing from ``rerankers:``."""


async def builtin_keywords(processor: str | None, text: str, *, max_keywords: int,
                           language: str, warnings: list[str]) -> list[str]:
    """The builtin extractor (:mod:`agent_search.query.keyword`); a ``processor`` other
    than builtin needs an assistant's delegates, so it is reported and the builtin one
    is used."""
    from agent_search.query.keyword import extract_keywords_async

    if processor not in (None, "", "builtin"):
        warnings.append(f"uses.keyword {processor!r} is not run by the web handler; "
                        "builtin keyword extraction was used")
    try:
        return await extract_keywords_async(text, max_keywords, language)
    except Exception as exc:  # the search goes on with the whole text as its query
        warnings.append(f"keyword extraction failed, searched the message as is: "
                        f"{first_line(exc)}")
        return []


_V = TypeVar("_V")


class Layered(Mapping[str, _V]):
    """``first`` over ``then``: a name is looked up in ``first``, then in ``then``,
    without copying either (``first`` may build what a name stands for on its lookup,
    as a stream's delegated generators do)."""

    def __init__(self, first: Mapping[str, _V], then: Mapping[str, _V]) -> None:
        self._first, self._then = first, then

    def __getitem__(self, name: str) -> _V:
        try:
            return self._first[name]
        except KeyError:
            return self._then[name]

    def __iter__(self) -> Iterator[str]:
        yield from self._first
        yield from (k for k in self._then if k not in self._first)

    def __len__(self) -> int:
        return sum(1 for _ in self)


@dataclass(slots=True)
class Deps:
    """The dependencies of one run (see the module docstring).

    Attributes:
        generators: NL → DSL generators by ``uses.query`` name (a mapping that may
            build the generator a name stands for when it is looked up).
        keywords: the keyword extractor (:func:`builtin_keywords` unless an assistant's
            delegates fill it).
        rerankers: the run's delegated-reranker resolver, or None (then only the
            searcher's named rerankers exist).
    """

    generators: Mapping[str, DSLGenerator] = field(default_factory=dict)
    keywords: KeywordExtractor = builtin_keywords
    rerankers: RerankerResolver | None = None
