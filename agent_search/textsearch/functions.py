"""Any text search as an LLM-callable function (a "tool").

:func:`create_search_function` wraps a :class:`TextSearch` method in a
:class:`SearchFunction`: a name, a description, the JSON Schema of its parameters (the
OpenAI tools format, :meth:`SearchFunction.openai_tool`), and ``await invoke(arguments,
ctx)`` which validates the model's arguments against that schema before anything runs::

    fn = create_search_function(text_search, output_type="text_search_result")
    fn.openai_tool()      # {"type": "function", "function": {"name": ..., "parameters": ...}}
    await fn.invoke({"query": "What is the Semantic Kernel?", "count": 3}, ctx=ctx)

Arguments are data: they are checked against the schema (types, ranges, unknown names,
all reported in one line naming the argument), mapped to :class:`SearchOptions` (``count``
→ ``top``, ``skip`` → ``skip``) and, through ``filter_update``, to a filter (see
:func:`filter_from_arguments`). Nothing a model sends is evaluated.

``invoke`` returns a JSON-ready list: strings for ``output_type="string"``,
``{"name", "value", "link", "citation_id"}`` objects for ``"text_search_result"``, the
native records' JSON for ``"native"``. With a :class:`~agent_search.context.Context`
the ids come from the request's allocator, so they never collide with the request's other
searches. :meth:`SearchFunction.invoke_text` gives the same as a JSON string (a tool
message's content).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from jsonschema.exceptions import (  # type: ignore[import-untyped]
    ValidationError as SchemaError,
)
from jsonschema.exceptions import best_match
from pydantic import BaseModel

from agent_search.context import Context
from agent_search.textsearch.base import OptionsLike, TextSearch, TextSearchError, resolve_options
from agent_search.textsearch.filters import TextSearchFilter, equal_to
from agent_search.textsearch.results import MAX_SKIP, KernelSearchResults, TextSearchResult
from agent_search.types import MAX_QUERY_CHARS, ResultItem

OutputType = Literal["string", "text_search_result", "native"]
JsonType = Literal["string", "integer", "number", "boolean", "array", "object"]

_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
DEFAULT_MAX_COUNT = 50

_DEFAULTS: dict[str, tuple[str, str]] = {
    "string": ("Search", "Perform a search for content related to the specified query and "
                         "return string results."),
    "text_search_result": ("GetTextSearchResults",
                           "Perform a search for content related to the specified query. "
                           "The search returns results with a name, value and link; cite the "
                           "link of the results you use."),
    "native": ("GetSearchResults", "Perform a search for content related to the specified "
                                   "query and return the records of the search service."),
}


class ToolArgumentError(TextSearchError):
    """The arguments of a tool call do not fit the function's parameters."""


class SearchMethod(Protocol):
    def __call__(self, query: str, options: OptionsLike = None, *,
                 ctx: Context | None = None) -> Awaitable[KernelSearchResults[Any]]: ...


FilterUpdate = Callable[[TextSearchFilter | None, Mapping[str, Any]], TextSearchFilter | None]
"""``(filter from the options, validated arguments) → filter for this call``."""


@dataclass(frozen=True, slots=True)
class FunctionParameter:
    """One parameter of a search function, as JSON Schema sees it."""

    name: str
    description: str = ""
    type: JsonType = "string"
    required: bool = False
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    enum: Sequence[Any] | None = None
    items: JsonType | None = None

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"parameter name {self.name!r} must match [A-Za-z0-9_-]{{1,64}}")

    def schema(self) -> dict[str, Any]:
        s: dict[str, Any] = {"type": self.type}
        if self.description:
            s["description"] = self.description
        if self.default is not None:
            s["default"] = self.default
        for key, value in (("minimum", self.minimum), ("maximum", self.maximum),
                           ("minLength", self.min_length), ("maxLength", self.max_length)):
            if value is not None:
                s[key] = value
        if self.enum is not None:
            s["enum"] = list(self.enum)
        if self.type == "array":
            s["items"] = {"type": self.items or "string"}
        return s


def query_parameter(description: str = "What to search for") -> FunctionParameter:
    return FunctionParameter("query", description, "string", required=True, min_length=1,
                             max_length=MAX_QUERY_CHARS)


def count_parameter(default: int = 2, maximum: int = DEFAULT_MAX_COUNT,
                    description: str = "Number of results") -> FunctionParameter:
    return FunctionParameter("count", description, "integer", default=default, minimum=1,
                             maximum=maximum)


def skip_parameter(default: int = 0, description: str = "Number of results to skip"
                   ) -> FunctionParameter:
    return FunctionParameter("skip", description, "integer", default=default, minimum=0,
                             maximum=MAX_SKIP)


