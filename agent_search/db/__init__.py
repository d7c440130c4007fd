"""Database search: model definitions and reflection, QueryDSL on SQLAlchemy Core,
natural language → QueryDSL, permission filters; SQLite and PostgreSQL."""

from agent_search.db._builder import DSLBuildError
from agent_search.db.handler import DBHandler, create_handler
from agent_search.db.models import ColumnDef, ModelDef, RelationDef, load_definitions
from agent_search.db.settings import DBSettings

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
