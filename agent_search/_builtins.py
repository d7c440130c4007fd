"""Registration of the builtin handlers (web, kb, db) and rerankers on a searcher.

Each handler sub-package exposes ``create_handler(config, ...)``. They are imported here,
lazily, so ``import agent_search`` stays cheap and a custom searcher can skip them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from agent_search.errors import ConfigError

if TYPE_CHECKING:
    from agent_search.config import SearchConfig
    from agent_search.query.dsl import DSLGenerator
    from agent_search.searcher import Searcher


def register_builtin_handlers(
    searcher: Searcher,
    *,
    config_dir: str | Path | None = None,
    assistant_dir: str | Path | None = None,
    generators: Mapping[str, DSLGenerator] | None = None,
) -> None:
    """Register the builtin ``web``, ``kb`` and ``db`` handlers on ``searcher``.

    Nothing is contacted yet: handlers connect lazily on their first search. A bad
    section of the configuration raises :class:`~agent_search.errors.ConfigError`
    naming the key. ``generators`` are the db handler's NL → DSL generators by name.
    """
    from agent_search.db import create_handler as create_db_handler
    from agent_search.kb import create_handler as create_kb_handler
    from agent_search.web import create_handler as create_web_handler

    config = searcher.config
    try:
        searcher.registry.register(create_web_handler(config))
        searcher.registry.register(create_kb_handler(config))
        searcher.registry.register(
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