def site_parameter(description: str = "Only return results from this domain"
                   ) -> FunctionParameter:
    """The ADR's "search by site" parameter; pair it with
    ``filter_update=filter_from_arguments({"site": "site"})``."""
    return FunctionParameter("site", description, "string", min_length=1, max_length=253)


def filter_from_arguments(mapping: Mapping[str, str]) -> FilterUpdate:
    """A ``filter_update`` that adds ``field = argument`` for each ``argument → field`` of
    ``mapping`` the model supplied (non-empty). A list argument becomes ``field in [...]``.
    The values are data; the text search decides whether it supports the field."""

    def update(base: TextSearchFilter | None, arguments: Mapping[str, Any]
               ) -> TextSearchFilter | None:
        out = TextSearchFilter(list(base.clauses) if base else [])
        for argument, field_name in mapping.items():
            value = arguments.get(argument)
            if value is None or value == "" or value == []:
                continue
            if isinstance(value, list):
                out.where(field_name, "in", value)
            else:
                out.clauses.extend(equal_to(field_name, value).clauses)
        return out or None

    return update


def to_jsonable(record: Any) -> Any:
    """A record in the form a tool returns to a model."""
    if isinstance(record, str | int | float | bool) or record is None:
        return record
    if isinstance(record, TextSearchResult):
        return record.to_json()
    if isinstance(record, ResultItem):
        data = record.model_dump(mode="json", exclude_none=True,
                                 exclude={"source", "weight", "rerank_score"})
        if not data.get("metadata"):
            data.pop("metadata", None)
        return data
    if isinstance(record, BaseModel):
        return record.model_dump(mode="json", exclude_none=True, by_alias=True)
    if isinstance(record, Mapping):
        return json.loads(json.dumps(dict(record), default=str))
    return str(record)


