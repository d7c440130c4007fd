"""Database search: model definitions and reflection, QueryDSL on SQLAlchemy Core,
natural language → QueryDSL, permission filters; SQLite and PostgreSQL."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_search.db._builder import DSLBuildError
    from agent_search.db.handler import DBHandler, create_handler
    from agent_search.db.models import ColumnDef, ModelDef, RelationDef, load_definitions
    from agent_search.db.settings import DBSettings

_HOME = {
    "ColumnDef": "models", "DBHandler": "handler", "DBSettings": "settings",
    "DSLBuildError": "_builder", "ModelDef": "models", "RelationDef": "models",
    "create_handler": "handler", "load_definitions": "models",
}
"""Where each public name lives: imported on first use, so building the handler (every
searcher does) does not load SQLAlchemy and the question parser before a db search."""


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'agent_search.db' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"agent_search.db.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "ColumnDef",
    "DBHandler",
    "DBSettings",
    "DSLBuildError",
    "ModelDef",
    "RelationDef",
    "create_handler",
    "load_definitions",
]
