"""The data that flows through the search module: requests, results and their parts.

All models are pydantic v2. Field names are the JSON names of the wire contract
(see README "Result JSON"), so ``model_dump(mode="json")`` is what ``--json`` prints.
"""

from __future__ import annotations

import unicodedata
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from typing_extensions import Self

from agent_search._text import surrogate_message

if TYPE_CHECKING:
    from agent_search.config import SearchConfig

Source = Literal["user", "hook", "auto"]
"""Who asked for a search. Priority when deduplicating: user > hook > auto."""

SOURCE_PRIORITY: dict[str, int] = {"user": 0, "hook": 1, "auto": 2}
"""Lower is stronger: a ``user`` copy of a record beats a ``hook`` copy, which beats ``auto``."""

TimeRange = Literal["day", "week", "month", "year"]
RerankerType = Literal["score", "model", "agent", "mcp"]

MAX_QUERY_CHARS = 16_384
"""Longest query accepted. Longer text is not a query but a document; ingest it instead."""

ABSOLUTE_MAX_LIMIT = 10_000
"""Hard ceiling on ``limit`` whatever the configuration says (config ``options.max_limit``
sets the usual, lower, maximum)."""

# Canonical operators, and the spellings we accept for them (Yao QueryDSL, SQL, shorthand).
OPERATORS: frozenset[str] = frozenset(
    {"=", "!=", ">", ">=", "<", "<=", "like", "in", "not in", "between", "is null", "is not null"}
)
_OPERATOR_ALIASES: dict[str, str] = {
    "==": "=",
    "eq": "=",
    "<>": "!=",
    "ne": "!=",
    "neq": "!=",
    "gt": ">",
    "ge": ">=",
    "gte": ">=",
    "lt": "<",
    "le": "<=",
    "lte": "<=",
    "match": "like",
    "not_in": "not in",
    "notin": "not in",
    "null": "is null",
    "is_null": "is null",
    "notnull": "is not null",
    "not_null": "is not null",
    "is_not_null": "is not null",
}
NULLARY_OPERATORS: frozenset[str] = frozenset({"is null", "is not null"})


def normalize_operator(op: str) -> str:
    """Return the canonical spelling of ``op`` or raise ``ValueError`` naming it."""
    key = " ".join(op.strip().lower().split())
    key = _OPERATOR_ALIASES.get(key, key)
    if key not in OPERATORS:
        allowed = ", ".join(sorted(OPERATORS))
        raise ValueError(f"unknown operator {op!r}; allowed: {allowed}")
    return key


def _refuse_bool(v: Any) -> Any:
    """``true`` where a number belongs is a mistake (a flag in the wrong field), not 1:
    pydantic's lax mode would take it as 1 and a search would quietly run with ``limit`` 1."""
    if isinstance(v, bool):
        raise ValueError("expected a number, not true/false")
    return v


Count = Annotated[int, BeforeValidator(_refuse_bool)]
"""An integer from outside: a JSON number (or its string), never ``true``/``false``."""

