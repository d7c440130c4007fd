"""Configuration from disk: the layers of a project's files merged into one
:class:`~agent_search.config.SearchConfig`, and a searcher built from them.

The core defines the schemas and how one layer merges onto another
(:meth:`SearchConfig.merged <agent_search.config.SearchConfig.merged>`); it reads no
project file and knows no application. This module sits above it: it knows where the
files are and whose schema validates each one — ``config/search.yao``; ``config/agent.yml``
(the agent's settings, and the server's when it has a ``server`` section); an assistant's
``package.yao`` — so one typo is the same error, with file, key and line, whichever
command reads the file. It also brings in the builtin handlers for
:meth:`Searcher.from_config <agent_search.searcher.Searcher.from_config>`: the package's
face (``agent_search/__init__.py``) hands :func:`searcher_from_config` to the searcher, so
the searcher's module imports neither this module nor what it reads.

The agent, the server and the handlers are imported only when a file needs them (the
server package brings in FastAPI), so loading a plain ``search.yao`` stays light.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from agent_search._config_files import BUILTIN_TYPES, read_jsonc
from agent_search._locations import find_assistants_dir
from agent_search._uses import UsesTargets, check_uses
from agent_search.config import SearchConfig, normalize_toggles
from agent_search.errors import ConfigError

if TYPE_CHECKING:
    from agent_search.query.dsl import DSLGenerator
    from agent_search.registry import Handler
    from agent_search.rerank import Reranker
    from agent_search.searcher import Searcher

__all__ = ["assistant_overrides", "load_config", "searcher_from_config"]

_S = TypeVar("_S", bound="Searcher")


def searcher_from_config(
    cls: type[_S],
    config_dir: str | Path | None = None,
    *,
    assistant_dir: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    overrides_file: str | None = None,
    builtin_handlers: bool = True,
    handlers: Sequence[Handler] = (),
    rerankers: Mapping[str, Reranker] | None = None,
    generators: Mapping[str, DSLGenerator] | None = None,
) -> _S:
    """What :meth:`Searcher.from_config <agent_search.searcher.Searcher.from_config>`
    does (see there): the layers loaded, ``overrides`` merged on top, the searcher
    ``cls`` built, the builtin handlers registered from the final configuration."""
    config = load_config(config_dir, assistant_dir=assistant_dir)
    if overrides:
        config = config.merged(overrides, file=overrides_file)
    searcher = cls(config, handlers=handlers, rerankers=rerankers, generators=generators)
    if builtin_handlers:
        from agent_search._builtins import register_builtin_handlers

        register_builtin_handlers(searcher.registry, config, config_dir=config_dir,
                                  assistant_dir=assistant_dir)  # generators: ctx.deps
    return searcher


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


def _agent_layer(config_dir: Path) -> tuple[UsesTargets, dict[str, Any]]:
    """``agent.yml`` validated whole (its own schema, and the ``server`` section's when
    it has one): what ``uses`` values may name, and the ``uses`` layer."""
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
    search = normalize_toggles(dict(search))
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


def chat_client(name: str, *, base_url: str, model: str, api_key_env: str | None,
                timeout: float) -> Any:
    """An OpenAI-compatible chat client (the agent runtime's) for one of the core's
    optional LLM steps: the core reaches it through :mod:`agent_search._assembly`."""
    from agent_search.agent.llm import OpenAIChatClient
    from agent_search.agent.settings import ConnectorSettings

    return OpenAIChatClient(name, ConnectorSettings(
        base_url=base_url, model=model, api_key_env=api_key_env, timeout=timeout,
        idle_timeout=timeout))