@dataclass(slots=True)
class SearchFunction:
    """A search exposed as a tool. ``name`` is what the model calls (``Plugin-Function``
    inside a plugin); ``function_name`` the bare name."""

    function_name: str
    description: str
    parameters: list[FunctionParameter]
    method: SearchMethod
    output_type: OutputType = "string"
    options: OptionsLike = None
    filter_update: FilterUpdate | None = None
    string_mapper: Callable[[Any], str] | None = None
    plugin_name: str | None = None
    _validator: Draft202012Validator = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.function_name):
            raise ValueError(f"function name {self.function_name!r} must match "
                             "[A-Za-z0-9_-]{1,64} (OpenAI tool names)")
        names = [p.name for p in self.parameters]
        if len(set(names)) != len(names):
            raise ValueError(f"function {self.function_name}: duplicate parameter names")
        if "query" not in names:
            raise ValueError(f"function {self.function_name}: a 'query' parameter is required")
        self.options = resolve_options(self.options)
        Draft202012Validator.check_schema(self.parameters_schema)
        self._validator = Draft202012Validator(self.parameters_schema)

    @property
    def name(self) -> str:
        return f"{self.plugin_name}-{self.function_name}" if self.plugin_name else \
            self.function_name

    @property
    def parameters_schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments (an object; unknown arguments are refused)."""
        return {
            "type": "object",
            "properties": {p.name: p.schema() for p in self.parameters},
            "required": [p.name for p in self.parameters if p.required],
            "additionalProperties": False,
        }

    def openai_tool(self) -> dict[str, Any]:
        """The function in the OpenAI chat-completions ``tools`` format."""
        return {"type": "function", "function": {
            "name": self.name, "description": self.description,
            "parameters": self.parameters_schema}}

    def in_plugin(self, plugin_name: str | None) -> SearchFunction:
        return replace(self, plugin_name=plugin_name)

    # -- calling -----------------------------------------------------------------------

    def validate_arguments(self, arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
        """Parsed (when a JSON string), checked and completed with defaults; raises
        :class:`ToolArgumentError` naming the first problem."""
        if arguments is None:
            arguments = {}
        if isinstance(arguments, str | bytes):
            try:
                arguments = json.loads(arguments or "{}")
            except ValueError as exc:
                raise ToolArgumentError(f"{self.name}: arguments are not valid JSON: "
                                        f"{exc}") from exc
        if not isinstance(arguments, Mapping):
            raise ToolArgumentError(f"{self.name}: arguments must be a JSON object, not "
                                    f"{type(arguments).__name__}")
        args = dict(arguments)
        error = best_match(self._validator.iter_errors(args))
        if error is not None:
            raise ToolArgumentError(f"{self.name}: {_describe(error)}")
        for p in self.parameters:
            if p.name not in args and p.default is not None:
                args[p.name] = p.default
        if not str(args.get("query", "")).strip():
            raise ToolArgumentError(f"{self.name}: argument 'query' must not be blank")
        return args

    async def invoke(self, arguments: Mapping[str, Any] | str | None = None,
                     ctx: Context | None = None) -> list[Any]:
        """Validate ``arguments``, run the search, return JSON-ready results.

        Raises :class:`ToolArgumentError` for bad arguments and :class:`TextSearchError`
        (one line) when the search fails; a runtime hands ``str(exc)`` back to the model.
        """
        results = await self.run(arguments, ctx)
        records = results.items
        if self.string_mapper is not None:
            return [self.string_mapper(r) for r in records]
        return [to_jsonable(r) for r in records]

    async def run(self, arguments: Mapping[str, Any] | str | None = None,
                  ctx: Context | None = None) -> KernelSearchResults[Any]:
        """Like :meth:`invoke` but returns the search's own results (records, metadata;
        a text result's ``inner_content`` is the :class:`ResultItem` when it came through
        the searcher), for runtimes that also keep the items as references."""
        args = self.validate_arguments(arguments)
        base = resolve_options(self.options)
        update: dict[str, Any] = {}
        if "count" in args:
            update["top"] = int(args["count"])
        if "skip" in args:
            update["skip"] = int(args["skip"])
        if self.filter_update is not None:
            update["filter"] = self.filter_update(base.filter, args)
        options = base.model_copy(update=update)
        return await self.method(str(args["query"]), options, ctx=ctx)

    async def invoke_text(self, arguments: Mapping[str, Any] | str | None = None,
                          ctx: Context | None = None) -> str:
        """:meth:`invoke` as one JSON string (the content of a tool message)."""
        return json.dumps(await self.invoke(arguments, ctx), ensure_ascii=False)


def _describe(error: SchemaError) -> str:
    where = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "additionalProperties":
        return f"unknown argument(s): {error.message.split('(')[-1].rstrip(')')}"
    if error.validator == "required":
        return f"missing argument: {error.message.split(' is ')[0]}"
    value = json.dumps(error.instance, default=str)
    if len(value) > 60:
        value = value[:57] + "..."
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    if error.validator == "type":
        return f"argument {where!r} must be of type {schema.get('type')}, got {value}"
    if error.validator in ("minimum", "maximum"):
        low, high = schema.get("minimum"), schema.get("maximum")
        bounds = f"{low}..{high}" if low is not None and high is not None else \
            (f">= {low}" if low is not None else f"<= {high}")
        return f"argument {where!r} is {value}; allowed range is {bounds}"
    if error.validator in ("minLength", "maxLength"):
        return f"argument {where!r} must be {schema.get('minLength', 0)}.." \
               f"{schema.get('maxLength', 'any')} characters long"
    if error.validator == "enum":
        return f"argument {where!r} is {value}; allowed: {schema.get('enum')}"
    return f"argument {where!r}: {error.message}"


def _method_for(text_search: TextSearch[Any], output_type: OutputType) -> SearchMethod:
    if output_type == "string":
        return text_search.search
    if output_type == "text_search_result":
        return text_search.get_text_search_results
    if output_type == "native":
        return text_search.get_search_results
    raise ValueError(f"output_type {output_type!r}: expected string, text_search_result or "
                     "native")


def create_search_function(
    text_search: TextSearch[Any],
    *,
    function_name: str | None = None,
    description: str | None = None,
    parameters: Sequence[FunctionParameter] | None = None,
    output_type: OutputType = "string",
    string_mapper: Callable[[Any], str] | None = None,
    options: OptionsLike = None,
    filter_update: FilterUpdate | None = None,
    method: SearchMethod | None = None,
    max_count: int = DEFAULT_MAX_COUNT,
) -> SearchFunction:
    """A tool running ``text_search``.

    ``output_type`` picks the method (``search``/``get_text_search_results``/
    ``get_search_results``) and the default name and description (``Search``,
    ``GetTextSearchResults``, ``GetSearchResults``); ``method`` runs another method of the
    implementation instead (e.g. a web provider's ``get_web_pages``). ``parameters``
    default to ``query`` (required), ``count`` (1..``max_count``, default 2) and ``skip``.
    ``options`` are the base :class:`SearchOptions` of every call (e.g. a fixed filter);
    ``filter_update`` derives the call's filter from its arguments. ``string_mapper``
    turns each result (a :class:`TextSearchResult` for ``"string"``, else the record the
    method returns) into the string the model gets.
    """
    default_name, default_description = _DEFAULTS.get(output_type, ("Search", ""))
    if method is None:
        # a string mapper maps normalised results: give it TextSearchResults to map
        method = (text_search.get_text_search_results
                  if string_mapper is not None and output_type == "string"
                  else _method_for(text_search, output_type))
    if parameters is None:
        parameters = [query_parameter(), count_parameter(maximum=max_count), skip_parameter()]
    return SearchFunction(
        function_name=function_name or default_name,
        description=description or default_description,
        parameters=list(parameters),
        method=method,
        output_type=output_type,
        options=options,
        filter_update=filter_update,
        string_mapper=string_mapper,
    )
