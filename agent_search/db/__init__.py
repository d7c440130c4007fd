"""Database search: model definitions and reflection, QueryDSL on SQLAlchemy Core,
natural language → QueryDSL, permission filters; SQLite and PostgreSQL."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_search._lazy import lazy_exports

if TYPE_CHECKING:
    from agent_search.db._builder import DSLBuildError
    from agent_search.db._engine import async_url
    from agent_search.db.handler import DBHandler, create_handler
    from agent_search.db.models import ColumnDef, ModelDef, RelationDef, load_definitions
    from agent_search.db.settings import DBSettings

_HOME = {
    "ColumnDef": "models", "DBHandler": "handler", "DBSettings": "settings",
    "DSLBuildError": "_builder", "ModelDef": "models", "RelationDef": "models",
    "async_url": "_engine",
    "create_handler": "handler", "load_definitions": "models",
}
"""Where each public name lives: imported on first use, so building the handler (every
searcher does) does not load SQLAlchemy and the question parser before a db search."""


__getattr__, __dir__ = lazy_exports(__name__, _HOME)


__all__ = [
    "ColumnDef",
    "DBHandler",
    "DBSettings",
    "DSLBuildError",
    "ModelDef",
    "RelationDef",
    "async_url",
    "create_handler",
    "load_definitions",
]
