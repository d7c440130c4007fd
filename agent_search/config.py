"""Configuration: the typed settings, and how one layer merges onto another.

This module defines schemas and merges mappings; it reads no project file and knows no
application. The layers, later wins (see docs/configuration.md):

1. built-in defaults (the field defaults below);
2. ``config/search.yao`` (JSONC) and ``uses`` from ``config/agent.yml``;
3. ``assistants/<id>/package.yao`` — its ``search`` section, plus ``kb.collections`` and
   ``db.models`` of the assistant;
4. hook options (``ctx.search.*(query, **options)``);
5. request options (fields of the :class:`~agent_search.types.Request`).

Layers 2 and 3 are files, found and read by :mod:`agent_search.loader` above the core.
Merging (:meth:`SearchConfig.merged`) is a deep merge of mappings: nested mappings merge
key by key; lists and scalars replace. In an assistant's ``search`` section
``"web": true/false`` switches a type on or off, and an object configures it (and
switches it on).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    model_validator,
)

from agent_search._config_files import (
    BUILTIN_TYPES,
    MAX_CONFIG_BYTES,
    MAX_CONFIG_DEPTH,
    check_nesting,
    config_error,
    parse_jsonc,
    read_config_text,
    read_jsonc,
    read_yaml,
)
from agent_search._locations import default_home
from agent_search.errors import ConfigError
from agent_search.types import CitationConfig, Count, Number

__all__ = ["BUILTIN_TYPES", "MAX_CONFIG_BYTES", "MAX_CONFIG_DEPTH", "check_nesting",
           "config_error", "parse_jsonc", "read_config_text", "read_jsonc", "read_yaml"]

DEFAULT_MIN_SCORE: dict[str, float] = {"web": 0.2, "kb": 0.02, "db": 0.3}
"""Default relevance floors per search type, on the scale every handler scores on
(0..1, ~0.5 = probably relevant; see docs/scores.md)."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class _OpenSection(BaseModel):
    """A section handler packages extend: unknown keys are kept for them to validate."""

    model_config = ConfigDict(extra="allow", validate_assignment=True)


def _floor(default: float) -> Any:
    return Field(default=default, ge=0, le=1, description=(
        "Relevance floor: items scoring under it are dropped before merging (0 = off)"))


class TypeConfig(_OpenSection):
    """The part of a search type's section the core reads: whether auto search runs it,
    its relevance floor and its default number of results. Each handler's settings model
    subclasses its type's section and declares the rest, so every key is declared once;
    the handler validates the whole section with :meth:`settings`. Sections of custom
    types (``types.<name>``) are this class itself."""

    enabled: bool | None = None
    min_score: Number = _floor(0.0)
    max_results: Count | None = Field(default=None, ge=1, le=10_000, description=(
        "results of a search that gives no limit (default: options.default_limit)"))

    section: ClassVar[str] = ""
    """In a handler's settings model (a subclass with ``extra="forbid"``): the section it
    validates, which names the keys in its errors."""

    request_defaults: ClassVar[tuple[str, ...]] = ()
    """Options this section gives a default to, for a handler whose ``options_model`` is
    not a :class:`~agent_search.types.SearchOptions` (which fills its own): the searcher
    fills each one a request's ``options`` leave empty, so every handler gets the same
    complete request on every path."""

    _validated: dict[type[Any], Any] = PrivateAttr(default_factory=dict)

    def settings(self, model: type[_S]) -> _S:
        """This section validated by a handler's settings ``model`` (a subclass that
        forbids unknown keys), once per section and model: an assistant's merged config
        is validated on its first search, not on every one. A bad value is a
        :class:`ConfigError` naming ``<model.section>.<key>``."""
        cached = self._validated.get(model)
        if cached is None:
            try:
                cached = model.model_validate(self.model_dump())
            except ValidationError as exc:
                raise config_error(exc, section=model.section, model=model) from exc
            self._validated[model] = cached
        return cached

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if not name.startswith("_"):
            self._validated.clear()  # a changed section is validated again


_S = TypeVar("_S", bound=TypeConfig)


class WebConfig(TypeConfig):
    min_score: Number = _floor(DEFAULT_MIN_SCORE["web"])
    max_results: Count | None = Field(default=10, ge=1, le=100)


class KBConfig(TypeConfig):
    request_defaults = ("collections", "graph")

    min_score: Number = _floor(DEFAULT_MIN_SCORE["kb"])
    collections: list[str] = Field(default_factory=list)
    threshold: Number | None = Field(default=None, ge=0, le=1, description=(
        "Deprecated: min_score, the one relevance floor (the higher of the two is kept)"))
    graph: bool = False
    url: str | None = Field(default=None, description="Qdrant server URL; embedded when unset")

    @model_validator(mode="after")
    def _threshold_is_min_score(self) -> KBConfig:
        """``kb.threshold`` was a second floor, cut silently in the handler before
        ``min_score`` was cut and counted; both floors held, so the higher one is now
        ``min_score``, the one cut (never lower: no search finds more than it did)."""
        threshold = self.__dict__.get("threshold")
        if threshold is not None:
            warnings.warn("kb.threshold is deprecated: it is kb.min_score, the one "
                          "relevance floor", DeprecationWarning, stacklevel=2)
            self.__dict__["min_score"] = max(float(self.min_score), float(threshold))
            self.__dict__["threshold"] = None
        return self


