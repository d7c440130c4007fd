"""Configuration: typed settings and the layers they are merged from.

Layers, later wins (see docs/configuration.md):

1. built-in defaults (the field defaults below);
2. ``config/search.yao`` (JSONC) and ``uses`` from ``config/agent.yml``;
3. ``assistants/<id>/package.yao`` — its ``search`` section, plus ``kb.collections`` and
   ``db.models`` of the assistant;
4. hook options (``ctx.search.*(query, **options)``);
5. request options (fields of the :class:`~agent_search.types.Request`).

Merging is a deep merge of mappings: nested mappings merge key by key; lists and scalars
replace. In an assistant's ``search`` section ``"web": true/false`` switches a type on or
off, and an object configures it (and switches it on).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import json5
import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from agent_search._config_keys import did_you_mean, known_keys
from agent_search._locations import default_home
from agent_search._text import check_tree
from agent_search.errors import ConfigError
from agent_search.trace import message_line
from agent_search.types import CitationConfig

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
    min_score: float = _floor(0.0)
    max_results: int | None = Field(default=None, ge=1, le=10_000, description=(
        "results of a search that gives no limit (default: options.default_limit)"))

    section: ClassVar[str] = ""
    """In a handler's settings model (a subclass with ``extra="forbid"``): the section it
    validates, which names the keys in its errors."""

    request_defaults: ClassVar[tuple[str, ...]] = ()
    """Request fields this section gives a default to: the searcher fills each one a
    request leaves empty, so every handler (the built-in one or yours) gets the same
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
    min_score: float = _floor(DEFAULT_MIN_SCORE["web"])
    max_results: int | None = Field(default=10, ge=1, le=100)


class KBConfig(TypeConfig):
    request_defaults = ("collections", "threshold", "graph")

    min_score: float = _floor(DEFAULT_MIN_SCORE["kb"])
    collections: list[str] = Field(default_factory=list)
    threshold: float | None = Field(default=None, ge=0, le=1)
    graph: bool = False
    url: str | None = Field(default=None, description="Qdrant server URL; embedded when unset")


class DBConfig(TypeConfig):
    request_defaults = ("models",)

    min_score: float = _floor(DEFAULT_MIN_SCORE["db"])
    max_results: int | None = Field(default=20, ge=1, le=10_000)
    models: list[str] = Field(default_factory=list)
    url: str | None = None


class KeywordConfig(_Section):
    max_keywords: int = Field(default=10, ge=1, le=100)
    language: str = "auto"


class QueryConfig(_Section):
    strict: bool = False


class RerankConfig(_Section):
    top_n: int = Field(default=10, ge=0)


class WeightsConfig(_Section):
    user: float = Field(default=1.0, ge=0)
    hook: float = Field(default=0.8, ge=0)
    auto: float = Field(default=0.6, ge=0)

    def for_source(self, source: str | None) -> float:
        return float(getattr(self, source)) if source in ("user", "hook", "auto") else 1.0


class OptionsConfig(_Section):
    skip_threshold: int = Field(default=5, ge=0)
    default_limit: int = Field(default=10, ge=1)
    max_limit: int = Field(default=100, ge=1, le=10_000)
    timeout: float = Field(default=10.0, gt=0, description="Seconds one search may take")
    deadline: float = Field(
        default=30.0, gt=0, description="Seconds one multi-search call may take"
    )


class UsesConfig(_Section):
    keyword: str = "builtin"
    query: str = "builtin"
    rerank: str = "builtin"


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
    types: dict[str, TypeConfig] = Field(default_factory=dict, description=(
        "sections of custom search types (handlers you register), by type name"))

    # top-level section → (the file of the last layer that set it, where the section
    # sits in that file), so an error found later (a handler validating its own
    # section) can still name the file, the key and the line
    _origins: dict[str, tuple[str, str]] = PrivateAttr(default_factory=dict)

    def origin(self, key: str | None) -> str | None:
        """The file the section of ``key`` (``"db.url"`` → ``db``) last came from."""
        return self._origins.get(key.split(".", 1)[0], (None, ""))[0] if key else None

    def locate(self, error: ConfigError) -> ConfigError:
        """``error`` (raised by a section's own validation) naming the file its section
        came from, the key as written there, and the line."""
        file, prefix = self._origins.get((error.key or "").split(".", 1)[0], (None, ""))
        return error.located(file, prefix=prefix)

    def section(self, search_type: str) -> TypeConfig | None:
        """The section of ``search_type``: ``web``/``kb``/``db`` or ``types.<name>``."""
        if search_type in BUILTIN_TYPES:
            section: TypeConfig = getattr(self, search_type)
            return section
        return self.types.get(search_type)

    def min_score_for(self, search_type: str) -> float:
        """The relevance floor of ``search_type`` (0 for types without a section)."""
        section = self.section(search_type)
        return float(section.min_score) if section is not None else 0.0

    def limit_for(self, search_type: str) -> int:
        """The number of results of a ``search_type`` search that gives no limit: the
        section's ``max_results``, else ``options.default_limit``, never over
        ``options.max_limit``. The searcher fills every request's limit from here, so the
        same request gets the same limit on every path."""
        section = self.section(search_type)
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
        merged = _validate(deep_merge(base, _normalize_toggles(dict(overrides), objects=False)),
                           file, prefix)
        merged._origins = dict(self._origins)
        if file:
            merged._origins.update(dict.fromkeys(overrides, (file, prefix)))
        return merged


