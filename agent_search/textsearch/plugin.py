"""Search plugins: named groups of search functions offered to a model together.

:func:`create_search_plugin` gives the ADR's default plugin with three functions —
``Search`` (strings), ``GetTextSearchResults`` (name/value/link) and ``GetSearchResults``
(native records) — or the functions you pass. Inside a plugin a function's tool name is
``<plugin>-<function>`` (``SearchPlugin-Search``), as Semantic Kernel names them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from agent_search.context import Context
from agent_search.textsearch.base import TextSearch
from agent_search.textsearch.functions import (
    OutputType,
    SearchFunction,
    ToolArgumentError,
    create_search_function,
)

DEFAULT_OUTPUTS: tuple[OutputType, ...] = ("string", "text_search_result", "native")


class SearchPlugin:
    """Functions by bare name; :meth:`tools` lists them for a model, :meth:`invoke` runs
    the one a tool call names (bare or ``Plugin-Function``)."""

    def __init__(self, name: str, functions: Sequence[SearchFunction],
                 description: str | None = None) -> None:
        self.name = name
        self.description = description
        self._functions: dict[str, SearchFunction] = {}
        for fn in functions:
            if fn.function_name in self._functions:
                raise ValueError(f"plugin {name}: two functions named {fn.function_name!r}")
            self._functions[fn.function_name] = fn.in_plugin(name)
        if not self._functions:
            raise ValueError(f"plugin {name}: needs at least one function")

    def __getitem__(self, function_name: str) -> SearchFunction:
        fn = self.get(function_name)
        if fn is None:
            raise KeyError(f"plugin {self.name} has no function {function_name!r} "
                           f"(functions: {', '.join(self._functions)})")
        return fn

    def get(self, name: str) -> SearchFunction | None:
        """The function called ``name`` or ``<plugin>-<name>``."""
        prefix = f"{self.name}-"
        bare = name[len(prefix):] if name.startswith(prefix) else name
        return self._functions.get(bare)

    def __iter__(self) -> Iterator[SearchFunction]:
        return iter(self._functions.values())

    def __len__(self) -> int:
        return len(self._functions)

    @property
    def functions(self) -> list[SearchFunction]:
        return list(self._functions.values())

    def tools(self) -> list[dict[str, Any]]:
        """Every function in the OpenAI ``tools`` format."""
        return [fn.openai_tool() for fn in self._functions.values()]

    async def invoke(self, name: str, arguments: Mapping[str, Any] | str | None = None,
                     ctx: Context | None = None) -> list[Any]:
        fn = self.get(name)
        if fn is None:
            raise ToolArgumentError(f"unknown function {name!r}; plugin {self.name} has "
                                    f"{', '.join(f.name for f in self)}")
        return await fn.invoke(arguments, ctx)


def create_search_plugin(text_search: TextSearch[Any], name: str = "SearchPlugin",
                         description: str | None = None,
                         functions: Sequence[SearchFunction] | None = None) -> SearchPlugin:
    """A plugin over ``text_search``: the three default functions, or ``functions``."""
    if functions is None:
        functions = [create_search_function(text_search, output_type=o)
                     for o in DEFAULT_OUTPUTS]
    return SearchPlugin(name, functions, description)


def create_plugin_with_text_search(text_search: TextSearch[Any],
                                   name: str = "SearchPlugin") -> SearchPlugin:
    """One ``Search`` function returning strings (SK ``CreateWithSearch``)."""
    return SearchPlugin(name, [create_search_function(text_search, output_type="string")])


def create_plugin_with_get_text_search_results(text_search: TextSearch[Any],
                                               name: str = "SearchPlugin") -> SearchPlugin:
    """One ``GetTextSearchResults`` function (name/value/link, citable)."""
    return SearchPlugin(name, [create_search_function(text_search,
                                                      output_type="text_search_result")])


def create_plugin_with_get_search_results(text_search: TextSearch[Any],
                                          name: str = "SearchPlugin") -> SearchPlugin:
    """One ``GetSearchResults`` function (the implementation's records)."""
    return SearchPlugin(name, [create_search_function(text_search, output_type="native")])
