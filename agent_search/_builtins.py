"""Registration of the builtin handlers (web, kb, db) and the plug-in handlers.

Each handler sub-package exposes ``create_handler(config, ...)``; they are imported
here, lazily, so ``import agent_search`` stays cheap and a custom searcher can skip them.

A handler of your own becomes reachable from every interface (Python's
``Searcher.from_config``, ``agent-search search``, the MCP server, the HTTP service,
auto search) by one registration: an entry point in the ``agent_search.handlers`` group
of your package's metadata, naming a factory ``create_handler(config) -> Handler``::

    [project.entry-points."agent_search.handlers"]
    news = "my_package.news:create_handler"

This module depends on the registry and the configuration only, never on the searcher,
so nothing here imports back into it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from agent_search.errors import ConfigError
from agent_search.registry import entry_point_plugins

if TYPE_CHECKING:
    from agent_search.config import SearchConfig
    from agent_search.query.dsl import DSLGenerator
    from agent_search.registry import Handler, Registry

ENTRY_POINT_GROUP = "agent_search.handlers"
"""The entry-point group plug-in handler factories are registered under."""


def register_builtin_handlers(
    registry: Registry,
    config: SearchConfig,
    *,
    config_dir: str | Path | None = None,
    assistant_dir: str | Path | None = None,
    generators: Mapping[str, DSLGenerator] | None = None,
    plugins: bool = True,
) -> None:
    """Register the builtin ``web``, ``kb`` and ``db`` handlers for ``config`` on
    ``registry``, then (``plugins``) the handlers of the ``agent_search.handlers`` entry
    points.

    Nothing is contacted yet: handlers connect lazily on their first search. A bad
    section of the configuration raises :class:`~agent_search.errors.ConfigError`
    naming the key. ``generators`` (deprecated: give them to the
    :class:`~agent_search.Searcher`, which hands them to every search in ``ctx.deps``)
    are kept by the db handler for one release.
    """
    from agent_search.db import create_handler as create_db_handler
    from agent_search.kb import create_handler as create_kb_handler
    from agent_search.web import create_handler as create_web_handler

    try:
        registry.register(create_web_handler(config))
        registry.register(create_kb_handler(config))
        registry.register(
            create_db_handler(
                config,
                config_dir=Path(config_dir) if config_dir is not None else None,
                assistant_dir=Path(assistant_dir) if assistant_dir is not None else None,
                generators=generators,
            )
        )
    except ConfigError as exc:
        # handlers validate their own sections; name the file the bad key came from
        raise config.locate(exc) from exc
    if plugins:
        for handler in plugin_handlers(config):
            registry.register(handler)


def plugin_handlers(config: SearchConfig) -> list[Handler]:
    """The handlers of the ``agent_search.handlers`` entry points, built for ``config``,
    in name order. One that cannot be loaded or built is a ConfigError naming it."""
    return [handler for _, handler, _ in
            entry_point_plugins(ENTRY_POINT_GROUP, "handler", lambda make: make(config))]


def check_builtin_sections(config: SearchConfig) -> None:
    """Validate the ``web``, ``kb`` and ``db`` sections by the builtin handlers' settings
    models without building the handlers, for commands that build none (``kb``,
    ``eval``): a typo there is the same error as on any other command."""
    from agent_search.db.settings import DBSettings
    from agent_search.kb.settings import KBSettings
    from agent_search.web.settings import WebSettings

    try:
        WebSettings.from_section(config.web)
        config.kb.settings(KBSettings)
        DBSettings.from_config(config)
    except ConfigError as exc:
        raise config.locate(exc) from exc