class DBConfig(TypeConfig):
    request_defaults = ("models",)

    min_score: Number = _floor(DEFAULT_MIN_SCORE["db"])
    max_results: Count | None = Field(default=20, ge=1, le=10_000)
    models: list[str] = Field(default_factory=list)
    url: str | None = None


class KeywordConfig(_Section):
    max_keywords: Count = Field(default=10, ge=1, le=100)
    language: str = Field(default="auto", min_length=1, max_length=32,
                          description="'auto', or a language code ('en', 'zh')")


class QueryConfig(_Section):
    strict: bool = False


class RerankConfig(_Section):
    top_n: Count = Field(default=10, ge=0)


class WeightsConfig(_Section):
    user: Number = Field(default=1.0, ge=0)
    hook: Number = Field(default=0.8, ge=0)
    auto: Number = Field(default=0.6, ge=0)

    def for_source(self, source: str | None) -> float:
        return float(getattr(self, source)) if source in ("user", "hook", "auto") else 1.0


class OptionsConfig(_Section):
    skip_threshold: Count = Field(default=5, ge=0)
    default_limit: Count = Field(default=10, ge=1)
    max_limit: Count = Field(default=100, ge=1, le=10_000)
    timeout: Number = Field(default=10.0, gt=0, description="Seconds one search may take")
    deadline: Number = Field(
        default=30.0, gt=0, description="Seconds one multi-search call may take"
    )


class CacheConfig(_Section):
    """The result cache (see :mod:`agent_search.cache`): off unless ``enabled``."""

    enabled: bool = Field(default=False, description="Answer identical searches from a cache")
    ttl: Number = Field(default=300.0, gt=0, le=86_400, description="Seconds an entry is used")
    max_entries: Count = Field(default=1000, ge=1, le=1_000_000)
    types: dict[str, bool] = Field(default_factory=dict, description=(
        "per search type: false keeps that type out of the cache (default: cached)"))

    def caches(self, search_type: str) -> bool:
        """Whether searches of ``search_type`` go through the cache."""
        return self.enabled and self.types.get(search_type, True)


class ResearchConfig(_Section):
    """Research mode's budgets and planner (see :mod:`agent_search.research`)."""

    max_rounds: Count = Field(default=3, ge=1, le=10, description="Rounds of searches")
    max_searches: Count = Field(default=24, ge=1, le=500, description="Searches in all")
    max_llm_calls: Count = Field(default=4, ge=0, le=100, description="Planner LLM calls")
    deadline: Number = Field(default=60.0, gt=0, le=3600, description="Seconds in all")
    max_parts: Count = Field(default=6, ge=1, le=20, description="Parts of one question")
    types: list[str] = Field(default_factory=list, description=(
        "search types each part is searched on (default: those enabled for auto "
        "search, else every registered type)"))
    planner: Literal["builtin", "llm"] = "builtin"
    llm_url: str | None = Field(default=None, description="OpenAI-compatible base URL")
    llm_model: str | None = None
    llm_api_key_env: str | None = None
    llm_timeout: Number = Field(default=15.0, gt=0, le=600, description="Seconds per call")


class UsesConfig(_Section):
    keyword: str = "builtin"
    query: str = "builtin"
    rerank: str = "builtin"


def floor_of(section: TypeConfig | None) -> float:
    """The relevance floor a type's section sets (0 for a type without one)."""
    return float(section.min_score) if section is not None else 0.0