BUILTIN_TYPES: tuple[str, ...] = ("web", "kb", "db")
"""The search types with a section of their own; custom types live under ``types``."""


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Mappings merge key by key (recursively); anything else in ``override`` replaces."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _normalize_toggles(section: dict[str, Any], *, objects: bool = True) -> dict[str, Any]:
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


def config_error(exc: ValidationError, *, file: str | None = None,
                 section: str | None = None, model: type[BaseModel] | None = None,
                 prefix: str = "") -> ConfigError:
    """The one-line :class:`ConfigError` for settings that failed validation: the first
    error, its dotted key (under ``section``; ``prefix`` is where the settings sit in
    ``file``), "unknown key" for a key the settings do not have — with the closest key
    ``model`` has there, when one is close — without pydantic's "Value error, " prefix.
    The error finds the key's line in ``file`` itself. An unknown key is reported before
    any other error: a misspelt key is often why a required one seems missing."""
    errors = exc.errors()
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = tuple(err["loc"])
    key = prefix + ".".join([*([section] if section else []), *(str(p) for p in loc)])
    if err["type"] == "extra_forbidden":
        hint = did_you_mean(str(loc[-1]), known_keys(model, loc[:-1])) if model else None
        return ConfigError("unknown key", file=file, key=key, hint=hint)
    return ConfigError(str(err["msg"]).removeprefix("Value error, "), file=file, key=key)


def _validate(data: Mapping[str, Any], file: str | None, prefix: str = "") -> SearchConfig:
    try:
        return SearchConfig.model_validate(data)
    except ValidationError as exc:
        raise config_error(exc, file=file, model=SearchConfig, prefix=prefix) from exc


MAX_CONFIG_BYTES = 1_000_000
"""A configuration file larger than this is refused before it is parsed."""

MAX_CONFIG_DEPTH = 64
"""Deepest nesting of objects/lists a configuration file may have."""


def read_config_text(path: Path) -> str:
    """The text of a configuration file, size-checked before it is read; errors name it."""
    try:
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise ConfigError(f"file too large ({size:,} bytes; limit {MAX_CONFIG_BYTES:,})",
                              file=str(path))
        return path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=str(path)) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text (byte {exc.start})", file=str(path)) from exc


def check_nesting(text: str, file: str) -> None:
    """Refuse text nested deeper than :data:`MAX_CONFIG_DEPTH` before a recursive parser
    sees it (deep nesting otherwise ends in a RecursionError traceback). Brackets inside
    strings count too, which only errs on the safe side for absurd files."""
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_CONFIG_DEPTH:
                    raise ConfigError(f"nested deeper than {MAX_CONFIG_DEPTH} levels", file=file)
        elif char in "]}" and depth:
            depth -= 1


_JSON5_LOCATION = re.compile(r"^<string>:(?P<line>\d+)\s*(?P<msg>.*)$")


def parse_jsonc(text: str, file: str) -> dict[str, Any]:
    """A JSONC object from ``text`` (JSON with comments and trailing commas); errors name
    ``file`` and, for a syntax error, the line."""
    check_nesting(text, file)
    try:
        data = json5.loads(text)
    except (ValueError, RecursionError) as exc:
        message = message_line(exc) or type(exc).__name__
        located = _JSON5_LOCATION.match(message)
        if located:
            message = f"at line {located['line']}: {located['msg']}"
        raise ConfigError(f"invalid JSONC {message}" if located else f"invalid JSONC: {message}",
                          file=file) from exc
    if not isinstance(data, dict):
        raise ConfigError("expected a JSON object at the top level", file=file)
    _check_text(data, file)
    return data


def read_jsonc(path: Path) -> dict[str, Any]:
    """Read a JSONC (JSON with comments and trailing commas) object; errors name the file."""
    return parse_jsonc(read_config_text(path), str(path))