Number = Annotated[float, BeforeValidator(_refuse_bool)]
"""A real number from outside: a JSON number (or its string), never ``true``/``false``."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


MAX_WHERE_DEPTH = 8
"""Deepest nesting of ``or`` / ``and`` groups a where may have."""

MAX_WHERE_CLAUSES = 256
"""Most clauses (groups included) one where tree may hold."""


def _check_where_tree(data: Any) -> None:
    """Refuse a where tree deeper than :data:`MAX_WHERE_DEPTH` or larger than
    :data:`MAX_WHERE_CLAUSES`, walking the raw input iteratively (a recursive validator
    would hit Python's recursion limit first)."""
    pending: list[tuple[Any, int]] = [(data, 1)]
    seen = 0
    while pending:
        node, depth = pending.pop()
        seen += 1
        if seen > MAX_WHERE_CLAUSES:
            raise ValueError(f"a where may hold at most {MAX_WHERE_CLAUSES} clauses")
        if not isinstance(node, dict):
            continue
        for key in ("or", "and"):
            group = node.get(key)
            if isinstance(group, list):
                if depth >= MAX_WHERE_DEPTH:
                    raise ValueError(f"where groups nest at most {MAX_WHERE_DEPTH} deep")
                pending.extend((child, depth + 1) for child in group)


class QueryWhere(_Model):
    """One filter clause ``{field, op, value}``, or a group ``{"or": [...]}`` / ``{"and": [...]}``.

    Groups nest. A list of wheres at the top level is ANDed. Filters are data: they are
    translated by each handler into its own query language and never evaluated as code.
    """

    field: str | None = None
    op: str = "="
    value: Any = None
    or_: list[QueryWhere] | None = Field(default=None, alias="or")
    and_: list[QueryWhere] | None = Field(default=None, alias="and")

    @model_validator(mode="before")
    @classmethod
    def _check_size(cls, data: Any) -> Any:
        """Bound a clause tree from outside before it is validated (and recursed into)."""
        _check_where_tree(data)
        return data

    @field_validator("op")
    @classmethod
    def _check_op(cls, v: str) -> str:
        return normalize_operator(v)

    @model_validator(mode="after")
    def _check_shape(self) -> QueryWhere:
        forms = [self.field is not None, self.or_ is not None, self.and_ is not None]
        if sum(forms) != 1:
            raise ValueError(
                "a where is either {field, op, value} or a group {'or': [...]} / {'and': [...]}"
            )
        if self.field is not None:
            if not self.field.strip():
                raise ValueError("where field must not be empty")
            if self.op in ("in", "not in") and not isinstance(self.value, list | tuple):
                raise ValueError(f"operator {self.op!r} needs a list value")
            if self.op == "between" and (
                not isinstance(self.value, list | tuple) or len(self.value) != 2
            ):
                raise ValueError("operator 'between' needs a [low, high] value")
        group = self.or_ if self.or_ is not None else self.and_
        if group is not None and not group:
            raise ValueError("a where group must not be empty")
        return self

    @property
    def is_group(self) -> bool:
        return self.field is None

    def to_json(self) -> dict[str, Any]:
        if self.or_ is not None:
            return {"or": [w.to_json() for w in self.or_]}
        if self.and_ is not None:
            return {"and": [w.to_json() for w in self.and_]}
        return {"field": self.field, "op": self.op, "value": self.value}


class QueryOrder(_Model):
    field: str
    order: Literal["asc", "desc"] = "desc"

    @field_validator("order", mode="before")
    @classmethod
    def _lower(cls, v: Any) -> Any:
        return v.lower() if isinstance(v, str) else v


class RerankOptions(_Model):
    """How to rerank one search's items. ``top_k`` 0 keeps every item."""

    type: RerankerType = "score"
    model: str | None = None
    agent: str | None = None
    mcp: str | None = None
    top_k: Count = Field(default=0, ge=0)


class CitationConfig(_Model):
    format: str = "#ref:{id}"
    auto_inject_prompt: bool = True
    custom_prompt: str | None = None
    remove_unknown: bool = False

    @field_validator("format")
    @classmethod
    def _has_placeholder(cls, v: str) -> str:
        if v.count("{id}") != 1:
            raise ValueError(
                "citation format must contain '{id}' once, e.g. '#ref:{id}' or '[{id}]'")
        literal = v.replace("{id}", "")
        if any(c in '"\\' or (c != " " and unicodedata.category(c)[0] in "CZ")
               for c in literal):  # C: controls, format chars; Z: odd spaces, line breaks
            raise ValueError("citation format cannot contain quotes, backslashes, control "
                             "characters or line breaks")
        if not any(is_marker_char(c) for c in literal):
            # with letters, digits and spaces only, ordinary words would read as citations
            raise ValueError("citation format needs a symbol around '{id}', "
                             "e.g. '#ref:{id}' or '[{id}]'")
        return v


def is_marker_char(c: str) -> bool:
    """Can ``c`` tell a citation marker from ordinary text? Not a space and not a
    character of a citation id (ASCII letters, digits, ``_``, ``-``)."""
    return not (c.isspace() or (c.isascii() and (c.isalnum() or c in "_-")))


class SearchOptions(BaseModel):
    """The base of every handler's options model (``request.options``), as pydantic-ai's
    ``ModelSettings`` is the base of each model's ``…ModelSettings``: the common request
    (:class:`Request`) carries what every search has, and each handler declares the
    parameters only it reads in its subclass (the kb's ``collections``, the db's
    ``models``, the web's ``sites``).

    Keys another handler reads are ignored (one options object can go to several types);
    a bad value of a declared key is an :class:`~agent_search.errors.InputError` naming
    it. The searcher parses a request's options once, before the search costs anything,
    and fills the handler's defaults once (:meth:`filled`); the handler reads the result
    with :meth:`of`."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    @classmethod
    def of(cls, request: Request) -> Self:
        """``request``'s options as this model: the ones the searcher parsed and filled,
        else (a handler called directly) parsed now, defaults left unset."""
        parsed = request._parsed_options
        if isinstance(parsed, cls):
            return parsed
        from agent_search.registry import parse_options

        return parse_options(cls, request.options)

    def filled(self, config: SearchConfig) -> Self:
        """These options with what the request left unset taken from ``config`` (the
        search's own: an assistant's overrides included). Called once per search, by the
        searcher; the base fills nothing."""
        return self


LEGACY_OPTIONS: tuple[str, ...] = (
    "collections", "graph", "wheres", "models", "orders", "select", "sites", "time_range")
"""Request fields that moved into the options of the handler that reads them (kb:
``collections``, ``graph``, ``wheres``; db: ``models``, ``wheres``, ``orders``, ``select``;
web: ``sites``, ``time_range``). Given at the top level they are still accepted, moved
into ``options`` with a :class:`DeprecationWarning`; ``threshold`` is ``min_score``."""


def _as_json(value: Any) -> Any:
    """A where or order model as the plain data the options hold."""
    if isinstance(value, list | tuple):
        return [_as_json(v) for v in value]
    if isinstance(value, QueryWhere):
        return value.to_json()
    if isinstance(value, BaseModel):
        return value.model_dump()
    return value


def legacy_note(name: str) -> str:
    """What a deprecated top-level field ``name`` of a request is now, in one line: the
    text of its :class:`DeprecationWarning`, and of the HTTP service's ``Warning``
    header."""
    if name == "threshold":
        return "Request field 'threshold' is deprecated: it is min_score, the one " \
            "relevance floor"
    return f"Request field {name!r} is deprecated: pass it as options.{name}"


def legacy_fields(data: Mapping[str, Any]) -> list[str]:
    """The deprecated top-level fields ``data`` (one request, as sent) gives, in the
    order their warnings are issued."""
    return [name for name in (*LEGACY_OPTIONS, "threshold") if name in data]


def move_legacy_fields(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with its deprecated top-level fields moved where they live now, each
    named in a :class:`DeprecationWarning`. An empty or false value was "not given" and
    is dropped; one given both ways with two values is refused (which one was meant?)."""
    data = dict(data)
    raw_options = data.get("options")
    options = dict(raw_options) if isinstance(raw_options, Mapping) else {}
    for name in LEGACY_OPTIONS:
        if name in data:
            _move_option(name, data.pop(name), options)
    if "threshold" in data:
        _move_threshold(data)
    if raw_options is None or isinstance(raw_options, Mapping):
        data["options"] = options  # else the bad value stays, for the field's error
    return data


def _move_option(name: str, given: Any, options: dict[str, Any]) -> None:
    """The legacy field ``name``'s value into ``options`` (warned; an empty value
    dropped; a different value there already refused)."""
    value = _LEGACY_CHECKS.get(name, _as_json)(given)
    warnings.warn(legacy_note(name), DeprecationWarning, stacklevel=5)
    if value is None or value is False or value == [] or value == ():
        return
    if name in options and options[name] != value:
        raise ValueError(f"{name} is given twice, as a field and as options.{name}, "
                         "with different values")
    options[name] = value


def _move_threshold(data: dict[str, Any]) -> None:
    """``threshold`` into ``min_score`` (warned; checked as the floor it is)."""
    threshold = data.pop("threshold")
    warnings.warn(legacy_note("threshold"), DeprecationWarning, stacklevel=5)
    if threshold is None:
        return
    if isinstance(threshold, bool):
        raise ValueError("threshold: expected a number, not true/false")
    if isinstance(threshold, int | float) and not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold {threshold} is outside 0..1")
    if data.get("min_score") not in (None, threshold):
        raise ValueError("threshold and min_score are the same floor; give one")
    data["min_score"] = threshold


def _checked(model: type[QueryWhere] | type[QueryOrder]) -> Any:
    """A check of a legacy ``wheres``/``orders`` list: as the field did, a bad clause is
    an invalid request (not a search that fails later)."""
    def check(value: Any) -> Any:
        if not isinstance(value, list | tuple):
            return value  # the options model names what is wrong
        return _as_json([model.model_validate(v) if isinstance(v, dict) else v
                         for v in value])
    return check


_LEGACY_CHECKS: dict[str, Any] = {"wheres": _checked(QueryWhere),
                                  "orders": _checked(QueryOrder)}


class Request(_Model):
    """One search: what every search type has. A handler's own parameters (the kb's
    ``collections``, the db's ``models``, the web's ``sites``...) are ``options``, read
    through its :class:`SearchOptions` model."""

    type: str
    query: str
    limit: Count | None = Field(default=None,
                                description="Max items; config default when unset")
    source: Source = "user"
    min_score: Number | None = Field(
        default=None, description="Relevance floor 0..1; config <type>.min_score when unset")
    rerank: RerankOptions | None = None
    timeout: Number | None = Field(
        default=None, gt=0, description="Seconds; config default when unset"
    )
    options: dict[str, Any] = Field(
        default_factory=dict, description=(
            "The handler's own parameters (its options model), e.g. kb collections and "
            "mode, db models and wheres, web sites and fetch_pages"))

    _parsed_options: SearchOptions | None = PrivateAttr(default=None)
    """The options as the handler's model, parsed and filled once by the searcher."""

    @model_validator(mode="before")
    @classmethod
    def _legacy_fields(cls, data: Any) -> Any:
        """Fields that moved into ``options`` (see :data:`LEGACY_OPTIONS`), still
        accepted for a release."""
        if isinstance(data, dict) and not _LEGACY_KEYS.isdisjoint(data):
            return move_legacy_fields(data)
        return data

    @field_validator("type")
    @classmethod
    def _check_type(cls, v: str) -> str:
        v = v.strip().lower()
        if not v:
            raise ValueError("type must not be empty")
        return v

    @field_validator("query")
    @classmethod
    def _check_query(cls, v: str) -> str:
        v = v.strip()
        if not v:
            raise ValueError("query must not be empty or whitespace")
        problem = surrogate_message(v, "query")
        if problem:
            raise ValueError(problem)
        if "\x00" in v:  # no store, database or model takes it as text
            raise ValueError("query contains a NUL character (U+0000)")
        if len(v) > MAX_QUERY_CHARS:
            raise ValueError(
                f"query is {len(v)} characters; the limit is {MAX_QUERY_CHARS} "
                "(ingest long text into a knowledge base instead)"
            )
        return v

    @field_validator("limit")
    @classmethod
    def _check_limit(cls, v: int | None) -> int | None:
        if v is not None and not 1 <= v <= ABSOLUTE_MAX_LIMIT:
            raise ValueError(f"limit {v} is outside 1..{ABSOLUTE_MAX_LIMIT}")
        return v

    @field_validator("min_score")
    @classmethod
    def _check_unit_interval(cls, v: float | None, info: ValidationInfo) -> float | None:
        if v is not None and not 0.0 <= v <= 1.0:
            raise ValueError(f"{info.field_name} {v} is outside 0..1")
        return v

    def model_copy(self, *, update: Mapping[str, Any] | None = None,
                   deep: bool = False) -> Self:
        """A copy, with ``update``'s deprecated fields moved into ``options`` as validation
        moves them: pydantic's update skips validation, so ``collections=[...]`` would be
        dropped silently and the copy would search every collection."""
        if update and ("options" in update or not _LEGACY_KEYS.isdisjoint(update)):
            update = self._moved_update(update)
        copy = super().model_copy(update=update, deep=deep)
        if update and "options" in update:
            copy._parsed_options = None  # parsed from the options this copy replaced
        return copy

    def _moved_update(self, update: Mapping[str, Any]) -> dict[str, Any]:
        update = dict(update)
        legacy = {k: update.pop(k) for k in list(update) if k in _LEGACY_KEYS}
        moved = move_legacy_fields(legacy)
        options = {**self.options, **dict(update.get("options") or {})}
        for name in LEGACY_OPTIONS:
            if name in legacy:
                options.pop(name, None)  # an empty value clears it
        options.update(moved.pop("options", {}))
        return {**update, **moved, "options": options}

    def _legacy(self, name: str, empty: Any) -> Any:
        warnings.warn(f"Request.{name} is deprecated: read it from the handler's options "
                      f"(options.{name})", DeprecationWarning, stacklevel=3)
        parsed = self._parsed_options
        value = getattr(parsed, name, None) if parsed is not None else None
        if value is None:
            value = self.options.get(name)
        return empty if value is None else value

    @property
    def collections(self) -> list[str]:
        """Deprecated: ``options.collections`` (the kb handler's)."""
        return list(self._legacy("collections", []))

    @property
    def threshold(self) -> float | None:
        """Deprecated: ``min_score``, the one relevance floor."""
        warnings.warn("Request.threshold is deprecated: it is min_score",
                      DeprecationWarning, stacklevel=2)
        return self.min_score

    @property
    def graph(self) -> bool:
        """Deprecated: ``options.graph`` (the kb handler's)."""
        return bool(self._legacy("graph", False))

    @property
    def models(self) -> list[str]:
        """Deprecated: ``options.models`` (the db handler's)."""
        return list(self._legacy("models", []))

    @property
    def wheres(self) -> list[QueryWhere]:
        """Deprecated: ``options.wheres`` (the kb and db handlers')."""
        return [w if isinstance(w, QueryWhere) else QueryWhere.model_validate(w)
                for w in self._legacy("wheres", [])]

    @property
    def orders(self) -> list[QueryOrder]:
        """Deprecated: ``options.orders`` (the db handler's)."""
        return [o if isinstance(o, QueryOrder) else QueryOrder.model_validate(o)
                for o in self._legacy("orders", [])]

    @property
    def select(self) -> list[str]:
        """Deprecated: ``options.select`` (the db handler's)."""
        return list(self._legacy("select", []))

    @property
    def sites(self) -> list[str]:
        """Deprecated: ``options.sites`` (the web handler's)."""
        return list(self._legacy("sites", []))

    @property
    def time_range(self) -> TimeRange | None:
        """Deprecated: ``options.time_range`` (the web handler's)."""
        value: TimeRange | None = self._legacy("time_range", None)
        return value


_LEGACY_KEYS = frozenset({*LEGACY_OPTIONS, "threshold"})


class ResultItem(BaseModel):
    """One hit. ``score`` is the handler's base score in 0..1; ``weight`` the source weight;
    ``rerank_score`` set when a reranker scored the item. See :pyattr:`final_score`."""

    model_config = ConfigDict(extra="forbid")

    citation_id: str | None = None
    type: str = ""
    title: str | None = None
    content: str = ""
    url: str | None = None
    score: float = 0.0
    source: Source | None = None
    weight: float | None = None
    rerank_score: float | None = None
    # kb
    document_id: str | None = None
    collection: str | None = None
    # db
    model: str | None = None
    record_id: Any = None
    data: dict[str, Any] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def final_score(self) -> float:
        """base score × source weight (× rerank score when a reranker ran)."""
        s = self.score * (1.0 if self.weight is None else self.weight)
        if self.rerank_score is not None:
            s *= self.rerank_score
        return s


class GraphNode(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    type: str
    name: str
    description: str | None = None
    relation: str | None = None
    score: float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class Result(BaseModel):
    """The outcome of one search. ``error`` is None on success; a failed search is a Result
    with ``error`` set, never an exception."""

    model_config = ConfigDict(extra="forbid")

    type: str
    query: str
    source: Source | None = None
    search_id: str | None = None
    items: list[ResultItem] = Field(default_factory=list)
    total: int = 0
    duration_ms: float = 0.0
    error: str | None = None
    rerank_error: str | None = None
    warnings: list[str] = Field(default_factory=list)
    dropped_below_floor: int = Field(
        default=0, description="Items the handler found that scored under the relevance floor")
    graph_nodes: list[GraphNode] | None = None
    dsl: dict[str, Any] | None = None
    cache: Literal["hit", "miss"] | None = Field(default=None, description=(
        "With the result cache on: whether this Result came from it (None: cache off)"))
    provider: str | None = Field(default=None, description=(
        "The web provider that answered (with a list of providers, the first that did)"))
    fallback: list[str] | None = Field(default=None, description=(
        "Providers tried before the one that answered, each with why it did not"))

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_json(self) -> dict[str, Any]:
        """The JSON document the CLI prints with ``--json``."""
        return self.model_dump(mode="json")
