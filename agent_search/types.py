"""The data that flows through the search module: requests, results and their parts.

All models are pydantic v2. Field names are the JSON names of the wire contract
(see README "Result JSON"), so ``model_dump(mode="json")`` is what ``--json`` prints.
"""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from agent_search._text import surrogate_message

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


class Request(_Model):
    """One search. Type-specific fields are ignored by handlers of other types."""

    type: str
    query: str
    limit: Count | None = Field(default=None,
                                description="Max items; config default when unset")
    source: Source = "user"

    # web
    sites: list[str] = Field(default_factory=list)
    time_range: TimeRange | None = None
    # kb
    collections: list[str] = Field(default_factory=list)
    threshold: Number | None = None
    graph: bool = False
    # all
    min_score: Number | None = Field(
        default=None, description="Relevance floor 0..1; config <type>.min_score when unset")
    # db
    models: list[str] = Field(default_factory=list)
    wheres: list[QueryWhere] = Field(default_factory=list)
    orders: list[QueryOrder] = Field(default_factory=list)
    select: list[str] = Field(default_factory=list)
    # all
    rerank: RerankOptions | None = None
    timeout: Number | None = Field(
        default=None, gt=0, description="Seconds; config default when unset"
    )
    options: dict[str, Any] = Field(
        default_factory=dict, description="Handler-specific extras, e.g. kb mode, web fetch_pages"
    )

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

    @field_validator("threshold", "min_score")
    @classmethod
    def _check_unit_interval(cls, v: float | None, info: ValidationInfo) -> float | None:
        if v is not None and not 0.0 <= v <= 1.0:
            raise ValueError(f"{info.field_name} {v} is outside 0..1")
        return v


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