def read_yaml(path: Path) -> dict[str, Any]:
    """Read a YAML mapping; errors name the file."""
    text = read_config_text(path)
    check_nesting(text, str(path))
    try:
        data = yaml.safe_load(text)
    except RecursionError as exc:
        raise ConfigError("invalid YAML: nested too deeply", file=str(path)) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise ConfigError(
            f"invalid YAML{where}: {getattr(exc, 'problem', exc)}", file=str(path)
        ) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError("expected a mapping at the top level", file=str(path))
    _check_text(data, str(path))
    return data


def _check_text(data: dict[str, Any], file: str) -> None:
    """Refuse a lone surrogate (a ``"\\ud800"`` escape) anywhere in a parsed file."""
    problem = check_tree(data, max_depth=MAX_CONFIG_DEPTH + 1, root="(top)")
    if problem:
        raise ConfigError(problem, file=file)


def load_config(
    config_dir: str | Path | None = None, *, assistant_dir: str | Path | None = None,
    assistants_dir: str | Path | None = None,
) -> SearchConfig:
    """Merge the layers found on disk. Missing files are skipped; every file found is
    validated whole by its schema (unknown keys refused), so a typo is the same
    :class:`ConfigError` — file, key, line, did-you-mean — whichever command reads it.
    The ``uses`` values must name something that exists (see :mod:`agent_search._uses`):
    assistant ids are looked for beside ``assistant_dir``, else in ``assistants_dir``,
    else in the assistants folder beside ``config_dir``.
    """
    from agent_search._uses import UsesTargets, check_uses

    config = SearchConfig()
    targets = UsesTargets()
    cdir = Path(config_dir) if config_dir is not None else None
    if cdir is not None:
        if not cdir.is_dir():
            raise ConfigError("configuration folder not found", file=str(cdir))
        search_file = cdir / "search.yao"
        if search_file.is_file():
            config = config.merged(read_jsonc(search_file), file=str(search_file))
        agent_file = cdir / "agent.yml"
        if agent_file.is_file():
            targets, uses = _agent_layer(cdir)
            if uses:
                config = config.merged({"uses": uses}, file=str(agent_file))
    adir = Path(assistant_dir) if assistant_dir is not None else None
    if adir is not None:
        package = str(adir / "package.yao")
        search, uses = _assistant_layer(adir)
        config = config.merged(search, file=package, prefix="search.")
        if uses:
            config = config.merged({"uses": uses}, file=package)
    root = (adir.resolve().parent if adir is not None else
            Path(assistants_dir) if assistants_dir is not None else _assistants_root(cdir))
    check_uses(config, targets.with_assistants(root))
    return config


def _agent_layer(config_dir: Path) -> tuple[Any, dict[str, Any]]:
    """``agent.yml`` validated whole (its own schema, and the ``server`` section's when
    it has one): what ``uses`` values may name, and the ``uses`` layer."""
    from agent_search._uses import UsesTargets
    from agent_search.agent.settings import AgentSettings

    settings = AgentSettings.load(config_dir)
    if settings.server:  # imported only then: the server package brings in FastAPI
        from agent_search.server.settings import ServerSettings

        ServerSettings.load(config_dir)
    return UsesTargets(mcp_servers=tuple(settings.mcp.servers),
                       rerankers=tuple(settings.rerankers)), dict(settings.uses)


def _assistants_root(config_dir: Path | None) -> Path | None:
    """The assistants folder of the configuration (``$AGENT_SEARCH_ASSISTANTS``, else
    beside ``config_dir``)."""
    if config_dir is not None:
        from agent_search._locations import find_assistants_dir

        return find_assistants_dir(config_dir)
    return None


def _assistant_layer(assistant_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """One assistant's ``package.yao``, validated whole: its search layer and its
    ``uses``."""
    from agent_search.agent.package import load_package

    package = load_package(assistant_dir)
    search: Any = package.search or {}
    if isinstance(search, bool):
        search = {t: search for t in BUILTIN_TYPES}
    search = _normalize_toggles(dict(search))
    # the assistant's own collections / models are the defaults for its kb / db search
    for section, key in (("kb", "collections"), ("db", "models")):
        refs = getattr(package, section)
        if key in refs.model_fields_set and key not in (search.get(section) or {}):
            search.setdefault(section, {})
            if isinstance(search[section], dict):
                search[section] = {**search[section], key: getattr(refs, key)}
    return search, package.uses.model_dump(exclude_none=True)


def assistant_overrides(assistant_dir: Path) -> dict[str, Any]:
    """The search-config layer of one assistant's ``package.yao``."""
    return _assistant_layer(assistant_dir)[0]