class SearchConfig(_Section):
    """Everything the searcher and its handlers are configured by."""

    home: Path = Field(default_factory=lambda: default_home())
    web: WebConfig = Field(default_factory=WebConfig)
    kb: KBConfig = Field(default_factory=KBConfig)
    db: DBConfig = Field(default_factory=DBConfig)
    keyword: KeywordConfig = Field(default_factory=KeywordConfig)
    query: QueryConfig = Field(default_factory=QueryConfig)
    rerank: RerankConfig = Field(default_factory=RerankConfig)
    citation: CitationConfig = Field(default_factory=CitationConfig)
    weights: WeightsConfig = Field(default_factory=WeightsConfig)
    options: OptionsConfig = Field(default_factory=OptionsConfig)
    uses: UsesConfig = Field(default_factory=UsesConfig)
    cache: CacheConfig = Field(default_factory=CacheConfig)
    research: ResearchConfig = Field(default_factory=ResearchConfig)
    types: dict[str, TypeConfig] = Field(default_factory=dict, description=(
        "sections of custom search types (handlers you register), by type name"))

    # top-level section, and each key path a layer wrote ("web.provider") → (the file of
    # the last layer that set it, where the section sits in that file), so an error found
    # later (a handler validating its own section) can still name the file, the key and
    # the line: the file that wrote the key, not the last one that touched its section
    _origins: dict[str, tuple[str, str]] = PrivateAttr(default_factory=dict)

    def _origin_of(self, key: str | None) -> tuple[str | None, str]:
        """The layer that wrote ``key`` or, failing that, its nearest enclosing key."""
        parts = (key or "").split(".")
        for n in range(len(parts), 0, -1):
            found = self._origins.get(".".join(parts[:n]))
            if found is not None:
                return found
        return None, ""

    def origin(self, key: str | None) -> str | None:
        """The file ``key`` (``"db.url"``) last came from (else its section's)."""
        return self._origin_of(key)[0] if key else None

    def locate(self, error: ConfigError) -> ConfigError:
        """``error`` (raised by a section's own validation) naming the file its key came
        from, the key as written there, and the line."""
        file, prefix = self._origin_of(error.key)
        return error.located(file, prefix=prefix)

    def section(self, search_type: str) -> TypeConfig | None:
        """The section of ``search_type``: ``web``/``kb``/``db`` or ``types.<name>``."""
        if search_type in BUILTIN_TYPES:
            section: TypeConfig = getattr(self, search_type)
            return section
        return self.types.get(search_type)

    def min_score_for(self, search_type: str) -> float:
        """The relevance floor of ``search_type`` (0 for types without a section)."""
        return floor_of(self.section(search_type))

    def limit_for(self, search_type: str) -> int:
        """The number of results of a ``search_type`` search that gives no limit: the
        section's ``max_results``, else ``options.default_limit``, never over
        ``options.max_limit``. The searcher fills every request's limit from here, so the
        same request gets the same limit on every path."""
        return self.limit_in(self.section(search_type))

    def limit_in(self, section: TypeConfig | None) -> int:
        """:meth:`limit_for` of the type whose :meth:`section` is ``section`` (for a
        caller that has looked the section up already)."""
        wanted = section.max_results if section is not None else None
        return min(wanted or self.options.default_limit, self.options.max_limit)

    def enabled_types(self) -> list[str]:
        """Search types switched on for auto search (``enabled`` true), built-in first."""
        return [t for t in (*BUILTIN_TYPES, *self.types)
                if (section := self.section(t)) is not None and section.enabled]

    def merged(self, overrides: Mapping[str, Any], *, file: str | None = None,
               prefix: str = "") -> SearchConfig:
        """A new config with ``overrides`` deep-merged on top (a later layer); ``file``
        names the layer in errors, ``prefix`` is where the overrides sit in it
        (``search.`` in a package.yao)."""
        base = self.model_dump(mode="python")
        merged = _validate(deep_merge(base, normalize_toggles(dict(overrides), objects=False)),
                           file, prefix)
        merged._origins = dict(self._origins)
        if file:
            merged._origins.update(dict.fromkeys(_key_paths(overrides), (file, prefix)))
        return merged


def _key_paths(data: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Every key path of ``data``: ``{"web": {"provider": x}}`` → web, web.provider."""
    out: list[str] = []
    for key, value in data.items():
        path = f"{prefix}{key}"
        out.append(path)
        if isinstance(value, Mapping):
            out += _key_paths(value, path + ".")
    return out


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Mappings merge key by key (recursively); anything else in ``override`` replaces."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def normalize_toggles(section: dict[str, Any], *, objects: bool = True) -> dict[str, Any]:
    """``"web": true`` → ``{"enabled": true}``; with ``objects``, as in an assistant's
    ``search`` section, ``"web": {...}`` also means enabled unless it says otherwise. The
    same for the sections of custom types under ``types``."""
    for t in BUILTIN_TYPES:
        if t in section:
            section[t] = _toggle(section[t], objects)
    custom = section.get("types")
    if isinstance(custom, Mapping):
        section["types"] = {name: _toggle(value, objects) for name, value in custom.items()}
    return section


def _toggle(value: Any, objects: bool) -> Any:
    if isinstance(value, bool):
        return {"enabled": value}
    if objects and isinstance(value, Mapping) and "enabled" not in value:
        return {**value, "enabled": True}
    return value


def _validate(data: Mapping[str, Any], file: str | None, prefix: str = "") -> SearchConfig:
    try:
        return SearchConfig.model_validate(data)
    except ValidationError as exc:
        raise config_error(exc, file=file, model=SearchConfig, prefix=prefix) from exc
